/**
 * The pre-deploy check's judgement (`npm run preflight`, bin/preflight.ts), pure: the account's
 * Lambda concurrency as GetAccountSettings reports it, against what the configured stack would
 * reserve and run. It says whether the deploy would fail, and exactly what to raise.
 *
 * AWS facts it rests on (Lambda Developer Guide "Lambda quotas"; Lambda API reference
 * PutFunctionConcurrency, GetAccountSettings, AccountLimit):
 * - a region's reservations may add up to the account's concurrent executions less 100, which
 *   stay unreserved; a reservation past that fails, and with it the function's creation and the
 *   whole stack;
 * - new accounts start with a reduced concurrency quota, raised by AWS with use or on request
 *   (Service Quotas, Lambda "Concurrent executions", code L-B99A9384);
 * - `UnreservedConcurrentExecutions` is the quota less every reservation in the region now,
 *   this stack's own included (an upgrade sets its functions' reservations anew, so what they
 *   hold counts as free again).
 */
import type { RelaySettings } from './relay-settings.ts';
import { SINK_RETRY_RESERVATION, UNRESERVED_MINIMUM, reservationsOf } from './reserved-concurrency.ts';

/** Lambda's "Concurrent executions" quota in Service Quotas. */
export const CONCURRENCY_QUOTA_CODE = 'L-B99A9384';

/**
 * What the functions without a reservation (ingest, the socket, fan-out, bridges, the authorizer)
 * should keep when the unreserved ones run at their caps: the same floor Lambda keeps unreserved.
 */
export const SHARED_FUNCTIONS_FLOOR = UNRESERVED_MINIMUM;

export interface LambdaAccountConcurrency {
  /** `AccountLimit.ConcurrentExecutions`: the region's quota. */
  concurrentExecutions: number;
  /** `AccountLimit.UnreservedConcurrentExecutions`: the quota less every reservation in the region. */
  unreservedConcurrentExecutions: number;
}

export interface PreflightInput {
  settings: Pick<RelaySettings, 'streamConcurrency' | 'reserveSinkRetryConcurrency' | 'liveStreams' | 'webSocketAccessLogs'>;
  account: LambdaAccountConcurrency;
  /** Executions this stack's functions reserve now (0 on a first deploy). */
  heldByStack: number;
  region: string;
}

export type FindingLevel = 'ok' | 'warn' | 'fail' | 'note';

export interface PreflightFinding {
  level: FindingLevel;
  check: string;
  message: string;
}

export interface PreflightReport {
  /** Reservations in the region that are not this stack's. */
  reservedElsewhere: number;
  /** What this deploy reserves, in all. */
  reservedByDeploy: number;
  /** The account's unreserved executions once the deploy is done. */
  unreservedAfter: number;
  findings: PreflightFinding[];
  /** A finding at `fail`: the deploy itself would fail (and the stack roll back). */
  deployWouldFail: boolean;
}

export function preflight(input: PreflightInput): PreflightReport {
  const { settings, account, region } = input;
  const quota = account.concurrentExecutions;
  const reservations = reservationsOf(settings);
  const reservedByDeploy = reservations.reduce((sum, reservation) => sum + reservation.executions, 0);
  const reservedElsewhere = Math.max(0, quota - account.unreservedConcurrentExecutions - input.heldByStack);
  const unreservedAfter = quota - reservedElsewhere - reservedByDeploy;
  const raise = (executions: number) => `request a Lambda concurrent executions quota of at least ${executions} in ${region} (Service Quotas code ${CONCURRENCY_QUOTA_CODE})`;
  const findings: PreflightFinding[] = [];

  const asked = reservations.map((reservation) => `${reservation.function} ${reservation.executions} (-c ${reservation.setting})`).join(', ');
  if (reservations.length === 0) {
    findings.push({ level: 'ok', check: 'reservations', message: 'this deploy reserves no concurrency (-c streamConcurrency=0, the sink-retry function unreserved)' });
  } else if (unreservedAfter < UNRESERVED_MINIMUM) {
    const reservable = Math.max(0, quota - reservedElsewhere - UNRESERVED_MINIMUM);
    findings.push({
      level: 'fail',
      check: 'reservations',
      message: `this deploy reserves ${reservedByDeploy} (${asked}) but Lambda keeps ${UNRESERVED_MINIMUM} of the account's ${quota} unreserved${reservedElsewhere > 0 ? ` and other functions reserve ${reservedElsewhere}` : ''}: ` +
        `creating the function would fail and the stack roll back. ${capitalise(raise(reservedElsewhere + reservedByDeploy + UNRESERVED_MINIMUM))}, ` +
        `or reserve at most ${reservable} (-c streamConcurrency=0 reserves nothing)`,
    });
  } else {
    findings.push({ level: 'ok', check: 'reservations', message: `this deploy reserves ${reservedByDeploy} (${asked}); ${unreservedAfter} stay unreserved (at least ${UNRESERVED_MINIMUM} must)` });
  }

  // What runs from the unreserved pool at its caps: the streams unless reserved, the retry worker unless reserved.
  const unreservedStreams = settings.streamConcurrency > 0 ? 0 : settings.liveStreams;
  const unreservedRetries = settings.reserveSinkRetryConcurrency ? 0 : SINK_RETRY_RESERVATION;
  const capacityNeeded = unreservedStreams + unreservedRetries + SHARED_FUNCTIONS_FLOOR;
  const poolAfter = Math.max(0, unreservedAfter);
  if (poolAfter < capacityNeeded) {
    const fewerStreams = poolAfter - unreservedRetries - SHARED_FUNCTIONS_FLOOR;
    findings.push({
      level: 'warn',
      check: 'capacity',
      message: `${unreservedStreams > 0 ? `${unreservedStreams} live streams (-c liveStreams) and ` : ''}${unreservedRetries} sink retries at once, with ${SHARED_FUNCTIONS_FLOOR} left for ingest, the socket and fan-out, need ${capacityNeeded} unreserved executions; ` +
        `the account has ${poolAfter}: Lambda would throttle before the relay's own limits answer. ${capitalise(raise(reservedElsewhere + reservedByDeploy + capacityNeeded))}` +
        (unreservedStreams > 0 && fewerStreams >= 1 ? `, or serve fewer streams (-c liveStreams=${fewerStreams})` : '') +
        (findings.some((finding) => finding.level === 'fail') ? ' (once the reservations fit)' : ' (the deploy itself succeeds)'),
    });
  } else {
    findings.push({ level: 'ok', check: 'capacity', message: `${capacityNeeded} unreserved executions needed at the configured caps, ${poolAfter} available` });
  }

  if (settings.webSocketAccessLogs) {
    findings.push({
      level: 'note',
      check: 'websocket access logs',
      message: `not checked: -c webSocketAccessLogs=true needs API Gateway's account CloudWatch Logs role in ${region}; ` +
        `\`aws apigateway get-account --region ${region} --query cloudwatchRoleArn\` must print a role ARN, or the WebSocket stage fails to deploy`,
    });
  }
  return { reservedElsewhere, reservedByDeploy, unreservedAfter, findings, deployWouldFail: findings.some((finding) => finding.level === 'fail') };
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
