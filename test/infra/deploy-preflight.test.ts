/**
 * The pre-deploy check's judgement (infra/deploy-preflight.ts): the account's Lambda concurrency
 * against what the configured stack reserves and runs, on a new account's quotas (10, 400), the
 * usual 1,000, and an upgrade whose functions already hold their reservations.
 */
import { App } from 'aws-cdk-lib';
import { describe, expect, it } from 'vitest';
import { preflight } from '../../infra/deploy-preflight.ts';
import type { PreflightInput } from '../../infra/deploy-preflight.ts';
import { settingsFromContext } from '../../infra/relay-settings.ts';

const settingsOf = (context: Record<string, string>) => settingsFromContext(new App({ context }).node);
const account = (concurrentExecutions: number, unreservedConcurrentExecutions = concurrentExecutions) => ({ concurrentExecutions, unreservedConcurrentExecutions });
/** A first deploy unless `stackFunctions` says this stage's functions exist. */
const run = (context: Record<string, string>, accountConcurrency: PreflightInput['account'], heldByStack = 0, stackFunctions = 0) =>
  preflight({ settings: settingsOf(context), account: accountConcurrency, heldByStack, stackFunctions, region: 'us-east-1' });
const concurrencyLevels = (report: ReturnType<typeof preflight>) => report.findings.filter((finding) => finding.check === 'reservations' || finding.check === 'capacity').map((finding) => finding.level);
const levelOf = (report: ReturnType<typeof preflight>, check: string) => report.findings.find((finding) => finding.check === check)?.level;
const messageOf = (report: ReturnType<typeof preflight>, check: string) => report.findings.find((finding) => finding.check === check)?.message ?? '';

describe('preflight', () => {
  it('lets the defaults deploy on a new account of 10 executions, and says what to raise for the configured streams', () => {
    const report = run({}, account(10));
    expect(report.deployWouldFail).toBe(false);
    expect(report).toMatchObject({ reservedByDeploy: 0, reservedElsewhere: 0, unreservedAfter: 10 });
    expect(levelOf(report, 'reservations')).toBe('ok');
    expect(levelOf(report, 'capacity')).toBe('warn');
    // 180 streams, 5 sink retries, 100 for the rest.
    expect(messageOf(report, 'capacity')).toContain('Request a Lambda concurrent executions quota of at least 285 in us-east-1 (Service Quotas code L-B99A9384)');
    expect(messageOf(report, 'capacity')).not.toContain('-c liveStreams=');
  });

  it('finds the defaults at home on a new account of 400 and on the usual 1,000', () => {
    for (const quota of [400, 1000]) {
      const report = run({}, account(quota));
      expect(report.deployWouldFail).toBe(false);
      expect(concurrencyLevels(report)).toEqual(['ok', 'ok']);
    }
  });

  it('fails a reservation a new account cannot make, naming the quota to request and what it could reserve', () => {
    const report = run({ streamConcurrency: '200' }, account(10));
    expect(report.deployWouldFail).toBe(true);
    expect(levelOf(report, 'reservations')).toBe('fail');
    expect(messageOf(report, 'reservations')).toContain('Request a Lambda concurrent executions quota of at least 300 in us-east-1 (Service Quotas code L-B99A9384)');
    expect(messageOf(report, 'reservations')).toContain('reserve at most 0');
    // The capacity it names then is the one the whole configuration needs, once it deploys.
    expect(messageOf(report, 'capacity')).toContain('at least 305 in us-east-1 (Service Quotas code L-B99A9384) (once the reservations fit)');
    // Even the sink-retry worker's 5 is too much for 10: 10 - 5 leaves fewer than 100.
    const retry = run({ reserveSinkRetryConcurrency: 'true' }, account(10));
    expect(retry.deployWouldFail).toBe(true);
    expect(messageOf(retry, 'reservations')).toContain('at least 105 in us-east-1');
  });

  it('counts the reservations of other functions in the region', () => {
    // 1,000 in all, 750 reserved by someone else: 150 left, of which 100 must stay unreserved.
    const report = run({ streamConcurrency: '200' }, account(1000, 250));
    expect(report).toMatchObject({ reservedElsewhere: 750, reservedByDeploy: 200, unreservedAfter: 50, deployWouldFail: true });
    expect(messageOf(report, 'reservations')).toContain('other functions reserve 750');
    expect(messageOf(report, 'reservations')).toContain('at least 1050 in us-east-1');
    expect(messageOf(report, 'reservations')).toContain('reserve at most 150');
    expect(run({ streamConcurrency: '150' }, account(1000, 250)).deployWouldFail).toBe(false);
  });

  it('gives an upgrade back what its own functions reserve now', () => {
    // Quota 400, this stack holds 250 of it: unreserved 150, yet keeping 250 leaves 150 after the upgrade.
    const upgrade = run({ streamConcurrency: '250' }, account(400, 150), 250);
    expect(upgrade).toMatchObject({ reservedElsewhere: 0, unreservedAfter: 150, deployWouldFail: false });
    // Counted as new, the same reservation would look like a failure.
    expect(run({ streamConcurrency: '250' }, account(400, 150), 0).deployWouldFail).toBe(true);
  });

  it('with the streams reserved, counts only the rest against the unreserved pool', () => {
    const report = run({ streamConcurrency: '200' }, account(1000));
    expect(concurrencyLevels(report)).toEqual(['ok', 'ok']);
    expect(messageOf(report, 'reservations')).toBe('this deploy reserves 200 (stream 200 (-c streamConcurrency)); 800 stay unreserved (at least 100 must)');
    expect(messageOf(report, 'capacity')).toBe('105 unreserved executions needed at the configured caps, 800 available');
  });

  it('suggests fewer streams where that alone would do', () => {
    const report = run({}, account(250));
    expect(levelOf(report, 'capacity')).toBe('warn');
    expect(messageOf(report, 'capacity')).toContain('at least 285 in us-east-1');
    expect(messageOf(report, 'capacity')).toContain('or serve fewer streams (-c liveStreams=145)');
    expect(report.deployWouldFail).toBe(false);
  });

  it('notes the API Gateway CloudWatch role it cannot read when WebSocket access logs are on', () => {
    const report = run({ webSocketAccessLogs: 'true' }, account(1000));
    expect(levelOf(report, 'websocket access logs')).toBe('note');
    expect(messageOf(report, 'websocket access logs')).toContain('aws apigateway get-account --region us-east-1 --query cloudwatchRoleArn');
    expect(run({}, account(1000)).findings.some((finding) => finding.check === 'websocket access logs')).toBe(false);
  });
});

