/**
 * Administration of a tenant's bridges (`/admin/bridges`): its sinks and its dead letters.
 * Secrets go one way: OTLP headers and webhook signing secrets are sealed before storage and
 * never listed back; a webhook's signing secret is shown once, in the answer that minted it.
 */
import { parseSinkSet } from '../relay/bridges/sink-settings.ts';
import type { SinkSettings } from '../relay/bridges/sink-settings.ts';
import type { BridgeRuntime } from '../relay/bridges/bridge-runtime.ts';
import { scheduleRedrive } from '../relay/bridges/redrive.ts';
import type { RedriveSchedule } from '../relay/bridges/redrive.ts';
import { mintWebhookSecret } from '../relay/bridges/webhook-signature.ts';
import { parseStored } from '../relay/delivery-text.ts';
import type { SinkSecrets, StoredSink, TenantsPort } from '../relay/ports/index.ts';
import { isTenantId } from '../relay/domain/tenant-id.ts';
import { invalidAdminRequest, tenantNotFound } from './admin-errors.ts';

/** Dead letters listed per call (the oldest first). */
export const DEAD_LETTERS_PER_LISTING = 100;

export interface SinkSetChange {
  sinks: SinkSettings[];
  /** Signing secrets minted by this call, by sink name: shown here only. */
  signingSecrets: Record<string, string>;
}

export interface DeadLetterView {
  id: string;
  sink: string;
  reason: string;
  failedAt: string;
  /** The ids of the events it holds; their content is never listed (it may be above the sink's ceiling). */
  eventIds: string[];
}

/** The bridge administration the CLI reaches over HTTP (`/admin/bridges`). */
export interface BridgeOperations {
  listSinks(tenant: string): Promise<SinkSettings[]>;
  setSinks(tenant: string, body: unknown): Promise<SinkSetChange>;
  clearSinks(tenant: string): Promise<void>;
  listDeadLetters(tenant: string): Promise<DeadLetterView[]>;
  /** Schedules the tenant's dead letters for the retry worker (it sends them, not this call). */
  redrive(tenant: string): Promise<RedriveSchedule>;
}

export class BridgeAdmin implements BridgeOperations {
  constructor(
    private readonly deps: BridgeRuntime,
    private readonly tenants: TenantsPort,
  ) {}

  async listSinks(tenant: string): Promise<SinkSettings[]> {
    await this.requireTenant(tenant);
    return (await this.deps.sinks.getSinks(tenant)).map((sink) => sink.settings);
  }

  /** Replaces the tenant's sinks. A webhook keeps its signing secret unless `rotateSecret` asks for a new one. */
  async setSinks(tenant: string, body: unknown): Promise<SinkSetChange> {
    await this.requireTenant(tenant);
    const parsed = parseSinkSet(body, this.deps.rules);
    if (!parsed.ok) throw invalidAdminRequest(`invalid bridge sinks: ${parsed.reason}`);
    const existing = new Map((await this.deps.sinks.getSinks(tenant)).map((sink) => [sink.settings.name, sink]));
    const signingSecrets: Record<string, string> = {};
    const stored: StoredSink[] = [];
    for (const { settings, headers, rotateSecret } of parsed.sinks) {
      const context = { tenant, sink: settings.name };
      let secrets: SinkSecrets | undefined;
      if (settings.kind === 'otlp') {
        secrets = Object.keys(headers ?? {}).length > 0 ? { headers: headers ?? {} } : undefined;
      } else if (settings.kind === 'cloudevents-webhook' || settings.kind === 'ocsf-webhook') {
        const previous = existing.get(settings.name);
        let signingSecret: string | undefined;
        if (!rotateSecret && previous?.settings.kind === settings.kind && previous.sealedSecrets !== undefined) {
          signingSecret = (JSON.parse(await this.deps.sealer.open(previous.sealedSecrets, context)) as SinkSecrets).signingSecret;
        }
        if (signingSecret === undefined) {
          signingSecret = mintWebhookSecret();
          signingSecrets[settings.name] = signingSecret;
        }
        secrets = { signingSecret };
      }
      stored.push({ settings, ...(secrets === undefined ? {} : { sealedSecrets: await this.deps.sealer.seal(JSON.stringify(secrets), context) }) });
    }
    await this.deps.sinks.putSinks(tenant, stored);
    return { sinks: stored.map((sink) => sink.settings), signingSecrets };
  }

  async clearSinks(tenant: string): Promise<void> {
    await this.requireTenant(tenant);
    await this.deps.sinks.putSinks(tenant, []);
  }

  async listDeadLetters(tenant: string): Promise<DeadLetterView[]> {
    await this.requireTenant(tenant);
    return (await this.deps.deadLetters.list(tenant, DEAD_LETTERS_PER_LISTING)).map((letter) => ({
      id: letter.id,
      sink: letter.sink,
      reason: letter.reason,
      failedAt: new Date(letter.failedAtMs).toISOString(),
      eventIds: letter.events.flatMap((raw) => {
        const id = parseStored(raw)?.id;
        return typeof id === 'string' ? [id] : [];
      }),
    }));
  }

  async redrive(tenant: string): Promise<RedriveSchedule> {
    await this.requireTenant(tenant);
    return scheduleRedrive(this.deps, tenant);
  }

  private async requireTenant(tenant: string): Promise<void> {
    if (!isTenantId(tenant) || (await this.tenants.getTenant(tenant)) === undefined) throw tenantNotFound(tenant);
  }
}
