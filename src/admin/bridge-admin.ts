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
import { parseStored } from '../relay/domain/delivery-text.ts';
import type { SinkSecrets, StoredSink } from '../relay/bridges/bridge-sinks-port.ts';
import type { TenantsPort } from '../relay/ports/index.ts';
import { isTenantId } from '../relay/domain/tenant-id.ts';
import type { Principal } from '../auth/principal.ts';
import { hasScope } from '../auth/principal.ts';
import { forbidden } from '../errors/relay-error.ts';
import { DEFAULT_EXPORT_CEILING } from '../protocol/bridges/export-ceiling.ts';
import { captureRank } from '../protocol/levels.ts';
import { lowerCeiling } from '../relay/domain/read-ceiling.ts';
import { invalidAdminRequest, tenantNotFound } from './admin-errors.ts';
import type { ActorOptions } from './admin-operations.ts';
import { ceilingOf } from './attenuation.ts';

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
  setSinks(tenant: string, body: unknown, options?: ActorOptions): Promise<SinkSetChange>;
  clearSinks(tenant: string, options?: ActorOptions): Promise<void>;
  listDeadLetters(tenant: string): Promise<DeadLetterView[]>;
  /** Schedules the tenant's dead letters for the retry worker (it sends them, not this call). */
  redrive(tenant: string, options?: ActorOptions): Promise<RedriveSchedule>;
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

  /**
   * Replaces the tenant's sinks. A webhook keeps its signing secret unless `rotateSecret` asks
   * for a new one. With an actor (the admin routes), the set as it was and as it will be must
   * both be within what the actor may set (`requireMaySetSinks`); a sink leaving `agents` or
   * `maxCapture` open takes the actor's binding and, at most, its ceiling.
   */
  async setSinks(tenant: string, body: unknown, options: ActorOptions = {}): Promise<SinkSetChange> {
    await this.requireTenant(tenant);
    const { actor } = options;
    const parsed = parseSinkSet(body, this.deps.rules, actor === undefined ? DEFAULT_EXPORT_CEILING : (lowerCeiling(DEFAULT_EXPORT_CEILING, ceilingOf(actor)) ?? DEFAULT_EXPORT_CEILING));
    if (!parsed.ok) throw invalidAdminRequest(`invalid bridge sinks: ${parsed.reason}`);
    const current = await this.deps.sinks.getSinks(tenant);
    if (actor !== undefined) {
      for (const sink of parsed.sinks) if (sink.settings.agents === undefined && actor.agents !== undefined) sink.settings.agents = [...actor.agents];
      requireMaySetSinks(actor, current.map((sink) => sink.settings), 'replace');
      requireMaySetSinks(actor, parsed.sinks.map((sink) => sink.settings), 'set');
    }
    const existing = new Map(current.map((sink) => [sink.settings.name, sink]));
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

  async clearSinks(tenant: string, options: ActorOptions = {}): Promise<void> {
    await this.requireTenant(tenant);
    if (options.actor !== undefined) requireMaySetSinks(options.actor, (await this.deps.sinks.getSinks(tenant)).map((sink) => sink.settings), 'remove');
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

  /** Schedules the letters again for their sinks as now set: with an actor, only one that could have set every sink. */
  async redrive(tenant: string, options: ActorOptions = {}): Promise<RedriveSchedule> {
    await this.requireTenant(tenant);
    if (options.actor !== undefined) requireMaySetSinks(options.actor, (await this.deps.sinks.getSinks(tenant)).map((sink) => sink.settings), 'redrive to');
    return scheduleRedrive(this.deps, tenant);
  }

  private async requireTenant(tenant: string): Promise<void> {
    if (!isTenantId(tenant) || (await this.tenants.getTenant(tenant)) === undefined) throw tenantNotFound(tenant);
  }
}

/**
 * A sink is a reader of the tenant's events that never expires, so a token may set (or
 * replace, remove, or redrive dead letters to) only sinks it could have been: it holds `consume`, it does not expire,
 * each sink reads at or below its capture ceiling, and, when it is bound to agents, each sink
 * is bound to a subset of them. The set is replaced whole, so a token that could not have set
 * a sink already there may not remove it either. 403 `unauthorized` otherwise.
 */
export function requireMaySetSinks(actor: Principal, sinks: readonly SinkSettings[], verb: 'set' | 'replace' | 'remove' | 'redrive to'): void {
  if (!hasScope(actor, 'consume')) throw forbidden('setting bridge sinks needs the consume scope: a sink receives the tenant\'s events');
  if (actor.expiresAtMs !== undefined) throw forbidden('this token expires and a sink does not; an expiring token may not set bridge sinks');
  const ceiling = ceilingOf(actor);
  for (const sink of sinks) {
    const where = verb === 'set' ? `sink ${JSON.stringify(sink.name)}` : `the tenant's sink ${JSON.stringify(sink.name)} (to ${verb} it)`;
    if (captureRank(sink.maxCapture) > captureRank(ceiling)) throw forbidden(`this token reads at most capture ${ceiling}; ${where} has maxCapture ${sink.maxCapture}`);
    if (actor.agents === undefined) continue;
    if (sink.agents === undefined) throw forbidden(`this token is bound to ${JSON.stringify(actor.agents)}; ${where} receives every agent's events`);
    const foreign = sink.agents.filter((agent) => !actor.agents?.includes(agent));
    if (foreign.length > 0) throw forbidden(`this token is bound to ${JSON.stringify(actor.agents)}; ${where} receives events of ${JSON.stringify(foreign)}`);
  }
}
