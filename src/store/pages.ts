/** Bounded, resumable reads: page sizes and the opaque cursors that carry DynamoDB's `LastEvaluatedKey`. */
import type { Page } from '../relay/domain/stored-event.ts';
import type { Item } from './attribute-values.ts';

const MAX_PAGE = 1000;

export function clampLimit(limit: number): number {
  return Math.max(1, Math.min(MAX_PAGE, Math.floor(limit)));
}

export function pageOf<T>(items: T[], lastEvaluatedKey: Item | undefined): Page<T> {
  return lastEvaluatedKey === undefined ? { items } : { items, cursor: Buffer.from(JSON.stringify(lastEvaluatedKey)).toString('base64url') };
}

export function decodeCursor(cursor: string | undefined): Item | undefined {
  if (cursor === undefined) return undefined;
  return JSON.parse(Buffer.from(cursor, 'base64url').toString('utf8')) as Item;
}
