/**
 * Sends frames to WebSocket clients through the API Gateway Management API. The endpoint is
 * the execute-api stage URL (never a CloudFront domain), or the local gateway's base URL.
 */
import { ApiGatewayManagementApiClient, DeleteConnectionCommand, PostToConnectionCommand } from '@aws-sdk/client-apigatewaymanagementapi';
import type { ConnectionPoster } from '../relay/ports/connection-poster.ts';

export interface ManagementPosterOptions {
  endpoint: string;
  region: string;
  credentials?: { accessKeyId: string; secretAccessKey: string };
  /** Attempts for throttled (429) and transient (5xx) answers before reporting `throttled`. */
  attempts?: number;
}

export function managementApiPoster(options: ManagementPosterOptions): ConnectionPoster {
  const client = new ApiGatewayManagementApiClient({
    endpoint: options.endpoint,
    region: options.region,
    // Retries are ours: a 429 here is a slow consumer, handled by the backpressure rule.
    maxAttempts: 1,
    ...(options.credentials === undefined ? {} : { credentials: options.credentials }),
  });
  const attempts = options.attempts ?? 3;
  return {
    async post(connectionId, text) {
      for (let attempt = 1; ; attempt += 1) {
        try {
          await client.send(new PostToConnectionCommand({ ConnectionId: connectionId, Data: Buffer.from(text, 'utf8') }));
          return 'sent';
        } catch (error) {
          const name = error instanceof Error ? error.name : '';
          if (name === 'GoneException') return 'gone';
          const status = (error as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode ?? 0;
          // A connection reset before any answer (e.g. a kept-alive socket the endpoint had just closed) is transient too.
          const code = (error as { code?: unknown }).code;
          const networkFailure = status === 0 && (name === 'TimeoutError' || code === 'ECONNRESET' || code === 'EPIPE');
          const retryable = name === 'LimitExceededException' || name === 'ThrottlingException' || status === 429 || status >= 500 || networkFailure;
          if (!retryable) throw error;
          if (attempt >= attempts) return 'throttled';
          await new Promise((resolve) => setTimeout(resolve, 20 * 2 ** attempt + Math.random() * 20));
        }
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
