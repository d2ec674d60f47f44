/**
 * Builds the DynamoDB client the stores take by injection. Only when given a `CapacityMeter`
 * does it ask each call for its consumed capacity (a middleware records it in the meter; the
 * cost figures in BENCHMARKS.md and docs/ come from it); production passes none.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { currentDeadline, DeadlinePassed } from '../relay/ports/work-deadline.ts';
import type { CapacityMeter } from './capacity-meter.ts';

export interface DynamoClientOptions {
  region: string;
  /** Set for DynamoDB Local; absent in AWS. */
  endpoint?: string;
  /** Counts the request units every call reports; absent in production, which asks for none. */
  meter?: CapacityMeter;
  /** SDK retry attempts for throttling and transient errors (exponential backoff with jitter). */
  maxAttempts?: number;
  /** Fixed credentials (DynamoDB Local accepts any); absent in AWS, where the role's are used. */
  credentials?: { accessKeyId: string; secretAccessKey: string };
}

/** Commands whose input accepts `ReturnConsumedCapacity`, by the kind of units they consume. */
const METERED_COMMANDS: ReadonlyMap<string, 'read' | 'write'> = new Map([
  ['PutItemCommand', 'write'], ['UpdateItemCommand', 'write'], ['DeleteItemCommand', 'write'],
  ['BatchWriteItemCommand', 'write'], ['TransactWriteItemsCommand', 'write'],
  ['GetItemCommand', 'read'], ['QueryCommand', 'read'], ['ScanCommand', 'read'],
  ['BatchGetItemCommand', 'read'], ['TransactGetItemsCommand', 'read'],
]);

/**
 * How long one attempt of a DynamoDB call may take before the SDK abandons it and retries: a
 * request that hangs (a stalled connection) must not hold a frame past API Gateway's
 * integration timeout, nor a fan-out batch past its own.
 */
export const DYNAMO_REQUEST_TIMEOUT_MS = 8_000;

export function createDynamoClient(options: DynamoClientOptions): DynamoDBClient {
  const client = new DynamoDBClient({
    region: options.region,
    maxAttempts: options.maxAttempts ?? 6,
    requestHandler: { connectionTimeout: 2_000, requestTimeout: DYNAMO_REQUEST_TIMEOUT_MS },
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
  });
  // Each attempt (inside the SDK's retries) of a call made for work with a deadline
  // (`work-deadline.ts`) fails once the deadline has passed, and is not retried: work its
  // caller already gave up on stops at its next call instead of queueing behind the overload.
  client.middlewareStack.add(
    (next) => async (args) => {
      const deadlineAtMs = currentDeadline();
      if (deadlineAtMs === undefined) return next(args);
      const remainingMs = deadlineAtMs - Date.now();
      if (remainingMs <= 0) throw new DeadlinePassed(deadlineAtMs);
      let timer: ReturnType<typeof setTimeout> | undefined;
      const passed = new Promise<never>((_resolve, reject) => {
        timer = setTimeout(() => reject(new DeadlinePassed(deadlineAtMs)), remainingMs);
      });
      try {
        return await Promise.race([next(args), passed]);
      } finally {
        clearTimeout(timer);
      }
    },
    { step: 'finalizeRequest', priority: 'low', name: 'aepWorkDeadline' },
  );
  const meter = options.meter;
  if (meter !== undefined) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const kind = METERED_COMMANDS.get(String(context.commandName));
        if (kind !== undefined) (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
        let result;
        try {
          result = await next(args);
        } catch (error) {
          // A refused conditional write reports no capacity, yet DynamoDB bills it (at least 1 WRU).
          if (kind !== undefined) meter.record(kind === 'write' && (error as { name?: unknown }).name === 'ConditionalCheckFailedException' ? { kind: 'refused-write', billedWriteUnits: 1 } : { kind: 'failed' });
          throw error;
        }
        if (kind !== undefined) {
          const units = totalUnits((result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity);
          // A read that finds nothing reports 0 here (DynamoDB Local), yet is billed a minimum.
          if (kind === 'read' && units === 0) meter.record({ kind: 'empty-read', billedReadUnits: (args.input as { ConsistentRead?: boolean }).ConsistentRead === true ? 1 : 0.5 });
          else meter.record(kind === 'read' ? units : 0, kind === 'write' ? units : 0);
        }
        return result;
      },
      { step: 'initialize', name: 'aepCapacityMeter' },
    );
  }
  return client;
}

/** On-demand tables report one total per table (and per index); the operation says whether it is reads or writes. */
function totalUnits(consumed: unknown): number {
  const entries = (Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed]) as Array<{ CapacityUnits?: number }>;
  return entries.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
}
