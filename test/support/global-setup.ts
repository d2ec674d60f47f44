/**
 * Starts one local stack (DynamoDB Local + local gateway + the real handlers) for the whole
 * test run, and hands its coordinates to the tests.
 */
import type { TestProject } from 'vitest/node';
import { startStackProcess } from './local-stack-process.ts';
import type { StackProcess } from './local-stack-process.ts';

/** Replay window the shared stack serves; small so tests can push a session past it. */
export const TEST_REPLAY_BUFFER = 20;
export const TEST_SSE_HEARTBEAT_MS = 1000;
export const TEST_SSE_MAX_DURATION_MS = 8000;
/** Short, so tests see a stream's slot outlive its lease by renewal, and a lost one freed. */
export const TEST_SSE_SLOT_LEASE_MS = 1500;
/** The one origin the shared stack lets browsers call it from (CORS). */
export const TEST_CORS_ORIGIN = 'https://dashboard.example';

declare module 'vitest' {
  export interface ProvidedContext {
    baseUrl: string;
    dynamoEndpoint: string;
    devToken: string;
    replayBuffer: number;
    /** The stack's loopback `@connections` endpoint; the public `baseUrl` answers 404 there. */
    managementEndpoint: string;
    /** The only credentials the management endpoint accepts. */
    managementCredentials: { accessKeyId: string; secretAccessKey: string };
  }
}

let stack: StackProcess | undefined;

export async function setup(project: TestProject): Promise<void> {
  stack = await startStackProcess({
    env: {
      AEP_REPLAY_BUFFER: String(TEST_REPLAY_BUFFER),
      AEP_DEV_TOKEN: `aep_test_${process.pid}_devtoken`,
      // Shortened so tests observe heartbeats and the clean end before the duration limit.
      AEP_SSE_HEARTBEAT_MS: String(TEST_SSE_HEARTBEAT_MS),
      AEP_SSE_MAX_DURATION_MS: String(TEST_SSE_MAX_DURATION_MS),
      AEP_CORS_ORIGINS: TEST_CORS_ORIGIN,
      AEP_SSE_SLOT_LEASE_MS: String(TEST_SSE_SLOT_LEASE_MS),
    },
  });
  project.provide('baseUrl', stack.baseUrl);
  project.provide('dynamoEndpoint', stack.dynamoEndpoint);
  project.provide('devToken', stack.devToken);
  project.provide('replayBuffer', TEST_REPLAY_BUFFER);
  project.provide('managementEndpoint', stack.managementEndpoint);
  project.provide('managementCredentials', stack.managementCredentials);
}

export async function teardown(): Promise<void> {
  await stack?.stop();
}
