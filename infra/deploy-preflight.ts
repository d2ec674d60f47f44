/**
 * The pre-deploy check's judgement (`npm run preflight`, bin/preflight.ts), pure: the account's
 * Lambda concurrency as GetAccountSettings reports it, against what the configured stack would
 * reserve and run. It says whether the deploy would fail, and exactly what to raise; and, from
 * whether this stage's functions exist, what a first deploy needs that no read can show
 * (`firstDeployFindings`).
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
import { RemovalPolicy } from 'aws-cdk-lib';
import { stackNameOf } from './relay-settings.ts';
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
  settings: Pick<RelaySettings, 'stage' | 'streamConcurrency' | 'reserveSinkRetryConcurrency' | 'liveStreams' | 'webSocketAccessLogs' | 'deletionProtection' | 'removalPolicy' | 'certificateArn' | 'webAclArn'>;
  account: LambdaAccountConcurrency;
  /** Executions this stack's functions reserve now (0 on a first deploy). */
  heldByStack: number;
  /** This stack's functions found in the region: 0 before its first deploy. */
  stackFunctions: number;
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

  findings.push(...firstDeployFindings(input));

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

/**
 * What a first deploy needs that the Lambda API cannot show, and what an existing stack shows.
 *
 * Deletion protection (docs/deploy-and-upgrade.md "First deploy on a new account"): a failed create deletes what it
 * made (`RetainExceptOnCreate`), which a protected table refuses, so the rollback would end in
 * ROLLBACK_FAILED; the first deploy goes without protection and the next turns it on.
 *
 * CloudFront: AWS may require a new account to be verified before it creates CloudFront resources
 * ("Your account must be verified before you can add new CloudFront resources"), and no API reports
 * whether it is (a list call that succeeds says nothing). What is known: a stack of this stage that
 * exists made its distribution, so the account can. Before that, the note names what to look at.
 */
function firstDeployFindings(input: PreflightInput): PreflightFinding[] {
  const { settings, region } = input;
  const stack = stackNameOf(settings.stage);
  const kept = settings.removalPolicy !== RemovalPolicy.DESTROY;
  const findings: PreflightFinding[] = [];
  if (input.stackFunctions === 0) {
    if (settings.deletionProtection) {
      findings.push({
        level: 'warn',
        check: 'first deploy',
        message: `no function of ${stack} in ${region}, so this creates the stack, with deletion protection on: if anything fails later in the create, the rollback cannot delete the protected tables and ends in ROLLBACK_FAILED. ` +
          'Deploy this first time with -c deletionProtection=false, and again without it once it has completed (the tables are then protected in place)',
      });
    } else if (kept) {
      findings.push({ level: 'ok', check: 'first deploy', message: `no function of ${stack} in ${region}: a create without deletion protection rolls back cleanly; once it has completed, deploy again without -c deletionProtection=false to protect the tables` });
    }
    findings.push({
      level: 'note',
      check: 'cloudfront',
      message: "not checked: whether AWS lets this account create CloudFront distributions. A new account may have to be verified first (the create fails with \"Your account must be verified before you can add new CloudFront resources\"), and no API reports it; " +
        '`aws cloudfront list-distributions --query DistributionList.Quantity` above 0 shows the account has made one before. If the create fails so, ask AWS Support to verify the account and deploy again' +
        (settings.certificateArn === undefined ? '' : `; the certificate must be issued: \`aws acm describe-certificate --region us-east-1 --certificate-arn ${settings.certificateArn} --query Certificate.Status\` prints ISSUED`) +
        (settings.webAclArn === undefined ? '' : '; the web ACL must be a global one (scope CLOUDFRONT, in us-east-1)'),
    });
  } else {
    if (!settings.deletionProtection && kept) {
      findings.push({ level: 'warn', check: 'first deploy', message: `${stack} exists in ${region}, and this deploy leaves its tables without deletion protection: deploy without -c deletionProtection=false to protect them` });
    }
    findings.push({ level: 'ok', check: 'cloudfront', message: `${stack} exists in ${region}, and its create made its distribution: the account may create CloudFront resources` });
  }
  return findings;
}

function capitalise(text: string): string {
  return text.charAt(0).toUpperCase() + text.slice(1);
}
