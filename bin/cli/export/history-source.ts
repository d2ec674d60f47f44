/**
 * Where an export reads history pages: the relay's `GET /history` (HTTP mode, a consume
 * token) or, in direct mode, the same use case on DynamoDB with the operator's credentials.
 * Both follow the relay's signed cursor, so both read exactly what `GET /history` serves.
 */
import type { Environment } from '../../../src/config/env-readers.ts';
import { readRelayConfig } from '../../../src/config/relay-config.ts';
import type { Principal } from '../../../src/auth/principal.ts';
import { RelayError } from '../../../src/errors/relay-error.ts';
import { readHistory } from '../../../src/relay/history/read-history.ts';
import { createDynamoClient } from '../../../src/store/dynamo-client.ts';
import { EMULATOR_CREDENTIALS } from '../../../src/store/emulator-credentials.ts';
import { createRuntime } from '../../../functions/runtime/create-runtime.ts';
import type { ExportRequest } from './export-arguments.ts';

export interface HistorySource {
  /** One page: the event lines and the cursor of the next page, if any. Throws a RelayError when refused. */
  page(params: Readonly<Record<string, string>>): Promise<{ lines: string[]; next?: string }>;
  close(): void;
}

export function historySource(request: ExportRequest, env: Environment): HistorySource {
  if (request.url !== undefined && request.token !== undefined) return httpHistorySource(request.url, request.token);
  return directSource(request.tenant as string, env);
}

/** `GET /history` pages of a relay, read with a consume token (also what `aep-relay attention` reads a session with). */
export function httpHistorySource(baseUrl: string, token: string): HistorySource {
  return {
    async page(params) {
      const url = `${baseUrl.replace(/\/+$/, '')}/history?${new URLSearchParams(params).toString()}`;
      const response = await fetch(url, { headers: { authorization: `Bearer ${token}`, accept: 'application/x-ndjson' } });
      const body = await response.text();
      if (response.status !== 200) {
        let code = `http-${response.status}`;
        let detail: string | undefined = body.slice(0, 200);
        try {
          const error = JSON.parse(body) as { error?: string; detail?: string };
          code = error.error ?? code;
          detail = error.detail;
        } catch {
          // Not the relay's JSON error (a proxy's page): keep the start of the body.
        }
        throw new RelayError(code, response.status, detail);
      }
      const link = response.headers.get('link');
      const target = link === null ? undefined : /^<([^>]*)>;\s*rel="next"$/.exec(link)?.[1];
      const next = target === undefined ? undefined : (new URL(target, baseUrl).searchParams.get('cursor') ?? undefined);
      return { lines: body.split('\n').filter((line) => line !== ''), ...(next === undefined ? {} : { next }) };
    },
    close: () => undefined,
  };
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
    close: () => dynamo.destroy(),
  };
}
