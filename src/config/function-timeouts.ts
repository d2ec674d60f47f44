/**
 * Function timeouts that more than the deployment must know: the CDK stack deploys them and
 * the local stack enforces them, so a handler that would time out in Lambda does locally too.
 */

/**
 * The fan-out function's timeout. One invocation posts a batch's deliveries (records × matching
 * connections ÷ `fanout.concurrency` round trips); the bench reports the longest invocation.
 */
export const FANOUT_TIMEOUT_SECONDS = 60;

/**
 * The delivery lane worker's timeout (`functions/fanoutlane`). A lane whose worker times out is
 * run again by a fresh worker, then by the fan-out invocation itself (`LANE_WORKER_ATTEMPTS`,
 * 2, in `src/relay/fanout/delivery-lanes.ts`): 2 × 15 s = 30 s of fan-out's 60 s, which leaves
 * the other half for that last run (twice what each worker had) and the batch's own writes.
 * A full lane (`fanout.laneDeliveries`, 2,000 posts) takes well under a second, so 15 s
 * times out a lane that is stuck, not one that is slow.
 */
export const FANOUT_LANE_TIMEOUT_SECONDS = 15;

/**
 * The bridges function's timeout. A stream batch gives each sink request one attempt within
 * `AEP_BRIDGE_LIVE_BUDGET_MS` (all tenants and sinks at once), then parks what was not accepted
 * as retry letters; the rest of the time is headroom for those DynamoDB and SQS writes.
 */
export const BRIDGES_TIMEOUT_SECONDS = 30;
/** The live budget may take at most this share of the bridges timeout (the reader refuses more). */
export const BRIDGES_LIVE_BUDGET_SHARE = 0.5;

/**
 * The sink-retry function's timeout: each wake-up is one attempt per letter with the full
 * request timeout (`AEP_BRIDGE_RETRY_TIMEOUT_MS`, 10 s, at most half this), letters of a batch at once. The
 * retry queue's visibility timeout is six times this (the AWS guidance for SQS event sources),
 * and a claimed letter's lease as long as this, so a crashed attempt is taken up again.
 */
export const SINK_RETRY_TIMEOUT_SECONDS = 60;

/**
 * How far ahead a deadline sweep looks (`src/relay/deadline-sweep.ts`): it waits in its own
 * invocation for every deadline due within this, and closes each on time. Twice the sweep's
 * one-minute schedule, so consecutive sweeps overlap and every deadline is seen by a sweep
 * well before it is due; a deadline nearer than this when it is set is also queued, delivered
 * to the deadline function at its time (src/gateway/queued-deadlines.ts).
 */
export const DEADLINE_HORIZON_MS = 120_000;

/** The deadline function's timeout: the horizon, and margin for the closes at its end. */
export const DEADLINE_TIMEOUT_SECONDS = 180;
