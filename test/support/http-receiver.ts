/**
 * A local HTTP receiver standing in for a bridge sink (webhook, OTLP collector): records every
 * request it gets and answers with the status the test chooses for it.
 */
import { createServer } from 'node:http';
import type { IncomingHttpHeaders } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ReceivedRequest {
  method: string;
  path: string;
  headers: IncomingHttpHeaders;
  body: string;
  /** The status this request was answered with. */
  status: number;
}

export interface HttpReceiver {
  url: string;
  requests: ReceivedRequest[];
  /** Only the requests that were answered 2xx. */
  accepted(): ReceivedRequest[];
  /** Chooses the answer to each request from how many came before it (default: 200). */
  respondWith(status: (index: number) => number): void;
  waitFor(predicate: (requests: ReceivedRequest[]) => boolean, timeoutMs?: number): Promise<void>;
  close(): Promise<void>;
}

export async function startReceiver(): Promise<HttpReceiver> {
  const requests: ReceivedRequest[] = [];
  let statusOf: (index: number) => number = () => 200;
  const server = createServer((request, response) => {
    const chunks: Buffer[] = [];
    request.on('data', (chunk: Buffer) => chunks.push(chunk));
    request.on('end', () => {
      const status = statusOf(requests.length);
      requests.push({ method: request.method ?? '', path: request.url ?? '', headers: request.headers, body: Buffer.concat(chunks).toString('utf8'), status });
      response.writeHead(status, { 'content-type': 'application/json' }).end(status < 300 ? '{}' : '{"error":"receiver down"}');
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    requests,
    accepted: () => requests.filter((request) => request.status < 300),
    respondWith: (status) => {
      statusOf = status;
    },
    waitFor: async (predicate, timeoutMs = 15_000) => {
      const deadline = Date.now() + timeoutMs;
      while (!predicate(requests)) {
        if (Date.now() > deadline) throw new Error(`receiver: condition not met within ${timeoutMs} ms; got ${requests.length} requests`);
        await new Promise((resolve) => setTimeout(resolve, 50));
      }
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
