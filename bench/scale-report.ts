/**
 * The fan-out-at-scale and paused-consumer sections of BENCHMARKS.md, and the plot of
 * deliveries per second against subscribers.
 */
import type { FanoutScaleRun } from './fanout-scale.ts';
import type { PausedConsumerResult } from './paused-consumer.ts';
import { SATURATION_PACES, carriedRuns, closingHeld, medianRatios, stackSaturated } from './paused-consumer.ts';
import type { PausedRatioKey } from './paused-consumer.ts';
import { cpuStandInRatio, longestToStandIn, standInLatencyRatio, standInRatio } from './fanout-scale.ts';
import { lineChart } from './svg.ts';
import { AWS_POST_MS } from './duration-model.ts';

const COLORS = ['#1f77b4', '#d62728', '#2ca02c', '#9467bd'];
const grouped = (value: number) => Math.round(value).toLocaleString('en-US');
const ms = (value: number) => `${grouped(value)} ms`;

/**
 * The plot: relay ÷ stand-in against subscribers, the figure that holds across machines; this
 * machine's deliveries per second only for results from before the stand-in loop.
 */
export function renderScaleSvg(runs: readonly FanoutScaleRun[]): string {
  const sizes = [...new Set(runs.map((run) => run.subscribers))].sort((a, b) => a - b);
  const delays = [...new Set(runs.map((run) => run.postDelayMs))].sort((a, b) => a - b);
  const asRatio = runs.length > 0 && runs.every((run) => standInRatio(run) !== undefined);
  return lineChart(
    delays.map((delay, index) => ({
      name: `PostToConnection ${delay} ms`,
      color: COLORS[index % COLORS.length] as string,
      markers: true,
      points: runs.filter((run) => run.postDelayMs === delay).map((run) => ({ x: sizes.indexOf(run.subscribers), y: asRatio ? (standInRatio(run) as number) : run.deliveriesPerSecond })),
    })),
    asRatio
      ? {
          title: 'Fan-out deliveries per second ÷ the stand-in post loop\'s, same run, against matching subscribers (one session, local stack)',
          xLabel: 'WebSocket subscribers matching every event',
          yLabel: 'relay ÷ stand-in',
          xAxis: { kind: 'category', categories: sizes.map(String) },
        }
      : {
          title: 'Fan-out deliveries per second against matching subscribers (one session, local stack; this machine, no yardstick in these results)',
          xLabel: 'WebSocket subscribers matching every event',
          yLabel: 'deliveries / s',
          xAxis: { kind: 'category', categories: sizes.map(String) },
        },
  );
}

/** Relay ÷ stand-in at or above which the local stack's posting path is the limit rather than the relay. */
const STACK_LIMIT_RATIO = 0.8;

/** How many relay/stand-in pairs the rows took: "3 relay/stand-in pairs", or, where they differ by size, "5 relay/stand-in pairs at 100 subscribers and 3 at 1,000 and 5,000". */
export function pairCounts(runs: readonly FanoutScaleRun[]): string {
  const bySize = new Map<number, number>(runs.map((run) => [run.subscribers, run.repeats ?? 1]));
  const counts = [...new Set(bySize.values())];
  const pairs = (count: number) => `${count} relay/stand-in pair${count === 1 ? '' : 's'}`;
  if (counts.length <= 1) return pairs(counts[0] ?? 1);
  const sizesWith = (count: number) => [...bySize].filter(([, repeats]) => repeats === count).map(([size]) => grouped(size)).join(' and ');
  return counts.map((count, index) => (index === 0 ? `${pairs(count)} at ${sizesWith(count)} subscribers` : `${count} at ${sizesWith(count)}`)).join(' and ');
}

/**
 * The modelled rate of one fan-out invocation in AWS: its posts in flight at the modelled
 * PostToConnection round trip (256 at 20 ms: 12,800/s), scaled by relay ÷ stand-in of the same
 * run (what the relay keeps of its poster's rate). No machine-speed number in it; undefined for
 * results without the stand-in loop.
 */
export function modelledInvocationRate(run: FanoutScaleRun, postMs = AWS_POST_MS): number | undefined {
  const ratio = standInRatio(run);
  return ratio === undefined ? undefined : Math.min(1, ratio) * (run.concurrency / (postMs / 1000));
}

/** Largest session (matching subscribers) one invocation carries in `budgetMs` at the modelled rate. */
export function carries(run: FanoutScaleRun, recordsPerBatch: number, budgetMs: number): number | undefined {
  const rate = modelledInvocationRate(run);
  return rate === undefined ? undefined : Math.floor((rate * (budgetMs / 1000)) / recordsPerBatch);
}

