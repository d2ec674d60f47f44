/**
 * Opaque cursors for paged reads (`GET /history`, `GET /sessions`): the query the page
 * answered plus the store's continuation, bound to the tenant and signed with the
 * deployment's cursor key (HMAC-SHA-256). A cursor that was altered, or was not minted by
 * this deployment, fails the signature (400 `invalid-cursor`); a genuine cursor of another
 * tenant is refused (403), so a cursor never reads across tenants.
 */
import { createHmac, timingSafeEqual } from 'node:crypto';
import { badRequest, forbidden } from '../../errors/relay-error.ts';

/** What a cursor carries. `query` is the normalized request it continues. */
export interface CursorContent<Query> {
  /** Which listing it belongs to, so a sessions cursor cannot be replayed as a history cursor. */
  kind: 'history' | 'sessions';
  tenant: string;
  query: Query;
  /** The store's continuation. */
  next: string;
}

const VERSION = 1;

export function signCursor<Query>(key: Uint8Array, content: CursorContent<Query>): string {
  const body = Buffer.from(JSON.stringify({ v: VERSION, ...content }), 'utf8').toString('base64url');
  return `${body}.${mac(key, body)}`;
}

/** The cursor's content, or throws the refusal: 400 when malformed or tampered, 403 when another tenant's. */
export function openCursor<Query>(key: Uint8Array, cursor: string, expected: { kind: CursorContent<Query>['kind']; tenant: string }): CursorContent<Query> {
  const [body, signature, extra] = cursor.split('.');
  if (body === undefined || signature === undefined || extra !== undefined) throw invalidCursor('it is not a cursor this relay issued');
  const wanted = Buffer.from(mac(key, body), 'base64url');
  const given = Buffer.from(signature, 'base64url');
  if (given.length !== wanted.length || !timingSafeEqual(given, wanted)) throw invalidCursor('its signature does not match (it was altered or not issued here)');
  let content: unknown;
  try {
    content = JSON.parse(Buffer.from(body, 'base64url').toString('utf8'));
  } catch {
    throw invalidCursor('it is not a cursor this relay issued');
  }
  const record = content as Partial<CursorContent<Query>> & { v?: unknown };
  if (record.v !== VERSION || typeof record.tenant !== 'string' || typeof record.next !== 'string' || record.query === undefined) throw invalidCursor('it is not a cursor this relay issued');
  if (record.kind !== expected.kind) throw invalidCursor(`it continues a ${String(record.kind)} listing, not ${expected.kind}`);
  if (record.tenant !== expected.tenant) throw forbidden('this cursor belongs to another tenant');
  return { kind: record.kind, tenant: record.tenant, query: record.query, next: record.next };
}

function mac(key: Uint8Array, body: string): string {
  return createHmac('sha256', key).update(body, 'utf8').digest('base64url');
}

function invalidCursor(why: string) {
  return badRequest('invalid-cursor', `the cursor is refused: ${why}`);
}
