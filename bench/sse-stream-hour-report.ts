/**
 * The SSE stream-hour in Markdown: its section of BENCHMARKS.md, bench/sse-stream-hour.md (the
 * same text on its own), and the SSE row of the standing-cost table, all from one result
 * (bench/sse-stream-hour.json), so they cannot disagree.
 */
import { DEPLOYED_STREAM, MB_PER_VCPU } from './sse-stream-hour-model.ts';
import type { SseStreamHour, StreamHourRow } from './sse-stream-hour-model.ts';
import { fixed, grouped, table } from './report-format.ts';

/** Dollars to four places, or six below a tenth of a cent (an idle WebSocket hour). */
export const usd = (value: number) => `$${value.toFixed(value < 0.001 ? 6 : 4)}`;
const round = (value: number) => grouped(Math.round(value));

/** The deployed stream settings the hour was measured at, in words. */
export function streamSettingsText(hour: SseStreamHour): string {
  const s = { ...DEPLOYED_STREAM, ...hour.settings };
  return (
    `inbox poll every ${s.pollMs} ms, backing off after ${s.backoffAfterPolls} empty reads to one every ${grouped(s.idlePollMs)} ms; heartbeat every ${s.heartbeatMs / 1000} s; ` +
    `token re-check every ${s.revalidateMs / 1000} s; slot lease ${s.slotLeaseMs / 1000} s renewed every ${s.slotLeaseMs / 3000} s (pool of ${s.maxLiveStreams} streams, a tenant's share ${s.maxStreamsPerTenant}); idle end ${s.idleEndMs / 60_000} min; flush padding ${grouped(s.flushPaddingBytes)} bytes`
  );
}

/** The SSE row of the standing-cost table: the stream-hour's "after" hour. */
export function sseStandingCells(hour: SseStreamHour): [string, string] {
  const after = hour.hour.after;
  const calls = after.byCommand.map((entry) => `${entry.call} ${round(entry.callsPerHour)}`).join(', ');
  return [
    `the SSE stream-hour stage (below): ${round(after.idleCallsPerHour)} DynamoDB calls an idle hour (${calls}), ${round(after.heartbeatsPerHour)} heartbeats, and the setup and cleanup of ${hour.settings.streamsPerHour} streams (one per idle end); ${streamSettingsText(hour)}`,
    `${round(after.readUnits)} read units and ${round(after.writeUnits)} write units: ${usd(after.usd.dynamoReads + after.usd.dynamoWrites)}; plus ${usd(after.usd.lambdaDuration)} of Lambda duration at ${after.memoryMb} MB (measured: peak RSS ${fixed(hour.memory.peakRssMb, 1)} MB) and ${usd(after.usd.lambdaRequests)} of requests: **${usd(after.usd.total)}**`,
  ];
}

/**
 * The CPU per delivery: the ratio to the yardstick first, this machine's milliseconds beside it;
 * results from before the alternating pairs say how theirs was taken.
 */