/** The "one invocation suffices" paragraph: the modelled rate × relay ÷ stand-in, or a pointer to the lanes model. */
export function capacityParagraph(runs: readonly FanoutScaleRun[]): string {
  const timeoutMs = runs[0]?.timeoutMs ?? 0;
  const largest = Math.max(...runs.map((run) => run.subscribers));
  const basis = runs.find((run) => run.subscribers === largest && run.postDelayMs === AWS_POST_MS);
  const rate = basis === undefined ? undefined : modelledInvocationRate(basis);
  if (basis === undefined || rate === undefined) {
    return `**Up to which size one invocation suffices.** These results have no stand-in loop to scale the modelled posting rate by, and this machine's deliveries per second are no basis for it: see the AWS model under Fan-out lanes at scale (posts in flight, post latency, CPU per delivery, lanes).`;
  }
  const ratio = standInRatio(basis) as number;
  return `**Up to which size one invocation suffices.** One invocation posting ${basis.concurrency} in flight at the modelled ${AWS_POST_MS} ms round trip reaches ${grouped(basis.concurrency / (AWS_POST_MS / 1000))} deliveries/s; the relay kept ${ratio.toFixed(2)}× of its stand-in poster's rate at ${grouped(largest)} subscribers and ${AWS_POST_MS} ms (same run${ratio > 1 ? ', taken as 1×' : ''}), so ${grouped(rate)}/s. With the event source mapping's batch of 100 records and half the ${ms(timeoutMs)} timeout as the budget, one invocation carries a session of at most ${grouped(carries(basis, 100, timeoutMs / 2) as number)} matching subscribers (${grouped(carries(basis, 10, timeoutMs / 2) as number)} with batches of 10). Past that a full batch needs more than half the timeout, and the lanes carry it (Fan-out lanes at scale, with the AWS model; the CPU a Lambda core gives per delivery is there too).`;
}

