/**
 * Function timeouts that more than the deployment must know: the CDK stack deploys them and
 * the local stack enforces them, so a handler that would time out in Lambda does locally too.
 */

/**
 * The fan-out function's timeout. One invocation posts a batch's deliveries (records × matching
 * connections ÷ `fanout.concurrency` round trips); the bench reports the longest invocation.
 */
export const FANOUT_TIMEOUT_SECONDS = 60;
