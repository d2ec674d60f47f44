/**
 * The stream function's memory size, set from a measurement rather than assumed:
 * `npm run bench -- --only sse-hour` serves a stream alone in a process (the bundled handler on plain
 * node, as in a Lambda execution environment) through an idle period and a burst of deliveries,
 * and records its peak RSS (bench/results.json, sseHour). The size is that peak with headroom.
 * Why it matters: an SSE stream holds an execution for its whole life, so Lambda bills its
 * GB-seconds for every second a client is connected; at 512 MB that was most of a stream-hour.
 * What a smaller size gives up: Lambda allots CPU in proportion to memory (one vCPU at 1,769 MB),
 * so a replay or a burst takes longer; the bench reports the deliveries per second the size's CPU
 * share sustains.
 */
/**
 * Measured 2026-12-06 (bench/results.json, sseHour, at the deployed stream settings): peak RSS
 * 84.7 MB (70.7 MB loaded before the stream; an idle period, then 300 deliveries of 1 KB), so
 * 128 MB, Lambda's least; a peak above 85.3 MB would size it at 192 MB (the bench says when).
 * Its CPU share (0.07 vCPU) sustains about 270 deliveries/s per stream by the bench machine's CPU
 * per delivery; a stream fed faster falls behind and ends by the backpressure rule, its consumer
 * resuming exactly.
 */
export const STREAM_MEMORY_MB = 128;
