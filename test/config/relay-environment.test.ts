/**
 * The environment writer and the configuration reader share their variable names: what
 * `relayEnvironment` writes, `readRelayConfig` reads back as the same settings.
 */
import { describe, expect, it } from 'vitest';
import { readRelayConfig } from '../../src/config/relay-config.ts';
import { BRIDGE_VARIABLES, PUSH_VARIABLES, FANOUT_VARIABLES, LIMIT_VARIABLES, RELAY_VARIABLES, SSE_VARIABLES, relayEnvironment } from '../../src/config/relay-environment.ts';

const tables = { events: 'e-table', connections: 'c-table', tenants: 't-table' };

describe('relayEnvironment', () => {
  it('writes only the tables when nothing else is set, and the reader fills in its defaults', () => {
    const variables = relayEnvironment({ tables });
    expect(variables).toEqual({ AEP_EVENTS_TABLE: 'e-table', AEP_CONNECTIONS_TABLE: 'c-table', AEP_TENANTS_TABLE: 't-table' });
    const config = readRelayConfig(variables);
    expect(config.tables).toEqual(tables);
    expect(config.replayBuffer).toBe(1000);
    expect(config.replaySettleMs).toBe(2000);
    expect(config.surface).toEqual({ stream: false, socket: false });
  });

  it('round-trips every setting it can write through readRelayConfig', () => {
    const settings = {
      tables,
      dynamoEndpoint: 'http://127.0.0.1:8000',
      managementEndpoint: 'https://abc.execute-api.eu-west-1.amazonaws.com/dev',
      laneFunction: 'aep-relay-prod-fanoutlane',
      laneEndpoint: 'http://127.0.0.1:9001',
      helloWaitMs: 11,
      connectionLifetimeSeconds: 12,
      maxPendingBytes: 13,
      replayBuffer: 14,
      replaySettleMs: 17,
      retentionDays: 15,
      liveOnlySeconds: 16,
      operatorTenant: 'ops-team',
      surface: { stream: true, socket: false },
      metricsNamespace: 'AepRelay/prod',
      originSecrets: ['current-value', 'previous-value'],
      limits: { maxBodyBytes: 21, maxBatchEvents: 22, maxEventBytes: 23, maxFromPositions: 24, maxSubscriptionsPerConnection: 25, defaultEventsPerSecond: 26, socketFramesPerSecond: 27, socketFrameBurst: 28 },
      sse: { heartbeatMs: 31, pollMs: 32, idlePollMs: 41, backoffAfterPolls: 42, endMarginMs: 33, maxDurationMs: 34, flushPaddingBytes: 0, backpressureBytes: 36, revalidateMs: 37, slotLeaseMs: 38, maxLiveStreams: 39, maxStreamsPerTenant: 35, idleEndMs: 40 },
      fanout: { concurrency: 41, closingGraceMs: 42, orderWaitMs: 43, orderAdoptMs: 44, tenantDeliveriesPerBatch: 45, laneDeliveries: 46, maxLanes: 47 },
    };
    const sealKey = Buffer.alloc(32, 9);
    const bridges = {
      kmsKeyId: 'arn:aws:kms:eu-west-1:111111111111:key/k',
      eventBuses: ['arn:aws:events:eu-west-1:111111111111:event-bus/a', 'arn:aws:events:eu-west-1:222222222222:event-bus/b'],
      eventBridgeEndpoint: 'http://127.0.0.1:9999',
      retry: { attempts: 41, baseDelayMs: 42, maxDelayMs: 43 },
      liveBudgetMs: 44,
      circuitOpenMs: 45,
      retryQueueUrl: 'https://sqs.eu-west-1.amazonaws.com/111111111111/retry',
      retryConcurrency: 46,
      retryTimeoutMs: 47,
      allowLoopbackSinks: true,
    };
    const { tables: _tables, ...rest } = settings;
    const push = { vapidSeed: 'seed-now', vapidPreviousSeed: 'seed-before', vapidSubject: 'mailto:ops@example.com', consoleUrl: 'https://relay.example.com/console/' };
    expect(readRelayConfig({ ...relayEnvironment({ ...settings, bridges: { ...bridges, sealKeyBase64: sealKey.toString('base64') }, push }), [RELAY_VARIABLES.region]: 'eu-west-1' })).toEqual({
      region: 'eu-west-1',
      tables,
      ...rest,
      bridges: { ...bridges, sealKey },
      push: { vapidSeeds: ['seed-now', 'seed-before'], vapidSubject: 'mailto:ops@example.com', consoleUrl: 'https://relay.example.com/console/' },
    });
  });

  it('names every variable once: no two settings share one', () => {
    const names = [...Object.values(RELAY_VARIABLES), ...Object.values(LIMIT_VARIABLES), ...Object.values(SSE_VARIABLES), ...Object.values(FANOUT_VARIABLES), ...Object.values(BRIDGE_VARIABLES), ...Object.values(PUSH_VARIABLES)];
    expect(new Set(names).size).toBe(names.length);
  });

  it('keeps the bridges’ live budget within half the bridges function’s timeout, and the retry timeout within half the retry function’s', () => {
    const base = { ...relayEnvironment({ tables }), [RELAY_VARIABLES.region]: 'eu-west-1' };
    expect(readRelayConfig(base).bridges).toMatchObject({ liveBudgetMs: 500, circuitOpenMs: 30_000, retryTimeoutMs: 10_000, retryConcurrency: 5, allowLoopbackSinks: false });
    expect(readRelayConfig({ ...base, [BRIDGE_VARIABLES.liveBudgetMs]: '15000' }).bridges.liveBudgetMs).toBe(15_000);
    expect(() => readRelayConfig({ ...base, [BRIDGE_VARIABLES.liveBudgetMs]: '15001' })).toThrow(BRIDGE_VARIABLES.liveBudgetMs);
    expect(() => readRelayConfig({ ...base, [BRIDGE_VARIABLES.retryTimeoutMs]: '30001' })).toThrow(BRIDGE_VARIABLES.retryTimeoutMs);
  });
});
