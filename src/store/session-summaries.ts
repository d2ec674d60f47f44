/**
 * Session summaries for `GET /sessions`, kept on the tenant's session registry item
 * (`session-registry.ts`: pk `T#{tenant}#SESSIONS`, sk = session) and listed newest activity
 * first through the sparse `byActivity` global index.
 *
 * Written by fan-out from the events table's stream, one update per session per stream batch
 * (never on the ingest path).
 * An update is conditional on the batch's watermark (its newest stream sequence number,
 * zero-padded so string order is numeric order) being newer than the one recorded: a batch
 * Lambda retries, whole or bisected, is not counted twice.
 *
 * A listing only: session order lives in the order states (`session-order-store.ts`).
 *
 * Reads of a global index are eventually consistent (DynamoDB offers nothing stronger there),
 * so a listing may lag the stream by the index's propagation delay, on top of fan-out's.
 */
import { QueryCommand, UpdateItemCommand } from '@aws-sdk/client-dynamodb';
import type { DynamoDBClient } from '@aws-sdk/client-dynamodb';
import type { SessionActivity, SessionFilter, SessionSummary } from '../relay/domain/history.ts';
import type { Page } from '../relay/domain/stored-event.ts';
import type { Clock } from '../relay/ports/clock.ts';
import type { SessionSummariesPort } from '../relay/ports/session-summaries.ts';
import { isConditionFailure, num, readNumber, readString, str } from './attribute-values.ts';
import type { Item } from './attribute-values.ts';
import { eventKeys } from './keys.ts';
import { clampLimit, decodeCursor, pageOf } from './pages.ts';
import { ACTIVITY_INDEX } from './table-definitions.ts';

const TIME_DIGITS = 15;

export interface SessionSummaryStoreOptions {
  tableName: string;
  now: Clock;
}

export class SessionSummaryStore implements SessionSummariesPort {
  constructor(
    private readonly client: DynamoDBClient,
    private readonly options: SessionSummaryStoreOptions,
  ) {}

  async fold(activity: SessionActivity): Promise<void> {
    const partition = eventKeys.sessionRegistryPartition(activity.tenant);
    const sets = [
      'kind = :kind',
      '#session = :session',
      '#agent = if_not_exists(#agent, :agent)',
      'firstMs = if_not_exists(firstMs, :first)',
      'lastMs = :last',
      'watermark = :watermark',
      'activityPk = :activityPk',
      'activity = :activity',
      'visibleUntil = :visibleUntil',
      // The item's expiry is the registry's (`session-registry.ts`), which only ever moves it later.
      'expiresAt = if_not_exists(expiresAt, :visibleUntil)',
    ];
    const values: Item = {
      ':kind': str('session'),
      ':session': str(activity.session),
      ':agent': str(activity.agent),
      ':first': num(activity.firstEventMs),
      ':last': num(activity.lastEventMs),
      ':watermark': str(activity.watermark),
      ':activityPk': str(partition),
      ':activity': str(activityKey(activity.lastEventMs, activity.session)),
      ':visibleUntil': num(activity.visibleUntilSec),
      ':count': num(activity.eventCount),
    };
    if (activity.lastPosition !== undefined) {
      sets.push('lastEpoch = :epoch', 'lastSeq = :seq');
      values[':epoch'] = num(activity.lastPosition.epoch);
      values[':seq'] = num(activity.lastPosition.seq);
    }
    if (activity.ended) {
      sets.push('ended = :ended');
      values[':ended'] = { BOOL: true };
    }
    const condition = 'attribute_not_exists(watermark) OR watermark < :watermark';
    try {
      await this.client.send(
        new UpdateItemCommand({
          TableName: this.options.tableName,
          Key: { pk: str(partition), sk: str(activity.session) },
          UpdateExpression: `SET ${sets.join(', ')} ADD eventCount :count`,
          ConditionExpression: condition,
          // `agent` is a DynamoDB reserved word; `session` is aliased the same way for safety.
          ExpressionAttributeNames: { '#session': 'session', '#agent': 'agent' },
          ExpressionAttributeValues: values,
        }),
      );
    } catch (error) {
      // Folded before (a retried batch): nothing to count again.
      if (!isConditionFailure(error)) throw error;
    }
  }

  async listSummaries(tenant: string, filter: SessionFilter, limit: number, cursor?: string): Promise<Page<SessionSummary>> {
    const values: Item = { ':pk': str(eventKeys.sessionRegistryPartition(tenant)), ':now': num(Math.floor(this.options.now() / 1000)) };
    let keyCondition = 'activityPk = :pk';
    // Activity keys start with the last event time, so "active since" is a key range.
    if (filter.sinceMs !== undefined) {
      keyCondition += ' AND activity >= :since';
      values[':since'] = str(padTime(filter.sinceMs));
    }
    const filters = ['visibleUntil > :now'];
    if (filter.untilMs !== undefined) {
      filters.push('firstMs < :until');
      values[':until'] = num(filter.untilMs);
    }
    if (filter.agent !== undefined) {
      filters.push('#agent = :agent');
      values[':agent'] = str(filter.agent);
    }
    if (filter.prefix !== undefined) {
      filters.push('begins_with(#session, :prefix)');
      values[':prefix'] = str(filter.prefix);
    }
    const page = await this.client.send(
      new QueryCommand({
        TableName: this.options.tableName,
        IndexName: ACTIVITY_INDEX,
        KeyConditionExpression: keyCondition,
        FilterExpression: filters.join(' AND '),
        // DynamoDB refuses names an expression does not use.
        ...(names(filter) === undefined ? {} : { ExpressionAttributeNames: names(filter) }),
        ExpressionAttributeValues: values,
        ScanIndexForward: false,
        Limit: clampLimit(limit),
        ExclusiveStartKey: decodeCursor(cursor),
      }),
    );
    return pageOf((page.Items ?? []).map(summaryOf), page.LastEvaluatedKey);
  }
}

function names(filter: SessionFilter): Record<string, string> | undefined {
  const used: Record<string, string> = {
    ...(filter.prefix === undefined ? {} : { '#session': 'session' }),
    ...(filter.agent === undefined ? {} : { '#agent': 'agent' }),
  };
  return Object.keys(used).length === 0 ? undefined : used;
}

function padTime(ms: number): string {
  return Math.max(0, Math.floor(ms)).toString().padStart(TIME_DIGITS, '0');
}

/** Index sort key: last activity time, then the session (unique within the tenant). */
function activityKey(lastEventMs: number, session: string): string {
  return `${padTime(lastEventMs)}#${session}`;
}

function summaryOf(item: Item): SessionSummary {
  const epoch = readNumber(item, 'lastEpoch');
  const seq = readNumber(item, 'lastSeq');
  return {
    session: readString(item, 'session') ?? readString(item, 'sk') ?? '',
    agent: readString(item, 'agent') ?? '',
    firstEventMs: readNumber(item, 'firstMs') ?? 0,
    lastEventMs: readNumber(item, 'lastMs') ?? 0,
    ...(epoch === undefined || seq === undefined ? {} : { lastPosition: { epoch, seq } }),
    eventCount: readNumber(item, 'eventCount') ?? 0,
    ended: item.ended !== undefined && 'BOOL' in item.ended && item.ended.BOOL === true,
  };
}
