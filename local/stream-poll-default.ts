/**
 * How often the local stream pollers read the events table's stream when AEP_LOCAL_POLL_MS is
 * unset (ms). Its own module so that the tooling that states local latency in poll periods
 * (`npm run load`) can run with, and divide by, the very value `npm start` uses, without
 * importing the whole stack.
 */
export const DEFAULT_LOCAL_POLL_MS = 100;
