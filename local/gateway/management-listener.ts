/**
 * The local `@connections` endpoint's own listener. In AWS the execute-api management endpoint
 * answers only IAM-signed requests from principals granted `execute-api:ManageConnections`;
 * locally it is served apart from the public port (which answers 404 for `/@connections/...`),
 * bound to loopback, and only to requests signed with the stack's management credentials.
 *
 * The local check is weaker than IAM and says so: it compares the access key id in the SigV4
 * `Authorization` header's `Credential=` with the stack's, over loopback; it does not verify
 * the signature itself. It keeps other local processes and browsers from closing or writing to
 * sockets by accident or by guessing a connection id, not a determined attacker on the machine.
 */
import { createServer } from 'node:http';
import type { IncomingMessage, Server, ServerResponse } from 'node:http';
import type { ConnectionsApi } from './connections-api.ts';

export const MANAGEMENT_PATH_PREFIX = '/@connections/';

export interface ManagementListener {
  /** `http://127.0.0.1:<port>`, the endpoint the handlers' management client is given. */
  endpoint: string;
  port: number;
  /** The live `@connections` handler; until it is set requests answer 503. */
  connections?: ConnectionsApi;
  close(): Promise<void>;
}

/** Starts the loopback-only management listener on a free port (or `port`). */
export async function startManagementListener(options: { accessKeyId: string; port?: number }): Promise<ManagementListener> {
  let server: Server | undefined;
  const listener: ManagementListener = {
    endpoint: '',
    port: 0,
    close: () =>
      new Promise<void>((resolve) => {
        if (server === undefined) return resolve();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
  server = createServer((request, response) => {
    const url = new URL(request.url ?? '/', 'http://127.0.0.1');
    const served = serve(listener, options.accessKeyId, request, response, url);
    served.catch(() => {
      if (!response.headersSent) response.writeHead(500, { 'content-type': 'application/json' });
      response.end(JSON.stringify({ message: 'Internal Server Error' }));
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, '127.0.0.1', () => resolve());
  });
  const address = server.address();
  listener.port = typeof address === 'object' && address !== null ? address.port : (options.port ?? 0);
  listener.endpoint = `http://127.0.0.1:${listener.port}`;
  return listener;
}

async function serve(listener: ManagementListener, accessKeyId: string, request: IncomingMessage, response: ServerResponse, url: URL): Promise<void> {
  if (!url.pathname.startsWith(MANAGEMENT_PATH_PREFIX)) return answer(response, 404, 'Not Found');
  // As API Gateway answers an unsigned or wrongly signed management call: 403 Forbidden.
  if (signingKeyIdOf(request.headers.authorization) !== accessKeyId) {
    request.resume();
    return answer(response, 403, 'Forbidden');
  }
  if (listener.connections === undefined) return answer(response, 503, 'Service Unavailable');
  return listener.connections(request, response, url);
}

/**
 * The access key id a SigV4 `Authorization` header names
 * (`AWS4-HMAC-SHA256 Credential=<key id>/<date>/<region>/<service>/aws4_request, ...`).
 */
export function signingKeyIdOf(authorization: string | undefined): string | undefined {
  if (authorization === undefined || !authorization.startsWith('AWS4-HMAC-SHA256 ')) return undefined;
  const credential = /(?:^|[\s,])Credential=([^/,\s]+)\//.exec(authorization.slice('AWS4-HMAC-SHA256'.length));
  return credential?.[1];
}

function answer(response: ServerResponse, statusCode: number, message: string): void {
  const payload = JSON.stringify({ message });
  response.writeHead(statusCode, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)) }).end(payload);
}