export function renderScaleMarkdown(runs: readonly FanoutScaleRun[], paused: PausedConsumerResult | undefined): string[] {
  const lines: string[] = [];
  if (runs.length > 0) {
    const concurrency = runs[0]?.concurrency ?? 0;
    const timeoutMs = runs[0]?.timeoutMs ?? 0;
    lines.push(
      '## Fan-out at scale',
      '',
      `One session, N WebSocket subscribers that all match it (in a child process of their own), PostToConnection slowed by the local \`@connections\` endpoint to a simulated round trip (\`AEP_LOCAL_POST_DELAY_MS\`), the events POSTed in one NDJSON request. Fan-out keeps ${concurrency} posts in flight (\`AEP_FANOUT_CONCURRENCY\`), each connection's own deliveries in order. Latency runs from the POST's start to a subscriber's receipt; deliveries per second = deliveries ÷ (last receipt − POST start). The local poller enforces the deployed fan-out timeout (${ms(timeoutMs)}).`,
      '',
      `Deliveries per second move with the host, so each run has yardsticks from the same run. **Relay ÷ stand-in** divides the relay's rate, and its latency, by those of a stand-in post loop: the same posts through the same poster (\`managementApiPoster\`, ${concurrency} in flight) to the same connections at the same simulated round trip, in fan-out's order (each connection's posts one after another, the connections round-robin, as \`src/relay/fanout/delivery-pool.ts\` posts them), with none of the relay in between (no ingest, no stream, no DynamoDB, no matching; its latency runs from its start to each receipt). Keeping the order makes the yardstick what any relay could reach: where a connection's own posts one after another are the bound (100 subscribers, 200 events), a loop posting in any order went faster than that bound, at a rate that followed the host. Near 1 (at or above ${STACK_LIMIT_RATIO}) the posting itself (the local stack's posting path, or each connection's posts in turn), not the relay, is the limit, and the row says so. **CPU per delivery ÷ stand-in** divides the CPU time of the process running fan-out (with the gateway and the \`@connections\` endpoint, which share it) per delivery by the same process's CPU per delivery while the stand-in loop posted as many, in the same pair: each window from the POST (or the loop's start) to the last receipt, starting on a collected heap (\`bench/full-gc.ts\`). The stand-in's CPU is the posting path's own (the poster, the gateway, the endpoint), so the ratio is what the relay spends per delivery over what any relay must, and 1 plus the relay's share on top. (A fixed synchronous reference pipeline timed in slices beside each run moved by up to 1.6× from pair to pair with what the rest of the machine was doing while the relay's deliveries per CPU-second held within about 15%; the stand-in does the same kind of work as fan-out, at the same moment.) **Longest invocation ÷ stand-in's time** divides the longest fan-out invocation by the time the stand-in loop takes to post as many deliveries as that invocation made (the posts answered while it ran, at the stand-in's rate in the same pair; not its records × the subscribers, since one record, a session's wake-up, can release a whole burst): what the slowest batch spent beyond posting, whatever share of the events the stream poller put in it (the share of the timeout it took is this machine's). The columns marked "this machine" are its absolute values, beside the ratios.${runs.some((run) => (run.repeats ?? 1) > 1) ? ` Each row is measured as ${pairCounts(runs)}, one after another. Each ratio is taken within each pair (relay and stand-in seconds apart, so the host's drift between pairs cancels: this machine's CPU per delivery moved by up to 1.6× from one pair to the next, relay and stand-in alike) and the row states the geometric mean of the pairs' ratios for rates and CPU, and for latency the geometric mean of the pairs' ratios without the highest and the lowest (a burst's p50 is about half its deliveries ÷ its rate, times a shape that a stall landing early in one side's burst moves by up to 1.9×, where the whole burst's rate moves little, and the median of five rested on one pair when the others spread by a third); each size's first pair, after the subscriber process opened its new connections, is a discarded warm-up; this machine's figures (rates, latencies, CPU, invocations) are the medians over the pairs. A single pair moves with how the stream poller happens to split the events into batches, and with any stall of the shared machine; each pair's figures are in \`bench/results.json\`.` : ''}`,
      '',
      '| post round trip | subscribers | events | deliveries (expected / received) | **relay ÷ stand-in: deliveries / s** | **relay ÷ stand-in: latency p50 / p99** | **CPU per delivery ÷ stand-in** | this machine: deliveries / s (stand-in) | this machine: latency p50 / p99 (stand-in) | this machine: CPU per delivery (stand-in\'s); deliveries per CPU-second | fan-out invocations | **longest invocation ÷ stand-in\'s time** | this machine: longest invocation, share of timeout |',
      '| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |',
      ...runs.map((run) => {
        const ratio = standInRatio(run);
        const ratioCell = ratio === undefined ? '–' : `**${ratio.toFixed(2)}×**${ratio >= STACK_LIMIT_RATIO ? ' (posting-limited)' : ''}`;
        const latencyRatio = standInLatencyRatio(run);
        const cpuRatio = cpuStandInRatio(run);
        const longest = longestToStandIn(run);
        const cpuMs = run.processCpuMs === undefined || run.deliveries === 0 ? undefined : run.processCpuMs / run.deliveries;
        const cpuCell = `${cpuMs === undefined ? '–' : `${cpuMs.toFixed(3)} ms`}${run.standInCpuMsPerDelivery === undefined ? '' : ` (${run.standInCpuMsPerDelivery.toFixed(3)} ms)`}; ${run.deliveriesPerCpuSecond === undefined ? '–' : grouped(run.deliveriesPerCpuSecond)}`;
        return `| ${run.postDelayMs} ms | ${grouped(run.subscribers)} | ${run.events} | ${grouped(run.expectedDeliveries)} / ${grouped(run.deliveries)} | ${ratioCell} | ${latencyRatio === undefined ? '–' : `**${latencyRatio.p50.toFixed(2)}× / ${latencyRatio.p99.toFixed(2)}×**`} | ${cpuRatio === undefined ? '–' : `**${cpuRatio.toFixed(2)}×**`} | ${grouped(run.deliveriesPerSecond)} (${run.standInPerSecond === undefined ? '–' : grouped(run.standInPerSecond)}) | ${ms(run.latency.p50)} / ${ms(run.latency.p99)}${run.standInLatency === undefined ? '' : ` (${ms(run.standInLatency.p50)} / ${ms(run.standInLatency.p99)})`} | ${cpuCell} | ${run.fanoutInvocations} | ${longest === undefined ? '–' : `**${longest.toFixed(2)}×**`} | ${(run.longestInvocationMs / 1000).toFixed(1)} s, ${((100 * run.longestInvocationMs) / run.timeoutMs).toFixed(0)}% |`;
      }),
      '',
      runs.every((run) => standInRatio(run) !== undefined) ? '![Fan-out deliveries per second ÷ the stand-in loop\'s against subscribers](bench/fanout-scale.svg)' : '![Fan-out deliveries per second against subscribers](bench/fanout-scale.svg)',
      '',
      capacityParagraph(runs),
      '',
    );
  }
  if (paused !== undefined) {
    const ratios = medianRatios(paused);
    const runCount = paused.runs?.length ?? 1;
    const carried = carriedRuns(paused).length;
    const ratioCell = (key: PausedRatioKey) => (ratios === undefined ? '**stack saturated**' : `**${ratios[key].toFixed(2)}×**`);
    lines.push(
      '## A paused consumer beside a healthy one',
      '',
      `${grouped(paused.events)} \`notice\` events of about ${grouped(paused.eventBytes)} bytes on one session, POSTed ${paused.batch} at a time every ${paused.paceMs} ms (a pace off the stream poll's period, so that the batches sweep its phases instead of locking to one), to a healthy consumer, once alone and once beside a consumer that stopped reading (its socket paused). Latency from the POST's start to the healthy consumer's receipt.`,
      '',
      `| healthy consumer | p50 | p95 | p99 | max |`,
      '| :--- | ---: | ---: | ---: | ---: |',
      `| this machine, alone${runCount > 1 ? ` (median of ${carried} runs)` : ''} | ${ms(paused.healthyAlone.p50)} | ${ms(paused.healthyAlone.p95)} | ${ms(paused.healthyAlone.p99)} | ${ms(paused.healthyAlone.max)} |`,
      `| this machine, beside the paused consumer${runCount > 1 ? ` (median of ${carried} runs)` : ''} | ${ms(paused.healthyBesidePaused.p50)} | ${ms(paused.healthyBesidePaused.p95)} | ${ms(paused.healthyBesidePaused.p99)} | ${ms(paused.healthyBesidePaused.max)} |`,
      `| **beside ÷ alone**${runCount > 1 ? ', the median of each run\'s own ratio' : ' (same run)'} | ${ratioCell('p50')} | ${ratioCell('p95')} | ${ratioCell('p99')} | – |`,
      '',
      `The ratios are the figures, the healthy consumer alone the yardstick (the milliseconds are this machine's). Each run is an alone/beside pair on the same stack, the halves seconds apart; the stage runs ${runCount} time${runCount === 1 ? '' : 's'} in a row and states, for each percentile, the median of the runs' own ratios: one run moves either way when the whole shared machine stalls during one of its halves, and the median does not follow one stall. The maximum is a single sample and has no ratio. When the healthy consumer alone lags its emitter by more than ${SATURATION_PACES} rounds at the median (p50 over ${ms(SATURATION_PACES * paused.paceMs)}), the local stack itself is saturated (one Node process and DynamoDB Local on shared cores), both halves measure its backlog, and that run has no ratio; with fewer than half the runs carried the stage reports **stack saturated** instead of a ratio${ratios === undefined ? ' (as here: no ratio stands for this machine)' : ''}.`,
      '',
      ...(paused.runs === undefined || paused.runs.length < 2
        ? []
        : [
            `Every run, this machine's milliseconds (healthy consumer alone → beside the paused one; ${carried} of ${runCount} carried by the stack):`,
            '',
            '| run | p50 | p95 | p99 | closing frame, naming the last event, then the close |',
            '| ---: | ---: | ---: | ---: | :--- |',
            ...paused.runs.map(
              (run, index) =>
                `| ${index + 1}${stackSaturated(run, paused.paceMs) ? ' (stack saturated)' : ''} | ${ms(run.healthyAlone.p50)} → ${ms(run.healthyBesidePaused.p50)} | ${ms(run.healthyAlone.p95)} → ${ms(run.healthyBesidePaused.p95)} | ${ms(run.healthyAlone.p99)} → ${ms(run.healthyBesidePaused.p99)} | ${closingHeld(run) ? `yes (code ${run.paused.closeCode ?? '?'})` : '**no**'} |`,
            ),
            '',
          ]),
      'A throttled post is retried off the lane, and its backoff ends as soon as nothing else in the batch is left to do (`src/relay/fanout/delivery-pool.ts`): before that, the ~150 ms of retries of the first refused post to the paused consumer held the whole batch, and with it the healthy consumer\'s next batch, a stall of about 130 ms beyond the healthy consumer\'s own posts, once per paused consumer (measured: 161 ms for the deciding batch, whose healthy posts were done after 30 ms; since then 79 ms against 74). What remains until the paused consumer is found out (when its buffers are full, about 4.5 MB here) is the cost of posting to two consumers instead of one, on this stack\'s one Node process. `npm run bench -- --only paused` re-measures this section alone (after three discarded warm-up runs on its fresh stack).',
      '',
      `${runCount < 2 ? 'The' : paused.runs?.some((run) => !closingHeld(run)) ? 'In the first run where the check failed, the' : 'In the last run, the'} paused consumer received ${grouped(paused.paused.eventsReceived)} events; once it read again, a \`closing\` frame ${paused.paused.closingReceived ? 'arrived' : 'did **not** arrive'}${paused.paused.closingReceived ? `, naming ${paused.paused.closingMatchesLastEvent ? 'exactly the last event it had received' : '**not** the last event it had received'}` : ''}, and the connection ${paused.paused.closedAfterClosing ? `was closed after it (code ${paused.paused.closeCode ?? '?'}), with no event in between` : '**was not** closed cleanly after it'}.`,
      '',
    );
  }
  return lines;
}
