/**
 * The latency lines of BENCHMARKS.md. On the local stack a POST reaches a consumer only after
 * the stream poller has read the events table's stream (and, for SSE, after the stream has read
 * its inbox), so these latencies are mostly those fixed polls: each is stated in poll periods of
 * the same run (the yardstick, from the run's settings), this machine's milliseconds beside.
 */
import type { DeliveryLatency, Distribution } from './latency.ts';
import { fixed, ms, table } from './report-format.ts';

export type LatencyPath = 'websocket' | 'sse' | 'command';

export interface PollYardstick {
  /** The period the path's latencies are divided by (ms). */
  periodMs: number;
  /** What that period is, for the text. */
  name: string;
}

const setting = (settings: Record<string, string | number>, key: string): number | undefined => {
  const value = Number(settings[key]);
  return Number.isFinite(value) && value > 0 ? value : undefined;
};

/** The SSE streams of the delivery stage, from the samples: each stream is sent as many events as the WebSocket consumer. */
function sseStreamsText(delivery: { websocket: { count: number }; sse: { count: number } }): string {
  const streams = delivery.websocket.count === 0 ? 1 : Math.round(delivery.sse.count / delivery.websocket.count);
  if (streams <= 1) return 'one SSE stream';
  return `${streams} SSE streams, opened a few tens of milliseconds apart at random so that they sample the phases between the stream poll and each stream's own inbox poll (a stream's phase is set when it opens and drifts only slowly), their deliveries pooled`;
}

/**
 * Each path's polling floor on the local stack: a WebSocket delivery and a command round trip
 * wait on the stream poller (`AEP_LOCAL_POLL_MS`), an SSE delivery on it and then on the
 * stream's inbox poll (`AEP_SSE_POLL_MS`). Undefined when the run's settings lack a poll.
 */
export function pollYardstick(settings: Record<string, string | number>, path: LatencyPath): PollYardstick | undefined {
  const stream = setting(settings, 'AEP_LOCAL_POLL_MS');
  if (stream === undefined) return undefined;
  if (path !== 'sse') return { periodMs: stream, name: `the stream poll (\`AEP_LOCAL_POLL_MS\` = ${stream} ms)` };
  const inbox = setting(settings, 'AEP_SSE_POLL_MS');
  if (inbox === undefined) return undefined;
  return { periodMs: stream + inbox, name: `the stream poll + the SSE inbox poll (\`AEP_LOCAL_POLL_MS\` + \`AEP_SSE_POLL_MS\` = ${stream} + ${inbox} ms)` };
}

type Percentile = 'p50' | 'p95' | 'p99' | 'max' | 'mean';

/** A percentile of `dist` in periods of the path's polling floor; undefined without the yardstick. */
export function inPolls(dist: Distribution, yardstick: PollYardstick | undefined, key: Percentile): number | undefined {
  return yardstick === undefined ? undefined : dist[key] / yardstick.periodMs;
}

const polls = (value: number | undefined) => (value === undefined ? '–' : `${fixed(value)}×`);

function paths(latency: { delivery: DeliveryLatency; command: Distribution; repeats?: number }): Array<{ path: LatencyPath; label: string; dist: Distribution }> {
  return [
    { path: 'websocket', label: 'POST → WebSocket', dist: latency.delivery.websocket },
    { path: 'sse', label: 'POST → SSE', dist: latency.delivery.sse },
    { path: 'command', label: 'command round trip', dist: latency.command },
  ];
}

