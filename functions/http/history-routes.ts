/**
 * The history routes: `GET /history` (NDJSON, one event per line) and `GET /sessions` (JSON).
 * Both page with a signed cursor named in a `Link: <...>; rel="next"` header (RFC 8288);
 * `GET /sessions` also carries it in its body as `next`.
 */
import type { APIGatewayProxyEventV2, APIGatewayProxyStructuredResultV2 } from 'aws-lambda';
import { jsonResponse } from '../../src/middleware/json-response.ts';
import { requirePrincipal } from '../../src/middleware/authentication.ts';
import type { AuthenticatedContext } from '../../src/middleware/authentication.ts';
import { listSessions } from '../../src/relay/history/list-sessions.ts';
import { nextLink } from '../../src/relay/history/query-params.ts';
import { readHistory } from '../../src/relay/history/read-history.ts';
import type { RelayRuntime } from '../../src/relay/runtime.ts';

type Response = APIGatewayProxyStructuredResultV2;

export async function getHistory(runtime: RelayRuntime, event: APIGatewayProxyEventV2, context: AuthenticatedContext): Promise<Response> {
  const params = event.queryStringParameters ?? {};
  const page = await readHistory(runtime, requirePrincipal(context), params);
  return {
    statusCode: 200,
    headers: {
      'content-type': 'application/x-ndjson',
      'cache-control': 'no-store',
      ...(page.next === undefined ? {} : { link: nextLink('/history', page.next, limitOf(params)) }),
    },
    body: page.lines.map((line) => `${line}\n`).join(''),
  };
}

export async function getSessions(runtime: RelayRuntime, event: APIGatewayProxyEventV2, context: AuthenticatedContext): Promise<Response> {
  const params = event.queryStringParameters ?? {};
  const page = await listSessions(runtime, requirePrincipal(context), params);
  return jsonResponse(200, page, page.next === undefined ? {} : { link: nextLink('/sessions', page.next, limitOf(params)) });
}

/** The page size asked for, carried into the next link (already validated by the use case). */
function limitOf(params: Readonly<Record<string, string | undefined>>): number | undefined {
  return params.limit === undefined ? undefined : Number(params.limit);
}
