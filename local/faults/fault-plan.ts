/**
 * The fault plan of the local stack's test-only fault layer: what to break, how often, and
 * where. It arrives as JSON in `AEP_FAULTS` when the stack starts and can be replaced while it
 * runs (`PUT /__faults`, see `fault-layer.ts`). Without `AEP_FAULTS` none of this is loaded.
 *
 * ```json
 * {
 *   "seed": 7,
 *   "dynamo": [{ "commands": ["PutItemCommand"], "error": "InternalServerError", "rate": 0.2, "skip": 0, "count": 50, "phase": "before" }],
 *   "fanout": { "mode": "report", "count": 3, "every": 2, "minRecords": 2 },
 *   "connections": [{ "userAgent": "slow-consumer", "status": 429, "count": 2, "kind": "event" }]
 * }
 * ```
 */

/** The DynamoDB errors the layer can answer with, as the service sends them. */
export const DYNAMO_FAULT_ERRORS = {
  ProvisionedThroughputExceededException: 400,
  ThrottlingException: 400,
  InternalServerError: 500,
} as const;
export type DynamoFaultError = keyof typeof DYNAMO_FAULT_ERRORS;

/** The data-plane commands a rule without `commands` applies to (control-plane calls such as DescribeTable are never faulted by default). */
export const DATA_PLANE_COMMANDS = [
  'GetItemCommand',
  'PutItemCommand',
  'UpdateItemCommand',
  'DeleteItemCommand',
  'QueryCommand',
  'ScanCommand',
  'BatchGetItemCommand',
  'BatchWriteItemCommand',
  'TransactGetItemsCommand',
  'TransactWriteItemsCommand',
] as const;

export interface DynamoFaultRule {
  /** SDK command names (`PutItemCommand`, ...); default: every data-plane command. */
  commands?: string[];
  /** Table names (e.g. `aep-local-events`); default: every table. */
  tables?: string[];
  /** The functions whose calls it fails (`http`, `socket`, `stream`, `fanout`, ...); default: every one. */
  functions?: string[];
  /** The error the call gets; absent with `delayMs` alone (a slow store: the call then proceeds). */
  error?: DynamoFaultError;
  /** Holds the call this long first (an overloaded or stalled store), then fails it with `error` or sends it. */
  delayMs?: number;
  /** Probability that a matching call fails, 0..1 (default 1). */
  rate?: number;
  /** Matching calls that pass before the rule starts failing any (default 0). */
  skip?: number;
  /** Most faults the rule injects (default: no bound). */
  count?: number;
  /**
   * `before` (default): the call never reaches DynamoDB, so nothing is written. `after`: the call
   * runs and its answer is replaced by the error (a write happened, its acknowledgement was lost).
   */
  phase?: 'before' | 'after';
}

export interface FanoutFaultRule {
  /**
   * `report`: the fan-out handler runs on the whole batch, then the invocation reports the
   * batch's middle record in `batchItemFailures` (it and every later record are sent again).
   * `throw`: the handler runs on the first half of the batch, then the invocation throws (a
   * function error: the whole batch is retried, bisected).
   */
  mode: 'report' | 'throw';
  /** Faulty invocations in all (default 1). */
  count?: number;
  /** Fault every k-th eligible invocation (default 1: each one until `count` is used). */
  every?: number;
  /** Only batches of at least this many records are faulted, so the failure is mid-batch (default 2). */
  minRecords?: number;
}

export interface ConnectionFaultRule {
  /** The User-Agent of the WebSocket handshake whose connection the rule applies to. */
  userAgent: string;
  /** 410 GoneException, 429 LimitExceededException or 500 InternalServerErrorException. */
  status: 410 | 429 | 500;
  /** Posts the rule refuses (default: every one). */
  count?: number;
  /** Which posts: `event` (an AEP event), `frame` (a relay frame such as `closing`) or `any` (default). */
  kind?: 'event' | 'frame' | 'any';
}

export interface FaultPlan {
  /** Seed of the layer's random numbers, so a run can be replayed (default 1). */
  seed?: number;
  dynamo?: DynamoFaultRule[];
  fanout?: FanoutFaultRule;
  connections?: ConnectionFaultRule[];
}

/** Parses and checks a plan; throws with the reason when it is malformed. */
export function parseFaultPlan(text: string): FaultPlan {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new Error(`AEP_FAULTS is not JSON: ${JSON.stringify(text.slice(0, 200))}`);
  }
  const plan = asObject(value, 'the fault plan');
  const known = new Set(['seed', 'dynamo', 'fanout', 'connections']);
  for (const key of Object.keys(plan)) if (!known.has(key)) throw new Error(`unknown fault plan member ${JSON.stringify(key)}`);
  const result: FaultPlan = {};
  if (plan.seed !== undefined) result.seed = integer(plan.seed, 'seed', 0);
  if (plan.dynamo !== undefined) result.dynamo = asArray(plan.dynamo, 'dynamo').map((rule, index) => dynamoRule(rule, `dynamo[${index}]`));
  if (plan.fanout !== undefined) result.fanout = fanoutRule(plan.fanout);
  if (plan.connections !== undefined) result.connections = asArray(plan.connections, 'connections').map((rule, index) => connectionRule(rule, `connections[${index}]`));
  return result;
}

