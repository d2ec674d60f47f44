/** Where a tenant's bridge sinks are kept: public settings plus the sealed secrets of each. */
import type { SinkSettings } from './sink-settings.ts';

export interface StoredSink {
  settings: SinkSettings;
  /** `SecretSealer.seal` of the sink's {@link SinkSecrets} as JSON; absent when it has none. */
  sealedSecrets?: string;
}

/** What a sink needs that must never be listed or logged. */
export interface SinkSecrets {
  /** OTLP: the headers the tenant supplied (e.g. an API key). */
  headers?: Record<string, string>;
  /** Webhooks: the HMAC signing secret. */
  signingSecret?: string;
}

export interface BridgeSinksPort {
  /** The tenant's sinks in the order they were set; empty when it has none. */
  getSinks(tenant: string): Promise<StoredSink[]>;
  /** Replaces the tenant's whole set (an empty list removes it). */
  putSinks(tenant: string, sinks: readonly StoredSink[]): Promise<void>;
}
