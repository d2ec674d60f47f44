/** How often the local stream pollers read the events table's stream when AEP_LOCAL_POLL_MS is unset (ms). */
export const DEFAULT_LOCAL_POLL_MS = 100;
