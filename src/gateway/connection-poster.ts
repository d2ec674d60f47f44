/**
 * Sends frames to WebSocket clients through the API Gateway Management API. The endpoint is
 * the execute-api stage URL (never a CloudFront domain), or the local gateway's base URL.
 *
 * `post` (PostToConnection, one call per delivery) is a request we sign ourselves (`sigv4.ts`)
 * over a keep-alive agent with as many sockets as fan-out keeps posts in flight. Measured on
 * the local stack, the SDK client spent about 0.5 ms of CPU per call in its middleware, more
 * than everything else in a delivery together (the receiving gateway and client included); on
 * a Lambda function's share of a vCPU that caps one invocation at a few hundred posts a
 * second. Credentials still come from the SDK client's provider chain. `close`
 * (DeleteConnection) and `isOpen` (GetConnection), both rare, go through the SDK client unchanged.
 */
import { Agent as HttpAgent, request as httpRequest } from 'node:http';
import { Agent as HttpsAgent, request as httpsRequest } from 'node:https';
import { ApiGatewayManagementApiClient, DeleteConnectionCommand, GetConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import type { ConnectionPoster } from '../relay/ports/connection-poster.ts';
import { signRequest } from './sigv4.ts';

export interface ManagementPosterOptions {
  endpoint: string;
  region: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Attempts for throttled (429) and transient (5xx, reset, timeout) answers before reporting `throttled`. */
  attempts?: number;
  /** Sockets kept open to the endpoint: at least as many as posts in flight (fan-out's concurrency). */
  maxSockets?: number;
  /** Time limit for one answer (ms); past it the attempt counts as transient. */
  timeoutMs?: number;
}

/** An answer other than success, gone or a retryable failure, named as the SDK would name it. */
export class PostRefusedError extends Error {
  constructor(
    readonly status: number,
    errorType: string,
  ) {
    super(`PostToConnection answered ${status}${errorType === '' ? '' : ` (${errorType})`}`);
    this.name = errorType === '' ? 'PostRefusedError' : errorType;
  }
}

export function managementApiPoster(options: ManagementPosterOptions): ConnectionPoster {
  const timeoutMs = options.timeoutMs ?? 10_000;
  // GetConnection and DeleteConnection: bounded like every post, and retried on a transient
  // failure (a close that hangs or fails leaves a client whose frame went unanswered in silence).
  const client = new ApiGatewayManagementApiClient({
    endpoint: options.endpoint,
    region: options.region,
    maxAttempts: 3,
    requestHandler: { connectionTimeout: 2_000, requestTimeout: timeoutMs },
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
  });
  const base = new URL(options.endpoint);
  const secure = base.protocol === 'https:';
  const agentOptions = { keepAlive: true, maxSockets: options.maxSockets ?? 64 };
  const agent = secure ? new HttpsAgent(agentOptions) : new HttpAgent(agentOptions);
  const request = secure ? httpsRequest : httpRequest;
  // The stage path (`/prod`), when the endpoint has one, comes before `/@connections`.
  const basePath = base.pathname.replace(/\/+$/, '');
  const defaultAttempts = options.attempts ?? 3;

  /** One attempt: the HTTP status, or 0 for a transient failure before any answer. */
  const postOnce = async (connectionId: string, body: Buffer): Promise<{ status: number; errorType: string }> => {
    const path = `${basePath}/@connections/${encodeURIComponent(connectionId)}`;
    const credentials = await client.config.credentials();
    const headers = signRequest({ method: 'POST', host: base.host, path, body, contentType: 'application/json', region: options.region, service: 'execute-api', credentials, now: new Date() });
    return new Promise((resolve) => {
      const outgoing = request({ agent, hostname: base.hostname, port: base.port, method: 'POST', path, headers: { ...headers, 'content-length': String(body.length) }, timeout: timeoutMs }, (response) => {
        // `x-amzn-errortype` names the exception (`GoneException`, `LimitExceededException:...`).
        const errorType = String(response.headers['x-amzn-errortype'] ?? '').split(':')[0] ?? '';
        response.resume();
        response.on('end', () => resolve({ status: response.statusCode ?? 0, errorType }));
        response.on('error', () => resolve({ status: 0, errorType: '' }));
      });
      outgoing.on('timeout', () => outgoing.destroy());
      // A reset, or a kept-alive socket the endpoint had just closed: transient, retried.
      outgoing.on('error', () => resolve({ status: 0, errorType: '' }));
      outgoing.end(body);
    });
  };

  return {
    async post(connectionId, text, postOptions) {
      const attempts = Math.max(1, postOptions?.attempts ?? defaultAttempts);
      const body = Buffer.from(text, 'utf8');
      for (let attempt = 1; ; attempt += 1) {
        const { status, errorType } = await postOnce(connectionId, body);
        if (status >= 200 && status < 300) return 'sent';
        if (status === 410) return 'gone';
        // 429 is a consumer that cannot keep up (or a rate limit): the backpressure rule's case.
        const retryable = status === 0 || status === 429 || status >= 500;
        if (!retryable) throw new PostRefusedError(status, errorType);
        if (attempt >= attempts) return 'throttled';
        await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt + Math.random() * 20));
      }
    },
    async isOpen(connectionId) {
      try {
        await client.send(new GetConnectionCommand({ ConnectionId: connectionId }));
        return true;
      } catch (error) {
        if (error instanceof Error && error.name === 'GoneException') return false;
        throw error;
      }
    },
    async close(connectionId) {
      try {
        await client.send(new DeleteConnectionCommand({ ConnectionId: connectionId }));
      } catch (error) {
        if (!(error instanceof Error && error.name === 'GoneException')) throw error;
      }
    },
  };
}