/** The headline line: p50/p95/p99 in poll periods, this machine's ms beside. */
export function latencyHeadline(latency: { delivery: DeliveryLatency; command: Distribution; repeats?: number }, settings: Record<string, string | number>): string {
  const parts = paths(latency).map(({ path, label, dist }) => {
    const yardstick = pollYardstick(settings, path);
    const ratios = yardstick === undefined ? 'no poll in these settings' : `${(['p50', 'p95', 'p99'] as const).map((key) => polls(inPolls(dist, yardstick, key))).join(' / ')} ${path === 'sse' ? 'stream + inbox polls' : 'stream polls'}`;
    return `${label} p50/p95/p99 **${ratios}** (this machine: ${ms(dist.p50)} / ${ms(dist.p95)} / ${ms(dist.p99)})`;
  });
  return `- **Latency on the local stack, in poll periods of the same run** (stream poll every ${settings.AEP_LOCAL_POLL_MS} ms, SSE inbox poll every ${settings.AEP_SSE_POLL_MS} ms; locally the latency is mostly these polls${(latency.repeats ?? 1) > 1 ? `; each figure the median of ${latency.repeats} repeats` : ''}): ${parts.join('; ')}.`;
}

/** The latency section. */
export function latencyMarkdown(latency: { delivery: DeliveryLatency; command: Distribution; repeats?: number }, settings: Record<string, string | number>): string[] {
  const { delivery } = latency;
  const repeats = latency.repeats ?? 1;
  const rows = paths(latency).map(({ path, label, dist }) => {
    const yardstick = pollYardstick(settings, path);
    const ratio = (key: Percentile) => polls(inPolls(dist, yardstick, key));
    return [label, String(dist.count), yardstick === undefined ? '–' : `${fixed(yardstick.periodMs, 0)} ms`, `**${ratio('p50')}**`, `**${ratio('p95')}**`, `**${ratio('p99')}**`, ratio('mean'), `${ms(dist.p50)} / ${ms(dist.p95)} / ${ms(dist.p99)} / ${ms(dist.max)} / ${ms(dist.mean)}`];
  });
  const websocket = pollYardstick(settings, 'websocket');
  const sse = pollYardstick(settings, 'sse');
  return [
    '## Latency (local stack)',
    '',
    `POST → delivery: ${repeats > 1 ? `${delivery.websocket.count / repeats}` : delivery.websocket.count} events POSTed at random, one every ${delivery.paceMs} ms on average (Poisson arrivals, so that they sample every phase of the stream poll rather than lock to a few; after 20 warm-up events) to a session with one WebSocket subscriber; then as many, the same way, to another session with ${sseStreamsText(delivery)} (each binding alone on the stack: measured together, the SSE streams' inbox polls in the same local process weighed on the WebSocket tail). Each is timed from the start of its POST to the consumer receiving it. Command round trip: a \`both\` connection sends \`control.pause\`/\`control.resume\` to the simulated agent (\`local/agent/simulated-agent.ts\`), one at a time, and waits to see the agent's \`control.accepted\` through its own session subscription (10 warm-up commands not counted).${repeats > 1 ? ` The stage runs ${repeats} times in a row (WebSocket delivery, SSE delivery, then commands, in turn); every figure below is the median of the ${repeats} repeats' own figures (the samples column counts all of them, and the plot pools them), because one repeat's tail moves with a stall of the shared machine and the median does not follow one.` : ''}`,
    '',
    `On this stack, latency is mostly polling: nothing reaches a consumer before the stream poller has read the events table's stream, and an SSE stream then reads its inbox on a poll of its own. So each latency is stated in periods of the polling it waits on, from this run's settings (the yardstick): POST → WebSocket and the command round trip ÷ ${websocket?.name ?? 'the stream poll (not in these settings)'}; POST → SSE ÷ ${sse?.name ?? 'the stream and inbox polls (not in these settings)'}. The milliseconds are this machine's, beside. The maximum is one sample, so it is given in milliseconds only.`,
    '',
    table(['path', 'samples', 'yardstick: poll period', '**p50 ÷ poll**', '**p95 ÷ poll**', '**p99 ÷ poll**', 'mean ÷ poll', 'this machine: p50 / p95 / p99 / max / mean'], rows),
    '',
    '![Latency distributions (this machine\'s milliseconds)](bench/latency.svg)',
    '',
    'On AWS, Lambda polls a stream shard about 4 times a second and every hop crosses a network, so expect more. These figures compare builds; they do not predict production.',
    '',
  ];
}
