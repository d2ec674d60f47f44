/**
 * The local WebSocket API's open connections, by connection id: what the `@connections`
 * management endpoint posts to, describes and closes.
 */
import type { WebSocket } from 'ws';

/** One open connection, as API Gateway tracks it. */
export interface LocalConnection {
  connectionId: string;
  socket: WebSocket;
  /** Epoch milliseconds of the completed `$connect`. */
  connectedAt: number;
  /** Epoch milliseconds of the last message from the client (what resets the idle timeout). */
  lastActiveAt: number;
  sourceIp: string;
  userAgent: string;
}

/** Connections that completed `$connect` and have not closed yet. */
export class ConnectionRegistry {
  private readonly byId = new Map<string, LocalConnection>();

  add(connection: LocalConnection): void {
    this.byId.set(connection.connectionId, connection);
  }

  get(connectionId: string): LocalConnection | undefined {
    return this.byId.get(connectionId);
  }

  remove(connectionId: string): void {
    this.byId.delete(connectionId);
  }

  all(): LocalConnection[] {
    return [...this.byId.values()];
  }

  get size(): number {
    return this.byId.size;
  }
}