function cpuLine(hour: SseStreamHour): string {
  const { memory } = hour;
  const atSize = `at ${memory.setMb} MB (${fixed(memory.setMb / MB_PER_VCPU, 2)} vCPU) this machine's ${fixed(memory.cpuMsPerDelivery, 2)} ms is about ${round(memory.deliveriesPerSecondAtSize)} deliveries/s per stream, if a Lambda vCPU does what this machine's core does.`;
  if (memory.cpuRatioToReference === undefined) return `Burst CPU per delivery ${fixed(memory.cpuMsPerDelivery, 2)} ms on this machine (no yardstick in these results); ${atSize}`;
  const pairs = memory.cpuPairRatios;
  const processes = memory.cpuProcessRatios;
  if (pairs === undefined) return `Burst CPU per delivery ${fixed(memory.cpuRatioToReference, 1)}× the reference pipeline's CPU per event (bench/cpu-reference.ts, timed once after the stream in the same process; this machine: ${fixed(memory.cpuMsPerDelivery, 2)} ms against ${fixed(memory.referenceCpuMsPerEvent, 4)} ms); ${atSize}`;
  const calls = memory.cpuSliceCalls === undefined || Number.isNaN(memory.cpuSliceCalls) ? '' : ` (the median slice made ${fixed(memory.cpuSliceCalls, 0)} DynamoDB calls)`;
  return (
    `**CPU per delivery: ${fixed(memory.cpuRatioToReference, 1)}× the reference pipeline's CPU per event** (bench/cpu-reference.ts over the burst's events; same process, same run): ${processes === undefined ? `the median of ${pairs.length} slices of deliveries ÷ the median of the ${pairs.length + 1} slices of the reference they alternate with` : `in each of ${processes.length} stream processes the median of its ${pairs.length / processes.length} slices of deliveries ÷ the median of the ${pairs.length / processes.length + 1} slices of the reference they alternate with, and the figure the mean of the ${processes.length} (each process's own figure is on record in \`bench/sse-stream-hour.json\`, \`cpuProcessRatios\`, and only the mean is the figure: one process keeps one compiled form of each side for its life, and the reference's median slice moved by a third from one process to the next, so one process alone disagreed with the next run's by 30%, and one of five by 20% beside a mean that agreed; the first process is the "after" stream, the others serve the same burst after 2 s idle)`} (each slice's own ratio to the two reference slices either side of it is on record in \`bench/sse-stream-hour.json\`, \`cpuPairRatios\`; single slices move with any few milliseconds the cores give to other work, so only the median is the figure). After the burst, the "after" stream is sent ${pairs.length} slices of ${memory.cpuSliceDeliveries ?? '?'} events, each once fan-out has put them all in its inbox, and each slice is timed in the process's CPU from the read that brings its events to the read that deletes them${calls}, between slices of the reference (each timed in its own thread's CPU: it is synchronous, and the process's CPU would count the collector's threads still sweeping the slice before); every slice of either kind starts on a collected heap (\`bench/full-gc.ts\`). ` +
    `This machine: ${fixed(memory.cpuMsPerDelivery, 3)} ms per delivery (median slice${processes === undefined ? '' : ', the mean over the processes'}) against the reference's ${fixed(memory.referenceCpuMsPerEvent, 4)} ms per event; ${atSize}`
  );
}

function hourRow(label: string, row: StreamHourRow): string[] {
  return [label, `${row.memoryMb} MB`, round(row.readUnits), round(row.writeUnits), usd(row.usd.lambdaDuration), usd(row.usd.lambdaRequests), usd(row.usd.dynamoReads), usd(row.usd.dynamoWrites), `**${usd(row.usd.total)}**`];
}

/** The stream-hour's tables and the lines that say what was measured. */
export function sseStreamHourLines(hour: SseStreamHour): string[] {
  const { memory, settings } = hour;
  const rows = hour.hour;
  const lines: string[] = [];
  lines.push(
    `Measured ${hour.measuredAt}${hour.commit === undefined ? '' : ` on \`${hour.commit.slice(0, 12)}\`${hour.dirty === true ? ' (dirty)' : ''}`}: one stream per variant served by the bundled stream handler alone in a process (as one Lambda execution environment serves it), at the deployed stream settings (${streamSettingsText(hour)}); idle ${settings.idleSeconds} s, then ${settings.burstEvents} deliveries of 1 KB, then its client leaves. Every DynamoDB call is priced at what DynamoDB bills for it (0.5 read unit at least eventually consistent, 1 strongly, 1 write unit per item). "Before" is the previous path run in the same stage (every read strongly consistent, no backoff) at the previous 512 MB; "after" the relay as it runs now at the size the stack sets.`,
    '',
  );
  const cpu = cpuLine(hour);
  lines.push(
    `**Memory, measured:** peak RSS over a stream's life${memory.cpuPairRatios === undefined ? '' : ' up to its burst\'s last delivery (the CPU slices after it are not sampled: the yardstick allocates)'} before ${fixed(memory.before.peakMb, 1)} MB, after ${fixed(memory.after.peakMb, 1)} MB (${fixed(memory.after.beforeStreamMb, 1)} MB loaded, before the stream); sized at ${memory.sizedMb} MB from the after stream's peak, the one the function runs (the peak and half again, in 64 MB steps, at least 128 MB; the stack sets ${memory.setMb} MB). ${cpu}`,
    '',
    table(
      ['one stream held open an hour', 'memory', 'read units', 'write units', 'Lambda duration', 'Lambda requests', 'DynamoDB reads', 'DynamoDB writes', 'total'],
      [hourRow('SSE, before', rows.before), hourRow('SSE, after', rows.after), ['WebSocket, idle', '', '0', '0', '', '', '', '', `**${usd(hour.websocketIdleHourUsd)}** (connection minutes)`]],
    ),
    '',
  );
  const calls = [...new Set([...rows.before.byCommand, ...rows.after.byCommand].map((entry) => entry.call))].sort();
  const find = (row: StreamHourRow, call: string) => row.byCommand.find((entry) => entry.call === call);
  lines.push(
    table(
      ['idle-phase call, per hour', 'before: calls', 'before: units', 'after: calls', 'after: units'],
      calls.map((call) => [call, round(find(rows.before, call)?.callsPerHour ?? 0), round(find(rows.before, call)?.unitsPerHour ?? 0), round(find(rows.after, call)?.callsPerHour ?? 0), round(find(rows.after, call)?.unitsPerHour ?? 0)]),
    ),
    '',
    `Setup and cleanup per stream (${settings.streamsPerHour} an hour, each a Lambda request): before ${fixed(rows.before.setupAndCleanup.readUnits, 1)} RRU, ${fixed(rows.before.setupAndCleanup.writeUnits, 1)} WRU; after ${fixed(rows.after.setupAndCleanup.readUnits, 1)} RRU, ${fixed(rows.after.setupAndCleanup.writeUnits, 1)} WRU. Heartbeats cost no call: ${round(rows.after.heartbeatsPerHour)} an hour (${hour.heartbeats.after} in the idle phase)${rows.after.idleBytesPerHour === undefined ? '' : `, with their flush padding ${fixed(rows.after.idleBytesPerHour / 1e6, 1)} MB of response an idle hour, not priced here (data transfer is outside the price table, as everywhere in this report)`}.`,
  );
  return lines;
}

/** bench/sse-stream-hour.md. */
export function sseStreamHourMarkdown(hour: SseStreamHour): string {
  return ['# SSE stream-hour', '', 'Written by `npm run bench` and `npm run bench:sse-hour` (bench/sse-stream-hour.ts); the figures are in bench/sse-stream-hour.json.', '', ...sseStreamHourLines(hour), ''].join('\n');
}
