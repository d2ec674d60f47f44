/**
 * Where an export reads history pages and session listings: the relay's `GET /history` and
 * `GET /sessions` (HTTP mode, a consume token) or, in direct mode, the same use cases on
 * DynamoDB with the operator's credentials. Both follow the relay's signed cursors, so both
 * read exactly what those routes serve.
 */
import type { Environment } from '../../../src/config/env-readers.ts';
import { readRelayConfig } from '../../../src/config/relay-config.ts';
import type { Principal } from '../../../src/auth/principal.ts';
import { RelayError } from '../../../src/errors/relay-error.ts';
import { listSessions } from '../../../src/relay/history/list-sessions.ts';
import { readHistory } from '../../../src/relay/history/read-history.ts';
import { createDynamoClient } from '../../../src/store/dynamo-client.ts';
import { EMULATOR_CREDENTIALS } from '../../../src/store/emulator-credentials.ts';
import { createRuntime } from '../../../functions/runtime/create-runtime.ts';
import type { ExportRequest } from './export-arguments.ts';

export interface HistorySource {
  /** One page: the event lines and the cursor of the next page, if any. Throws a RelayError when refused. */
  page(params: Readonly<Record<string, string>>): Promise<{ lines: string[]; next?: string }>;
  /** One page of the tenant's session listing: the session names and the cursor of the next page, if any. */
  sessionsPage(params: Readonly<Record<string, string>>): Promise<{ sessions: string[]; next?: string }>;
  close(): void;
}

export function historySource(request: ExportRequest, env: Environment): HistorySource {
  if (request.url !== undefined && request.token !== undefined) return httpHistorySource(request.url, request.token);
  return directSource(request.tenant as string, env);
}

/** `GET /history` pages of a relay, read with a consume token (also what `aep-relay attention` reads a session with). */
export function httpHistorySource(baseUrl: string, token: string): HistorySource {
  const get = async (route: string, params: Readonly<Record<string, string>>, accept: string) => {
    const url = `${baseUrl.replace(/\/+$/, '')}${route}?${new URLSearchParams(params).toString()}`;
    const response = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept } });
    const body = await response.text();
    if (response.status !== 200) throw refusalOf(response.status, body);
    return { response, body };
  };
  return {
    async page(params) {
      const { response, body } = await get('/history', params, 'application/x-ndjson');
      const link = response.headers.get('link');
      const target = link === null ? undefined : /^<([^>]*)>;\s*rel="next"$/.exec(link)?.[1];
      const next = target === undefined ? undefined : (new URL(target, baseUrl).searchParams.get('cursor') ?? undefined);
      return { lines: body.split('\n').filter((line) => line !== ''), ...(next === undefined ? {} : { next }) };
    },
    async sessionsPage(params) {
      const { body } = await get('/sessions', params, 'application/json');
      return sessionNamesOf(JSON.parse(body) as { sessions?: unknown; next?: unknown });
    },
    close: () => undefined,
  };
}

function refusalOf(status: number, body: string): RelayError {
  let code = `http-${status}`;
  let detail: string | undefined = body.slice(0, 200);
  try {
    const error = JSON.parse(body) as { error?: string; detail?: string };
    code = error.error ?? code;
    detail = error.detail;
  } catch {
    // Not the relay's JSON error (a proxy's page): keep the start of the body.
  }
  return new RelayError(code, status, detail);
}

function sessionNamesOf(page: { sessions?: unknown; next?: unknown }): { sessions: string[]; next?: string } {
  const listed = Array.isArray(page.sessions) ? (page.sessions as Array<{ session?: unknown }>) : [];
  const sessions = listed.map((summary) => summary.session).filter((session): session is string => typeof session === 'string');
  return typeof page.next === 'string' ? { sessions, next: page.next } : { sessions };
}

function directSource(tenant: string, env: Environment): HistorySource {
  const config = readRelayConfig(env);
  const endpoint = config.dynamoEndpoint;
  // DynamoDB Local takes any credentials, but the SDK signs requests and needs some.
  const credentials = endpoint !== undefined && (env.AWS_ACCESS_KEY_ID ?? '') === '' ? { credentials: EMULATOR_CREDENTIALS } : {};
  const dynamo = createDynamoClient({ region: config.region, ...(endpoint === undefined ? {} : { endpoint }), ...credentials });
  const runtime = createRuntime({ config, dynamo });
  // The operator reads the tenant's history as a consumer of that tenant would.
  const principal: Principal = { tenant, tokenId: 'direct-export', scopes: ['consume'] };
  return {
    page: (params) => readHistory(runtime, principal, params),
    sessionsPage: async (params) => sessionNamesOf(await listSessions(runtime, principal, params)),
    close: () => dynamo.destroy(),
  };
}
