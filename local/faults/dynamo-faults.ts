/**
 * DynamoDB faults: a middleware on every relay DynamoDB client that answers a call with a
 * throttling or server error instead of (phase `before`) or after (phase `after`) sending it,
 * or holds it first (`delayMs`: a slow, overloaded store).
 *
 * The error is injected as an HTTP response the way DynamoDB sends it (status, and a JSON body
 * whose `__type` names the exception), below the SDK's retry middleware and above its
 * deserializer: the SDK builds the real exception class, classifies it (throttling or
 * transient) and retries it with its own backoff and retry quota, exactly as it would in AWS.
 */
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import { DATA_PLANE_COMMANDS, DYNAMO_FAULT_ERRORS } from './fault-plan.ts';
import type { DynamoFaultRule } from './fault-plan.ts';

export interface DynamoFaultStats {
  /** Calls seen, per command (every attempt, retries included). */
  calls: Record<string, number>;
  /** Faults injected, per command. */
  injected: Record<string, number>;
}

interface RuleState {
  rule: DynamoFaultRule;
  commands: ReadonlySet<string>;
  tables?: ReadonlySet<string>;
  seen: number;
  injected: number;
}

export class DynamoFaults {
  private rules: RuleState[] = [];
  private stats: DynamoFaultStats = { calls: {}, injected: {} };

  constructor(private readonly random: () => number) {}

  /** Replaces the rules (their counters start over) and clears the statistics. */
  configure(rules: readonly DynamoFaultRule[]): void {
    this.rules = rules.map((rule) => ({
      rule,
      commands: new Set(rule.commands ?? DATA_PLANE_COMMANDS),
      ...(rule.tables === undefined ? {} : { tables: new Set(rule.tables) }),
      seen: 0,
      injected: 0,
    }));
    this.stats = { calls: {}, injected: {} };
  }

  snapshot(): DynamoFaultStats {
    return structuredClone(this.stats);
  }

  /** The error this attempt of `command` gets, if any (first rule that fires wins). */
  private decide(command: string, tables: readonly string[], functionName: string | undefined): { rule: DynamoFaultRule } | undefined {
    this.stats.calls[command] = (this.stats.calls[command] ?? 0) + 1;
    for (const state of this.rules) {
      if (!state.commands.has(command)) continue;
      if (state.rule.functions !== undefined && (functionName === undefined || !state.rule.functions.includes(functionName))) continue;
      const ruleTables = state.tables;
      if (ruleTables !== undefined && !tables.some((table) => ruleTables.has(table))) continue;
      state.seen += 1;
      if (state.seen <= (state.rule.skip ?? 0)) continue;
      if (state.rule.count !== undefined && state.injected >= state.rule.count) continue;
      if (this.random() >= (state.rule.rate ?? 1)) continue;
      state.injected += 1;
      this.stats.injected[command] = (this.stats.injected[command] ?? 0) + 1;
      return { rule: state.rule };
    }
    return undefined;
  }

  /** Adds the fault middleware to a client (the local stack applies it to each function's client). */
  decorate(client: DynamoDBClient, functionName?: string): void {
    client.middlewareStack.add(
      (next, context) => async (args) => {
        const fault = this.decide(String(context.commandName), tablesOf(args.input), functionName);
        if (fault === undefined) return next(args);
        if (fault.rule.delayMs !== undefined) await new Promise((resolve) => setTimeout(resolve, fault.rule.delayMs));
        if (fault.rule.error === undefined) return next(args);
        if (fault.rule.phase === 'after') await next(args);
        return { output: undefined as never, response: errorResponse(fault.rule.error) };
      },
      // Inside the retry loop (finalizeRequest, priority high) and below the deserializer, which turns the response into the exception.
      { step: 'deserialize', priority: 'low', name: 'aepFaultInjection' },
    );
  }
}

/** The tables a command's input names (`TableName`, or the keys of `RequestItems` for batch calls). */
function tablesOf(input: unknown): string[] {
  const { TableName, RequestItems } = (input ?? {}) as { TableName?: unknown; RequestItems?: unknown };
  if (typeof TableName === 'string') return [TableName];
  if (typeof RequestItems === 'object' && RequestItems !== null) return Object.keys(RequestItems);
  return [];
}

function errorResponse(error: keyof typeof DYNAMO_FAULT_ERRORS): { statusCode: number; reason?: string; headers: Record<string, string>; body: Uint8Array } {
  const body = Buffer.from(JSON.stringify({ __type: `com.amazonaws.dynamodb.v20120810#${error}`, message: `injected fault (AEP_FAULTS): ${error}` }), 'utf8');
  return {
    statusCode: DYNAMO_FAULT_ERRORS[error],
    headers: { 'content-type': 'application/x-amz-json-1.0', 'content-length': String(body.length), 'x-amzn-requestid': `fault-${Date.now()}` },
    body,
  };
}
