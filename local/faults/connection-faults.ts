/**
 * `@connections` faults: wraps the local management endpoint so that posts to chosen
 * connections answer 410 (GoneException), 429 (LimitExceededException) or 500 the way API
 * Gateway does, with `x-amzn-errortype` so the SDK raises the same exception class.
 *
 * Connections are chosen by the User-Agent of their WebSocket handshake: a test names the
 * connection it wants refused without having to learn its connection id.
 */
import type { IncomingMessage } from 'node:http';
import { Readable } from 'node:stream';
import type { ConnectionRegistry } from '../gateway/connection-registry.ts';
import type { ConnectionsApi } from '../gateway/connections-api.ts';
import type { ConnectionFaultRule } from './fault-plan.ts';

export interface ConnectionStats {
  connectionId: string;
  /** POSTs toward the connection (retries included). */
  posts: number;
  /** POSTs refused by a rule. */
  refused: number;
  /** POSTs handed to the real endpoint. */
  passed: number;
  /** DeleteConnection calls toward it. */
  deletes: number;
}

const ERROR_TYPES = { 410: 'GoneException', 429: 'LimitExceededException', 500: 'InternalServerErrorException' } as const;

interface RuleState {
  rule: ConnectionFaultRule;
  refused: number;
}

export class ConnectionFaults {
  private rules: RuleState[] = [];
  private stats = new Map<string, ConnectionStats>();

  configure(rules: readonly ConnectionFaultRule[]): void {
    this.rules = rules.map((rule) => ({ rule, refused: 0 }));
    this.stats.clear();
  }

  /** Per User-Agent, for connections that were posted to or closed through the endpoint. */
  snapshot(): Record<string, ConnectionStats> {
    return Object.fromEntries([...this.stats].map(([userAgent, stats]) => [userAgent, { ...stats }]));
  }

  wrap(api: ConnectionsApi, registry: ConnectionRegistry): ConnectionsApi {
    return async (request, response, url) => {
      let connectionId = '';
      try {
        connectionId = decodeURIComponent(url.pathname.slice('/@connections/'.length));
      } catch {
        // The real endpoint answers a malformed id.
      }
      const userAgent = registry.get(connectionId)?.userAgent;
      if (userAgent === undefined || userAgent === '') return api(request, response, url);
      const stats = this.stats.get(userAgent) ?? { connectionId, posts: 0, refused: 0, passed: 0, deletes: 0 };
      this.stats.set(userAgent, stats);
      stats.connectionId = connectionId;
      if (request.method === 'DELETE') stats.deletes += 1;
      if (request.method !== 'POST') return api(request, response, url);
      stats.posts += 1;
      const candidates = this.rules.filter((state) => state.rule.userAgent === userAgent && (state.rule.count === undefined || state.refused < state.rule.count));
      if (candidates.length === 0) {
        stats.passed += 1;
        return api(request, response, url);
      }
      const body = await readAll(request);
      const kind = kindOf(body);
      const state = candidates.find((candidate) => (candidate.rule.kind ?? 'any') === 'any' || candidate.rule.kind === kind);
      if (state === undefined) {
        stats.passed += 1;
        return api(replayed(request, body), response, url);
      }
      state.refused += 1;
      stats.refused += 1;
      const status = state.rule.status;
      const payload = JSON.stringify({ message: `injected fault (AEP_FAULTS): ${ERROR_TYPES[status]}` });
      response
        .writeHead(status, { 'content-type': 'application/json', 'content-length': String(Buffer.byteLength(payload)), 'x-amzn-errortype': ERROR_TYPES[status] })
        .end(payload);
    };
  }
}

/** An AEP event has a dotted `type`; relay frames (`closing`, `error`, ...) do not. */
function kindOf(body: Buffer): 'event' | 'frame' {
  try {
    const value = JSON.parse(body.toString('utf8')) as { type?: unknown };
    return typeof value.type === 'string' && value.type.includes('.') ? 'event' : 'frame';
  } catch {
    return 'frame';
  }
}

async function readAll(request: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of request) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks);
}

/** The request again, its body already read: what the real endpoint reads (method, headers, body). */
function replayed(request: IncomingMessage, body: Buffer): IncomingMessage {
  return Object.assign(Readable.from([body]), { method: request.method, headers: request.headers, url: request.url }) as unknown as IncomingMessage;
}
