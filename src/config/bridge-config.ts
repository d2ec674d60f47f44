/**
 * The bridges' settings (AEP-0005 sinks), read with the rest of the relay configuration.
 * Secrets of sinks are sealed with a KMS key in AWS (`AEP_BRIDGE_KMS_KEY_ID`) or with a local
 * AES key (`AEP_BRIDGE_SEAL_KEY`, base64 of 32 bytes); with neither, configuring a sink that
 * has a secret fails naming both variables.
 */
import { ConfigurationError, optionalString, positiveInteger } from './env-readers.ts';
import type { Environment } from './env-readers.ts';
import { BRIDGES_LIVE_BUDGET_SHARE, BRIDGES_TIMEOUT_SECONDS, SINK_RETRY_TIMEOUT_SECONDS } from './function-timeouts.ts';
import { BRIDGE_VARIABLES, SURFACE_ON } from './relay-environment.ts';

export interface BridgeRetrySettings {
  /** Attempts per request, the live one included, before its events are dead-lettered. */
  attempts: number;
  baseDelayMs: number;
  maxDelayMs: number;
}

export interface BridgeConfig {
  /** KMS key (id or ARN) that seals sink secrets in AWS. */
  kmsKeyId?: string;
  /** Local sealing key (32 bytes); used when no KMS key is set. */
  sealKey?: Buffer;
  /** EventBridge bus ARNs sinks may name: the ones the stack grants `events:PutEvents` on. */
  eventBuses: string[];
  /** EventBridge endpoint override (a local stand-in); absent in AWS. */
  eventBridgeEndpoint?: string;
  retry: BridgeRetrySettings;
  /**
   * Time a stream batch gives its sinks (all tenants and sinks at once, one attempt per request)
   * before what is not accepted leaves the shared lane for the retry lane.
   */
  liveBudgetMs: number;
  /** After a sink fails on the live lane, its requests skip the live attempt for this long. */
  circuitOpenMs: number;
  /** The sink-retry queue (SQS) in AWS; absent: an in-process queue (the local stack). */
  retryQueueUrl?: string;
  /** Letters the in-process retry queue works at once (the SQS mapping's maximum concurrency in AWS). */
  retryConcurrency: number;
  /** The retry lane's longest wait for one answer (each attempt there). */
  retryTimeoutMs: number;
  /** Sinks may name loopback addresses (the local stack's receivers); a deployed stack refuses them. */
  allowLoopbackSinks: boolean;
}

/** Default budget: 5 attempts over about 7.5 s (0.5, 1, 2, 4 s between them). */
export const DEFAULT_BRIDGE_RETRY: BridgeRetrySettings = { attempts: 5, baseDelayMs: 500, maxDelayMs: 4000 };

export const DEFAULT_LIVE_BUDGET_MS = 500;
export const DEFAULT_CIRCUIT_OPEN_MS = 30_000;
export const DEFAULT_RETRY_CONCURRENCY = 5;
export const DEFAULT_RETRY_TIMEOUT_MS = 10_000;

export function readBridgeConfig(env: Environment): BridgeConfig {
  const liveBudgetMs = positiveInteger(env, BRIDGE_VARIABLES.liveBudgetMs, DEFAULT_LIVE_BUDGET_MS);
  // The batch must end well inside the function's timeout, or the mapping retries it whole
  // and every tenant of the batch gets duplicates.
  const maxBudgetMs = BRIDGES_TIMEOUT_SECONDS * 1000 * BRIDGES_LIVE_BUDGET_SHARE;
  if (liveBudgetMs > maxBudgetMs) throw new ConfigurationError(`${BRIDGE_VARIABLES.liveBudgetMs} must be at most ${maxBudgetMs} (half the bridges function's ${BRIDGES_TIMEOUT_SECONDS} s timeout), got ${liveBudgetMs}`);
  const retryQueueUrl = optionalString(env, BRIDGE_VARIABLES.retryQueueUrl);
  const retryTimeoutMs = positiveInteger(env, BRIDGE_VARIABLES.retryTimeoutMs, DEFAULT_RETRY_TIMEOUT_MS);
  // A retry attempt must end inside the retry function's timeout (its letter's lease).
  const maxRetryTimeoutMs = (SINK_RETRY_TIMEOUT_SECONDS * 1000) / 2;
  if (retryTimeoutMs > maxRetryTimeoutMs) throw new ConfigurationError(`${BRIDGE_VARIABLES.retryTimeoutMs} must be at most ${maxRetryTimeoutMs} (half the sink-retry function's ${SINK_RETRY_TIMEOUT_SECONDS} s timeout), got ${retryTimeoutMs}`);
  const kmsKeyId = optionalString(env, BRIDGE_VARIABLES.kmsKeyId);
  const sealKeyText = optionalString(env, BRIDGE_VARIABLES.sealKey);
  const eventBridgeEndpoint = optionalString(env, BRIDGE_VARIABLES.eventBridgeEndpoint);
  let sealKey: Buffer | undefined;
  if (sealKeyText !== undefined) {
    sealKey = Buffer.from(sealKeyText, 'base64');
    if (sealKey.length !== 32) throw new ConfigurationError(`${BRIDGE_VARIABLES.sealKey} must be the base64 of 32 bytes`);
  }
  return {
    ...(kmsKeyId === undefined ? {} : { kmsKeyId }),
    ...(sealKey === undefined ? {} : { sealKey }),
    eventBuses: (optionalString(env, BRIDGE_VARIABLES.eventBuses) ?? '').split(',').map((arn) => arn.trim()).filter((arn) => arn !== ''),
    ...(eventBridgeEndpoint === undefined ? {} : { eventBridgeEndpoint }),
    retry: {
      attempts: positiveInteger(env, BRIDGE_VARIABLES.retryAttempts, DEFAULT_BRIDGE_RETRY.attempts),
      baseDelayMs: positiveInteger(env, BRIDGE_VARIABLES.retryBaseDelayMs, DEFAULT_BRIDGE_RETRY.baseDelayMs),
      maxDelayMs: positiveInteger(env, BRIDGE_VARIABLES.retryMaxDelayMs, DEFAULT_BRIDGE_RETRY.maxDelayMs),
    },
    liveBudgetMs,
    circuitOpenMs: positiveInteger(env, BRIDGE_VARIABLES.circuitOpenMs, DEFAULT_CIRCUIT_OPEN_MS),
    ...(retryQueueUrl === undefined ? {} : { retryQueueUrl }),
    retryConcurrency: positiveInteger(env, BRIDGE_VARIABLES.retryConcurrency, DEFAULT_RETRY_CONCURRENCY),
    retryTimeoutMs,
    allowLoopbackSinks: optionalString(env, BRIDGE_VARIABLES.allowLoopbackSinks) === SURFACE_ON,
  };
}
