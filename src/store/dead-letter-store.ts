/**
 * Bridge letters, one partition per tenant (`T#{tenant}#BRIDGEDLQ`), sorted by a ULID so a
 * listing is oldest first. A letter holds the stored texts of the events a sink has not
 * accepted; one that would pass DynamoDB's item size is split into several. A retry letter
 * carries `dueAt` (the sink-retry worker's next attempt) and `attempts`; a dead letter has no
 * `dueAt`. Letters expire after {@link DEAD_LETTER_RETENTION_DAYS} (the events table keeps
 * history no longer either).
 */
import { DeleteItemCommand, PutItemCommand, QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { Clock } from '../relay/ports/clock.ts';
import type { DeadLetter, DeadLettersPort, LetterOutcome } from '../relay/ports/dead-letters.ts';
import type { IdMinter } from '../relay/ports/ids.ts';
import { isConditionFailure, num, readNumber, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { tenantKeys } from './keys.ts';

export const DEAD_LETTER_RETENTION_DAYS = 14;
/** Event text per item, well under DynamoDB's 400 KB item limit. */
const MAX_LETTER_BYTES = 300_000;
/** Pages a filtered listing reads at most before it answers with what it found. */
const MAX_FILTERED_PAGES = 10;
const REASON_CHARACTERS = 500;

export class DeadLetterStore implements DeadLettersPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly tableName: string,
    private readonly now: Clock,
    private readonly mintId: IdMinter,
  ) {}

  async park(tenant: string, letter: Omit<DeadLetter, 'id'>): Promise<string[]> {
    const ids: string[] = [];
    for (const events of chunks(letter.events)) {
      const id = this.mintId();
      await this.client.send(
        new PutItemCommand({
          TableName: this.tableName,
          Item: {
            pk: str(tenantKeys.deadLetterPartition(tenant)),
            sk: str(id),
            sink: str(letter.sink),
            reason: str(letter.reason.slice(0, REASON_CHARACTERS)),
            failedAt: num(letter.failedAtMs),
            attempts: num(letter.attempts),
            ...(letter.dueAtMs === undefined ? {} : { dueAt: num(letter.dueAtMs) }),
            events: { L: events.map(str) },
            expiresAt: num(Math.floor(this.now() / 1000) + DEAD_LETTER_RETENTION_DAYS * 86_400),
          },
        }),
      );
      ids.push(id);
    }
    return ids;
  }

  list(tenant: string, limit: number): Promise<DeadLetter[]> {
    return this.query(tenant, limit, 'attribute_not_exists(dueAt)', {});
  }

  listRedrivable(tenant: string, limit: number, overdueBeforeMs: number): Promise<DeadLetter[]> {
    return this.query(tenant, limit, 'attribute_not_exists(dueAt) OR dueAt < :overdue', { ':overdue': num(overdueBeforeMs) });
  }

  async claim(tenant: string, id: string, nowMs: number, leaseUntilMs: number): Promise<DeadLetter | undefined> {
    try {
      const result = await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.key(tenant, id),
          UpdateExpression: 'SET dueAt = :lease',
          ConditionExpression: 'attribute_exists(pk) AND dueAt <= :now',
          ExpressionAttributeValues: { ':lease': num(leaseUntilMs), ':now': num(nowMs) },
          ReturnValues: 'ALL_NEW',
        }),
      );
      return result.Attributes === undefined ? undefined : letterOf(result.Attributes);
    } catch (error) {
      // Gone (delivered or expired), dead, or not due yet: another wake-up has it or will.
      if (isConditionFailure(error)) return undefined;
      throw error;
    }
  }

  async reschedule(tenant: string, id: string, outcome: LetterOutcome, dueAtMs: number): Promise<void> {
    await this.update(tenant, id, outcome, { set: 'dueAt = :due', values: { ':due': num(dueAtMs) } });
  }

  async bury(tenant: string, id: string, outcome: LetterOutcome): Promise<void> {
    await this.update(tenant, id, outcome, { remove: 'dueAt' });
  }

  async scheduleRedrive(tenant: string, id: string, dueAtMs: number, overdueBeforeMs: number): Promise<boolean> {
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.tableName,
          Key: this.key(tenant, id),
          UpdateExpression: 'SET dueAt = :due, attempts = :zero',
          ConditionExpression: 'attribute_exists(pk) AND (attribute_not_exists(dueAt) OR dueAt < :overdue)',
          ExpressionAttributeValues: { ':due': num(dueAtMs), ':zero': num(0), ':overdue': num(overdueBeforeMs) },
        }),
      );
      return true;
    } catch (error) {
      if (isConditionFailure(error)) return false;
      throw error;
    }
  }

  async remove(tenant: string, id: string): Promise<void> {
    await this.client.send(new DeleteItemCommand({ TableName: this.tableName, Key: this.key(tenant, id) }));
  }

  private key(tenant: string, id: string): Item {
    return { pk: str(tenantKeys.deadLetterPartition(tenant)), sk: str(id) };
  }

  /** Events, reason, attempts and failure time written together with the state change. */
  private async update(tenant: string, id: string, outcome: LetterOutcome, state: { set?: string; remove?: string; values?: Item }): Promise<void> {
    const assignments = ['events = :events', 'reason = :reason', 'attempts = :attempts', 'failedAt = :failedAt', ...(state.set === undefined ? [] : [state.set])];
    const expression = `SET ${assignments.join(', ')}${state.remove === undefined ? '' : ` REMOVE ${state.remove}`}`;
    await this.client.send(
      new UpdateItemCommand({
        TableName: this.tableName,
        Key: this.key(tenant, id),
        UpdateExpression: expression,
        ConditionExpression: 'attribute_exists(pk)',
        ExpressionAttributeValues: {
          ...state.values,
          ':events': { L: outcome.events.map(str) },
          ':reason': str(outcome.reason.slice(0, REASON_CHARACTERS)),
          ':attempts': num(outcome.attempts),
          ':failedAt': num(outcome.failedAtMs),
        },
      }),
    );
  }

  /** Oldest first through the filter, reading pages until `limit` letters or the page bound. */
  private async query(tenant: string, limit: number, filter: string, values: Item): Promise<DeadLetter[]> {
    const letters: DeadLetter[] = [];
    let start: Item | undefined;
    for (let page = 0; page < MAX_FILTERED_PAGES && letters.length < limit; page += 1) {
      const result = await this.client.send(
        new QueryCommand({
          TableName: this.tableName,
          KeyConditionExpression: 'pk = :pk',
          FilterExpression: filter,
          ExpressionAttributeValues: { ':pk': str(tenantKeys.deadLetterPartition(tenant)), ...values },
          Limit: limit,
          ConsistentRead: true,
          ...(start === undefined ? {} : { ExclusiveStartKey: start }),
        }),
      );
      letters.push(...(result.Items ?? []).map(letterOf));
      start = result.LastEvaluatedKey;
      if (start === undefined) break;
    }
    return letters.slice(0, limit);
  }
}

function letterOf(item: Item): DeadLetter {
  const dueAtMs = readNumber(item, 'dueAt');
  return {
    id: readString(item, 'sk') ?? '',
    sink: readString(item, 'sink') ?? '',
    reason: readString(item, 'reason') ?? '',
    failedAtMs: readNumber(item, 'failedAt') ?? 0,
    events: (item.events?.L ?? []).flatMap((value) => (value.S === undefined ? [] : [value.S])),
    // Letters stored before the retry lane had no count: they were dead after a full budget.
    attempts: readNumber(item, 'attempts') ?? 0,
    ...(dueAtMs === undefined ? {} : { dueAtMs }),
  };
}

function chunks(events: readonly string[]): string[][] {
  const out: string[][] = [];
  let current: string[] = [];
  let bytes = 0;
  for (const event of events) {
    const size = Buffer.byteLength(event, 'utf8');
    if (current.length > 0 && bytes + size > MAX_LETTER_BYTES) {
      out.push(current);
      current = [];
      bytes = 0;
    }
    current.push(event);
    bytes += size;
  }
  if (current.length > 0) out.push(current);
  return out;
}