function dynamoRule(value: unknown, where: string): DynamoFaultRule {
  const rule = asObject(value, where);
  if (rule.error === undefined && rule.delayMs === undefined) throw new Error(`${where} needs an error, a delayMs, or both`);
  if (rule.error !== undefined && (typeof rule.error !== 'string' || !(rule.error in DYNAMO_FAULT_ERRORS))) throw new Error(`${where}.error must be one of ${Object.keys(DYNAMO_FAULT_ERRORS).join(', ')}`);
  const result: DynamoFaultRule = {};
  if (rule.error !== undefined) result.error = rule.error as DynamoFaultError;
  if (rule.delayMs !== undefined) result.delayMs = integer(rule.delayMs, `${where}.delayMs`, 0);
  if (rule.commands !== undefined) {
    result.commands = asArray(rule.commands, `${where}.commands`).map((command) => {
      if (typeof command !== 'string' || !command.endsWith('Command')) throw new Error(`${where}.commands holds SDK command names such as PutItemCommand`);
      return command;
    });
  }
  if (rule.tables !== undefined) {
    result.tables = asArray(rule.tables, `${where}.tables`).map((table) => {
      if (typeof table !== 'string' || table === '') throw new Error(`${where}.tables holds table names`);
      return table;
    });
  }
  if (rule.functions !== undefined) {
    result.functions = asArray(rule.functions, `${where}.functions`).map((name) => {
      if (typeof name !== 'string' || name === '') throw new Error(`${where}.functions holds function names such as http or fanout`);
      return name;
    });
  }
  if (rule.rate !== undefined) result.rate = fraction(rule.rate, `${where}.rate`);
  if (rule.skip !== undefined) result.skip = integer(rule.skip, `${where}.skip`, 0);
  if (rule.count !== undefined) result.count = integer(rule.count, `${where}.count`, 0);
  if (rule.phase !== undefined) {
    if (rule.phase !== 'before' && rule.phase !== 'after') throw new Error(`${where}.phase is before or after`);
    result.phase = rule.phase;
  }
  return result;
}

function fanoutRule(value: unknown): FanoutFaultRule {
  const rule = asObject(value, 'fanout');
  if (rule.mode !== 'report' && rule.mode !== 'throw') throw new Error('fanout.mode is report or throw');
  const result: FanoutFaultRule = { mode: rule.mode };
  if (rule.count !== undefined) result.count = integer(rule.count, 'fanout.count', 0);
  if (rule.every !== undefined) result.every = integer(rule.every, 'fanout.every', 1);
  if (rule.minRecords !== undefined) result.minRecords = integer(rule.minRecords, 'fanout.minRecords', 1);
  return result;
}

function connectionRule(value: unknown, where: string): ConnectionFaultRule {
  const rule = asObject(value, where);
  if (typeof rule.userAgent !== 'string' || rule.userAgent === '') throw new Error(`${where}.userAgent names the handshake's User-Agent`);
  if (rule.status !== 410 && rule.status !== 429 && rule.status !== 500) throw new Error(`${where}.status is 410, 429 or 500`);
  const result: ConnectionFaultRule = { userAgent: rule.userAgent, status: rule.status };
  if (rule.count !== undefined) result.count = integer(rule.count, `${where}.count`, 0);
  if (rule.kind !== undefined) {
    if (rule.kind !== 'event' && rule.kind !== 'frame' && rule.kind !== 'any') throw new Error(`${where}.kind is event, frame or any`);
    result.kind = rule.kind;
  }
  return result;
}

function asObject(value: unknown, where: string): Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) throw new Error(`${where} must be an object`);
  return value as Record<string, unknown>;
}

function asArray(value: unknown, where: string): unknown[] {
  if (!Array.isArray(value)) throw new Error(`${where} must be an array`);
  return value;
}

function integer(value: unknown, where: string, minimum: number): number {
  if (!Number.isSafeInteger(value) || (value as number) < minimum) throw new Error(`${where} must be an integer >= ${minimum}`);
  return value as number;
}

function fraction(value: unknown, where: string): number {
  if (typeof value !== 'number' || !(value >= 0 && value <= 1)) throw new Error(`${where} must be a number from 0 to 1`);
  return value;
}

/** A small seeded generator (mulberry32): the same seed gives the same fault sequence for the same call sequence. */
export function seededRandom(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}
