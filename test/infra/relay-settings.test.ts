/**
 * Deployment settings from CDK context: defaults, parsing, and refusals that name the key.
 */
import { App, RemovalPolicy } from 'aws-cdk-lib';
import { RetentionDays } from 'aws-cdk-lib/aws-logs';
import { describe, expect, it } from 'vitest';
import { DEFAULT_SETTINGS, settingsFromContext } from '../../infra/relay-settings.ts';

const settingsOf = (context: Record<string, string>) => settingsFromContext(new App({ context }).node);

describe('settingsFromContext', () => {
  it('uses the defaults without context: dev stage, retained and protected tables, no custom domain', () => {
    expect(settingsOf({})).toEqual(DEFAULT_SETTINGS);
    expect(DEFAULT_SETTINGS).toMatchObject({ stage: 'dev', replayBuffer: 1000, retentionDays: 30, logLevel: 'info', removalPolicy: RemovalPolicy.RETAIN_ON_UPDATE_OR_DELETE, deletionProtection: true, webSocketAccessLogs: false, corsOrigins: [], streamConcurrency: 200, streamHeadroom: 20 });
    expect(DEFAULT_SETTINGS).toMatchObject({ tracing: false, edgeAccessLogs: true, originSecretRotation: false });
    expect(DEFAULT_SETTINGS.alarmTopicArn).toBeUndefined();
    expect(DEFAULT_SETTINGS.alarmEmail).toBeUndefined();
    // What one tenant or connection may take of the shared lanes (README "Tenant isolation").
    expect(DEFAULT_SETTINGS.tenantLimits).toEqual({ eventsPerSecond: 1000, streamsPerTenant: 45, socketFramesPerSecond: 100, socketFrameBurst: 500, fanoutTenantDeliveries: 5000 });
  });

  it("derives a tenant's stream share from the pool when not set: a quarter, rounded up", () => {
    expect(settingsOf({ streamConcurrency: '100', streamHeadroom: '10' }).tenantLimits.streamsPerTenant).toBe(23);
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
        alarmEmail: 'ops@example.com',
        tracing: 'true',
        edgeAccessLogs: 'false',
        originSecretRotation: 'true',
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
      webAclArn: 'arn:aws:wafv2:us-east-1:111111111111:global/webacl/x/y',
      webSocketAccessLogs: true,
      bridgeEventBuses: ['arn:aws:events:eu-west-1:111111111111:event-bus/agents'],
      corsOrigins: ['https://dashboard.example.com', 'http://localhost:5173'],
      streamConcurrency: 400,
      streamHeadroom: 40,
      throttling: { http: { rateLimit: 500, burstLimit: 900 }, socketMessages: { rateLimit: 300, burstLimit: 600 }, socketConnects: { rateLimit: 20, burstLimit: 40 } },
      tenantLimits: { eventsPerSecond: 250, streamsPerTenant: 30, socketFramesPerSecond: 20, socketFrameBurst: 60, fanoutTenantDeliveries: 700 },
    });
  });

  it('turns deletion protection off by default when the tables are destroyed with the stack', () => {
    expect(settingsOf({ removalPolicy: 'destroy' })).toMatchObject({ removalPolicy: RemovalPolicy.DESTROY, deletionProtection: false });
  });

  it.each([
    [{ replayBuffer: '0' }, /replayBuffer must be a positive integer/],
    [{ retentionDays: 'thirty' }, /retentionDays must be a positive integer/],
    [{ logLevel: 'verbose' }, /logLevel must be one of debug, info, warn, error/],
    [{ removalPolicy: 'snapshot' }, /removalPolicy must be one of retain, destroy/],
    [{ deletionProtection: 'yes' }, /deletionProtection must be true or false/],
    [{ logRetentionDays: '31' }, /logRetentionDays must be one of/],
    [{ stage: 'prod/eu' }, /stage must be letters, digits/],
    [{ domainName: 'relay.example.com' }, /domainName and certificateArn go together/],
    [{ certificateArn: 'arn:aws:acm:us-east-1:111111111111:certificate/x' }, /domainName and certificateArn go together/],
    [{ removalPolicy: 'destroy', deletionProtection: 'true' }, /contradicts removalPolicy=destroy/],
    [{ corsOrigins: 'https://dashboard.example.com/app' }, /corsOrigins: "https:\/\/dashboard.example.com\/app" is not an origin/],
    [{ corsOrigins: 'dashboard.example.com' }, /corsOrigins: "dashboard.example.com" is not an origin/],
    [{ corsOrigins: '*,https://a.example' }, /corsOrigins: \* allows every origin and stands alone/],
    [{ streamConcurrency: '0' }, /streamConcurrency must be a positive integer/],
    [{ streamConcurrency: '50', streamHeadroom: '50' }, /streamHeadroom \(50\) must be below streamConcurrency \(50\)/],
    [{ streamsPerTenant: '181' }, /streamsPerTenant \(181\) must be at most the stream pool \(180\)/],
    [{ tenantEventsPerSecond: '0' }, /tenantEventsPerSecond must be a positive integer/],
    [{ alarmEmail: 'ops' }, /alarmEmail must be one e-mail address/],
    [{ tracing: 'yes' }, /tracing must be true or false/],
    [{ edgeAccessLogs: 'on' }, /edgeAccessLogs must be true or false/],
    [{ originSecretRotation: '1' }, /originSecretRotation must be true or false/],
  ])('refuses %o, naming the key', (context, message) => {
    expect(() => settingsOf(context)).toThrow(message);
  });
});
