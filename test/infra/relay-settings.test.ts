/**
 * Deployment settings from CDK context: defaults, parsing, and refusals that name the key.
 */
import { App, RemovalPolicy, Stack } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, settingsFromContext, stackNameOf } from '../../infra/relay-settings.ts';
import { DEFAULT_FANOUT_LANE_DELIVERIES, DEFAULT_FANOUT_MAX_LANES } from '../../src/config/relay-config.ts';

const settingsOf = (context: Record<string, string>) => settingsFromContext(new App({ context }).node);

describe('settingsFromContext', () => {
  it('uses the defaults without context: dev stage, retained and protected tables, no custom domain', () => {
    expect(settingsOf({})).toEqual(DEFAULT_SETTINGS);
    expect(DEFAULT_SETTINGS).toMatchObject({ stage: 'dev', replayBuffer: 1000, retentionDays: 30, logLevel: 'info', removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE, deletionProtection: true, webSocketAccessLogs: false, corsOrigins: [], streamConcurrency: 0, streamHeadroom: 20, liveStreams: 180, reserveSinkRetryConcurrency: false });
    expect(DEFAULT_SETTINGS).toMatchObject({ tracing: false, edgeAccessLogs: true, originSecretRotation: false });
    expect(DEFAULT_SETTINGS.alarmTopicArn).toBeUndefined();
    expect(DEFAULT_SETTINGS.alarmEmail).toBeUndefined();
    // What one tenant or connection may take of the shared lanes (docs/security-and-isolation.md "Tenant isolation").
    expect(DEFAULT_SETTINGS.tenantLimits).toEqual({ eventsPerSecond: 1000, streamsPerTenant: 45, socketFramesPerSecond: 100, socketFrameBurst: 500, fanoutTenantDeliveries: 5000 });
    // A big fan-out batch in up to 8 lanes of 2,000 deliveries, as the fan-out function reads by default.
    expect(DEFAULT_SETTINGS.deliveryLanes).toEqual({ maxLanes: DEFAULT_FANOUT_MAX_LANES, laneDeliveries: DEFAULT_FANOUT_LANE_DELIVERIES });
    expect(DEFAULT_SETTINGS.deliveryLanes).toEqual({ maxLanes: 8, laneDeliveries: 2000 });
  });

  it("derives a tenant's stream share from the pool when not set: a quarter, rounded up", () => {
    expect(settingsOf({ streamConcurrency: '100', streamHeadroom: '10' }).tenantLimits.streamsPerTenant).toBe(23);
    expect(settingsOf({ liveStreams: '60' }).tenantLimits.streamsPerTenant).toBe(15);
  });

  it('reserves nothing by default, so a new account can deploy; a reservation sets the stream pool below it unless liveStreams is given', () => {
    expect(settingsOf({})).toMatchObject({ streamConcurrency: 0, liveStreams: 180, reserveSinkRetryConcurrency: false });
    // Without a reservation the headroom has nothing to stay below.
    expect(settingsOf({ streamHeadroom: '500' })).toMatchObject({ streamConcurrency: 0, liveStreams: 180 });
    expect(settingsOf({ streamConcurrency: '200' })).toMatchObject({ streamConcurrency: 200, liveStreams: 180 });
    expect(settingsOf({ streamConcurrency: '200', liveStreams: '100' })).toMatchObject({ streamConcurrency: 200, liveStreams: 100 });
    expect(settingsOf({ liveStreams: '40' })).toMatchObject({ streamConcurrency: 0, liveStreams: 40 });
    expect(settingsOf({ reserveSinkRetryConcurrency: 'true' }).reserveSinkRetryConcurrency).toBe(true);
  });

  // The stage names the stack: what the check lets through, CDK takes as a stack name, and what
  // it refuses, CDK would refuse at synth (the `_` that used to pass the check and then fail).
  it.each(['dev', 'prod', 'prod-eu-1', 'Staging2', '0', 'a'.repeat(64), 'a_b', 'prod_eu', 'prod.eu', 'prod eu', 'é'])('accepts stage %j exactly when CDK takes its stack name', (stage) => {
    const cdkTakesIt = (() => {
      try {
        new Stack(new App(), stackNameOf(stage));
        return true;
      } catch {
        return false;
      }
    })();
    const checkTakesIt = (() => {
      try {
        settingsOf({ stage });
        return true;
      } catch (error) {
        expect(String(error)).toMatch(/context stage must be letters, digits or - \(1-64; no _, which a CloudFormation stack name cannot hold\)/);
        return false;
      }
    })();
    // The check's own refusals: over 64 characters (CDK takes stack names up to 128), and `/`,
    // which CDK turns into `--` in a construct id but the WebSocket stage path cannot hold.
    expect(checkTakesIt).toBe(cdkTakesIt);
  });

  it('reads every key', () => {
    expect(
      settingsOf({
        stage: 'prod',
        replayBuffer: '250',
        retentionDays: '90',
        logLevel: 'warn',
        logRetentionDays: '365',
        removalPolicy: 'retain',
        deletionProtection: 'false',
        domainName: 'relay.example.com',
        certificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/x',
        alarmTopicArn: 'arn:aws:sns:eu-west-1:111111111111:alarms',
        webAclArn: 'arn:aws:wafv2:us-east-1:111111111111:global/webacl/x/y',
        webSocketAccessLogs: 'true',
        bridgeEventBuses: 'arn:aws:events:eu-west-1:111111111111:event-bus/agents',
        corsOrigins: 'https://dashboard.example.com, http://localhost:5173',
        streamConcurrency: '400',
        streamHeadroom: '40',
        liveStreams: '300',
        reserveSinkRetryConcurrency: 'true',
        httpRateLimit: '500',
        httpBurstLimit: '900',
        socketRateLimit: '300',
        socketBurstLimit: '600',
        connectRateLimit: '20',
        connectBurstLimit: '40',
        tenantEventsPerSecond: '250',
        streamsPerTenant: '30',
        socketFramesPerSecond: '20',
        socketFrameBurst: '60',
        fanoutTenantDeliveries: '700',
        fanoutLanes: '4',
        fanoutLaneDeliveries: '1500',
        alarmEmail: 'ops@example.com',
        tracing: 'true',
        edgeAccessLogs: 'false',
        originSecretRotation: 'true',
        vapidRotation: 'true',
        pushContact: 'mailto:ops@example.com',
      }),
    ).toEqual({
      stage: 'prod',
      replayBuffer: 250,
      retentionDays: 90,
      logLevel: 'warn',
      logRetention: RetentionDays.ONE_YEAR,
      removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE,
      deletionProtection: false,
      domainName: 'relay.example.com',
      certificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/x',
      alarmTopicArn: 'arn:aws:sns:eu-west-1:111111111111:alarms',
      alarmEmail: 'ops@example.com',
      tracing: true,
      edgeAccessLogs: false,
      originSecretRotation: true,
      vapidRotation: true,
      pushContact: 'mailto:ops@example.com',
      webAclArn: 'arn:aws:wafv2:us-east-1:111111111111:global/webacl/x/y',
      webSocketAccessLogs: true,
      bridgeEventBuses: ['arn:aws:events:eu-west-1:111111111111:event-bus/agents'],
      corsOrigins: ['https://dashboard.example.com', 'http://localhost:5173'],
      streamConcurrency: 400,
      streamHeadroom: 40,
      liveStreams: 300,
      reserveSinkRetryConcurrency: true,
      throttling: { http: { rateLimit: 500, burstLimit: 900 }, socketMessages: { rateLimit: 300, burstLimit: 600 }, socketConnects: { rateLimit: 20, burstLimit: 40 } },
      tenantLimits: { eventsPerSecond: 250, streamsPerTenant: 30, socketFramesPerSecond: 20, socketFrameBurst: 60, fanoutTenantDeliveries: 700 },
      deliveryLanes: { maxLanes: 4, laneDeliveries: 1500 },
    });
  });

  it('turns deletion protection off by default when the tables are destroyed with the stack', () => {
    expect(settingsOf({ removalPolicy: 'destroy' })).toMatchObject({ removalPolicy: RemovalPolicy.DESTROY, deletionProtection: false });
  });

  it.each([
    [{ replayBuffer: '0' }, /replayBuffer must be a positive integer/],
    [{ pushContact: 'ops@example.com' }, /pushContact must be a mailto: address or an https: URL/],
    [{ retentionDays: 'thirty' }, /retentionDays must be a positive integer/],
    [{ logLevel: 'verbose' }, /logLevel must be one of debug, info, warn, error/],
    [{ removalPolicy: 'snapshot' }, /removalPolicy must be one of retain, destroy/],
    [{ deletionProtection: 'yes' }, /deletionProtection must be true or false/],
    [{ logRetentionDays: '31' }, /logRetentionDays must be one of/],
    [{ stage: 'prod/eu' }, /stage must be letters, digits/],
    [{ stage: 'prod_eu' }, /stage must be letters, digits or - \(1-64; no _/],
    [{ stage: 'a'.repeat(65) }, /stage must be letters, digits or - \(1-64/],
    [{ domainName: 'relay.example.com', certificateArn: 'arn:aws:acm:eu-west-1:111111111111:certificate/x' }, /certificateArn must be an ACM certificate in us-east-1/],
    [{ domainName: 'relay.example.com' }, /domainName and certificateArn go together/],
    [{ certificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/x' }, /domainName and certificateArn go together/],
    [{ removalPolicy: 'destroy', deletionProtection: 'true' }, /contradicts removalPolicy=destroy/],
    [{ corsOrigins: 'https://dashboard.example.com/app' }, /corsOrigins: "https:\/\/dashboard.example.com\/app" is not an origin/],
    [{ corsOrigins: 'dashboard.example.com' }, /corsOrigins: "dashboard.example.com" is not an origin/],
    [{ corsOrigins: '*,https://a.example' }, /corsOrigins: \* allows every origin and stands alone/],
    [{ streamConcurrency: '-1' }, /streamConcurrency must be 0 or a positive integer/],
    [{ liveStreams: '0' }, /liveStreams must be a positive integer/],
    [{ streamConcurrency: '200', liveStreams: '190' }, /liveStreams \(190\) must be at most streamConcurrency less streamHeadroom \(180\)/],
    [{ reserveSinkRetryConcurrency: 'yes' }, /reserveSinkRetryConcurrency must be true or false/],
    [{ streamConcurrency: '50', streamHeadroom: '50' }, /streamHeadroom \(50\) must be below streamConcurrency \(50\)/],
    [{ streamsPerTenant: '181' }, /streamsPerTenant \(181\) must be at most the stream pool \(180\)/],
    [{ liveStreams: '40', streamsPerTenant: '41' }, /streamsPerTenant \(41\) must be at most the stream pool \(40\)/],
    [{ tenantEventsPerSecond: '0' }, /tenantEventsPerSecond must be a positive integer/],
    [{ alarmEmail: 'ops' }, /alarmEmail must be one e-mail address/],
    [{ tracing: 'yes' }, /tracing must be true or false/],
    [{ edgeAccessLogs: 'on' }, /edgeAccessLogs must be true or false/],
    [{ originSecretRotation: '1' }, /originSecretRotation must be true or false/],
    [{ fanoutLanes: '0' }, /fanoutLanes must be a positive integer/],
    [{ fanoutLaneDeliveries: 'many' }, /fanoutLaneDeliveries must be a positive integer/],
  ])('refuses %o, naming the key', (context, message) => {
    expect(() => settingsOf(context)).toThrow(message);
  });
});
