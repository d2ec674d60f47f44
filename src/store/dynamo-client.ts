/**
 * Builds the DynamoDB client every store uses. A middleware asks each call for its consumed
 * capacity and records it in a `CapacityMeter`; the cost figures in BENCHMARKS.md and the
 * README come from this meter.
 */
import { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { CapacityMeter } from './capacity-meter.ts';

export interface DynamoClientOptions {
  region: string;
  /** Set for DynamoDB Local; absent in AWS. */
  endpoint?: string;
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
 * Test-only hook: when installed, it is applied to every client created afterwards. Only the
 * local stack installs one, and only when `AEP_FAULTS` is set (`local/faults/`), to inject
 * DynamoDB errors; nothing installs it in AWS or in a normal local run.
 */
export type DynamoClientDecorator = (client: DynamoDBClient) => void;
let clientDecorator: DynamoClientDecorator | undefined;

export function installDynamoClientDecorator(decorator: DynamoClientDecorator | undefined): void {
  clientDecorator = decorator;
}

export function createDynamoClient(options: DynamoClientOptions): DynamoDBClient {
  const client = new DynamoDBClient({
    region: options.region,
    maxAttempts: options.maxAttempts ?? 6,
    ...(options.endpoint === undefined ? {} : { endpoint: options.endpoint }),
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
  });
  const meter = options.meter;
  if (meter !== undefined) {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const kind = METERED_COMMANDS.get(String(context.commandName));
        if (kind !== undefined) (args.input as Record<string, unknown>).ReturnConsumedCapacity = 'TOTAL';
        const result = await next(args);
        if (kind !== undefined) {
          const units = totalUnits((result.output as { ConsumedCapacity?: unknown }).ConsumedCapacity);
          meter.record(kind === 'read' ? units : 0, kind === 'write' ? units : 0);
        }
        return result;
      },
      { step: 'initialize', name: 'aepCapacityMeter' },
    );
  }
  clientDecorator?.(client);
  return client;
}

/** On-demand tables report one total per table (and per index); the operation says whether it is reads or writes. */
function totalUnits(consumed: unknown): number {
  const entries = (Array.isArray(consumed) ? consumed : consumed === undefined ? [] : [consumed]) as Array<{ CapacityUnits?: number }>;
  return entries.reduce((sum, entry) => sum + (entry.CapacityUnits ?? 0), 0);
}