describe('preflight of a first deploy (no function of the stage yet)', () => {
  it('warns that a protected first create cannot roll back cleanly, and names the flag for it and for the next deploy', () => {
    const report = run({ stage: 'prod' }, account(1000));
    expect(levelOf(report, 'first deploy')).toBe('warn');
    expect(messageOf(report, 'first deploy')).toContain('no function of AepRelay-prod in us-east-1');
    expect(messageOf(report, 'first deploy')).toContain('ROLLBACK_FAILED');
    expect(messageOf(report, 'first deploy')).toContain('Deploy this first time with -c deletionProtection=false, and again without it once it has completed');
    // Not a failure: the deploy itself goes through.
    expect(report.deployWouldFail).toBe(false);
  });

  it('agrees with a first create without protection, reminding that the next deploy turns it on', () => {
    const report = run({ stage: 'prod', deletionProtection: 'false' }, account(1000));
    expect(levelOf(report, 'first deploy')).toBe('ok');
    expect(messageOf(report, 'first deploy')).toContain('deploy again without -c deletionProtection=false to protect the tables');
  });

  it('says nothing of protection for a stack whose tables go with it (removalPolicy=destroy)', () => {
    expect(levelOf(run({ removalPolicy: 'destroy' }, account(1000)), 'first deploy')).toBeUndefined();
  });

  it('notes that CloudFront verification cannot be read, what shows the account has made a distribution, and what to do', () => {
    const report = run({}, account(1000));
    expect(levelOf(report, 'cloudfront')).toBe('note');
    expect(messageOf(report, 'cloudfront')).toContain('not checked: whether AWS lets this account create CloudFront distributions');
    expect(messageOf(report, 'cloudfront')).toContain('Your account must be verified before you can add new CloudFront resources');
    expect(messageOf(report, 'cloudfront')).toContain('aws cloudfront list-distributions --query DistributionList.Quantity');
    expect(messageOf(report, 'cloudfront')).toContain('ask AWS Support');
    expect(messageOf(report, 'cloudfront')).not.toContain('acm');
    // With a custom domain and a web ACL, it names what CloudFront needs of them too.
    const custom = run({ domainName: 'relay.example.com', certificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/abc', webAclArn: 'arn:aws:wafv2:us-east-1:111111111111:global/webacl/relay/abc' }, account(1000));
    expect(messageOf(custom, 'cloudfront')).toContain('aws acm describe-certificate --region us-east-1 --certificate-arn arn:aws:acm:us-east-1:111111111111:certificate/abc --query Certificate.Status` prints ISSUED');
    expect(messageOf(custom, 'cloudfront')).toContain('scope CLOUDFRONT');
  });
});

describe('preflight of an upgrade (the stage\'s functions exist)', () => {
  it('finds CloudFront usable (the stack made its distribution) and stays quiet on protection that is on', () => {
    const report = run({ stage: 'prod' }, account(1000), 0, 9);
    expect(levelOf(report, 'cloudfront')).toBe('ok');
    expect(messageOf(report, 'cloudfront')).toContain('AepRelay-prod exists in us-east-1, and its create made its distribution');
    expect(levelOf(report, 'first deploy')).toBeUndefined();
  });

  it('warns when an upgrade leaves deletion protection off', () => {
    const report = run({ stage: 'prod', deletionProtection: 'false' }, account(1000), 0, 9);
    expect(levelOf(report, 'first deploy')).toBe('warn');
    expect(messageOf(report, 'first deploy')).toContain('deploy without -c deletionProtection=false to protect them');
  });
});
