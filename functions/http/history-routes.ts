/**
 * The history routes: `GET /history` (NDJSON, one event per line) and `GET /sessions` (JSON).
 * Both page with a signed cursor named in a `Link: <...>; rel="next"` header (RFC 8288);
 * `GET /sessions` also carries it in its body as `next`.
 *
 * `GET /history` with `Accept: application/json` answers the same page as JSON instead,
 * `{"items":[{"raw":"<event text>","senderVerified":{"operator":"..."},"sentBy":{"subject":"...","name":"...","provider":"..."}}],"next":"..."}`: each
 * event's text as a string (byte for byte the NDJSON line) with the relay's findings beside
 * it. NDJSON lines carry the text alone, so an export stays what `POST /events` takes back.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { jsonResponse } from '../../src/middleware/json-response.ts';
import { requirePrincipal } from '../../src/middleware/authentication.ts';
import type { AuthenticatedContext } from '../../src/middleware/authentication.ts';
import { listSessions } from '../../src/relay/history/list-sessions.ts';
import { nextLink } from '../../src/relay/history/query-params.ts';
import { HISTORY_JSON_PAGE_MAX_BYTES, HISTORY_PAGE_MAX_BYTES, readHistory } from '../../src/relay/history/read-history.ts';
import type { RelayRuntime } from '../runtime/relay-runtime.ts';

type Response = APIGatewayProxyStructuredResultV2;

export async function getHistory(runtime: RelayRuntime, event: APIGatewayProxyEventV2, context: AuthenticatedContext): Promise<Response> {
  const params = event.queryStringParameters ?? {};
  const json = wantsJson(event.headers?.accept);
  const page = await readHistory(runtime, requirePrincipal(context), params, json ? HISTORY_JSON_PAGE_MAX_BYTES : HISTORY_PAGE_MAX_BYTES);
  const link: Record<string, string> = page.next === undefined ? {} : { link: nextLink('/history', page.next, limitOf(params)) };
  if (json) {
    const items = page.lines.map((raw, index) => {
      const senderVerified = page.verifiedSenders.get(index);
      const sentBy = page.signedInSenders.get(index);
      return { raw, ...(senderVerified === undefined ? {} : { senderVerified }), ...(sentBy === undefined ? {} : { sentBy }) };
    });
    return jsonResponse(200, page.next === undefined ? { items } : { items, next: page.next }, { ...link, vary: 'accept' });
  }
  return {
    statusCode: 200,
    headers: {
      'content-type': 'application/x-ndjson',
      'cache-control': 'no-store',
      vary: 'accept',
      ...link,
    },
    body: page.lines.map((line) => `${line}\n`).join(''),
  };
}

export async function getSessions(runtime: RelayRuntime, event: APIGatewayProxyEventV2, context: AuthenticatedContext): Promise<Response> {
  const params = event.queryStringParameters ?? {};
  const page = await listSessions(runtime, requirePrincipal(context), params);
  return jsonResponse(200, page, page.next === undefined ? {} : { link: nextLink('/sessions', page.next, limitOf(params)) });
}

/** The JSON page format is asked for by name (`Accept: application/json`); anything else gets NDJSON. */
function wantsJson(accept: string | undefined): boolean {
  return accept !== undefined && /(^|,)\s*application\/json\s*(;|,|$)/i.test(accept);
}

/** The page size asked for, carried into the next link (already validated by the use case). */
function limitOf(params: Readonly<Record<string, string | undefined>>): number | undefined {
  return params.limit === undefined ? undefined : Number(params.limit);
}
