/**
 * Runs one `aep-relay` invocation and returns its exit code (`exit-codes.ts`): 0 ok, 1 failure
 * (refused or unreachable), 2 usage, 3 nothing to do, 4 not found. Failures print the relay's
 * error code and detail, never a token.
 */
import { readFile } from 'node:fs/promises';
import type { Environment } from '../../src/config/env-readers.ts';
import { RelayError } from '../../src/errors/relay-error.ts';
import { adminBackend } from './admin-backend.ts';
import { EXIT, exitOnFailure } from './exit-codes.ts';
import type { AdminBackend } from './admin-backend.ts';
import { parseInvocation, usageOf, UsageError } from './cli-arguments.ts';
import type { Command } from './cli-arguments.ts';
import { deadLetterLines, SIGNING_SECRET_WARNING, sinkLines, sinkSetLines } from './render-bridges.ts';
import type { BridgeOperations } from '../../src/admin/bridge-admin.ts';
import type { OperatorOperations } from '../../src/admin/operator-admin.ts';
import { issuedLines, policyLines, policySetLines, quotaLines, revocationChangedNothing, revokedLines, rotatedLines, SECRET_WARNING, tenantLines, tenantStateLines, tokenLines } from './render.ts';

export interface CliIo {
  out(line: string): void;
  err(line: string): void;
  readStdin(): Promise<string>;
}

/** What a command printed: machine output (for --json) and the human lines. */
interface Outcome {
  value: unknown;
  lines: string[];
  /** Shown on stderr in both output modes. */
  warnings?: string[];
  /** The command found nothing to do (exit 3); absent: it did what it was asked (exit 0). */
  nothingToDo?: true;
}

export async function runCli(argv: readonly string[], env: Environment, io: CliIo): Promise<number> {
  let backend: AdminBackend | undefined;
  try {
    const invocation = parseInvocation(argv);
    if (invocation.command.kind === 'help') {
      io.out(usageOf(invocation.command.group));
      return EXIT.ok;
    }
    backend = await adminBackend(invocation, env);
    const outcome = await execute(invocation.command, backend, io);
    for (const warning of outcome.warnings ?? []) io.err(warning);
    if (invocation.json) io.out(JSON.stringify(outcome.value));
    else for (const line of outcome.lines) io.out(line);
    return outcome.nothingToDo === true ? EXIT.nothingToDo : EXIT.ok;
  } catch (error) {
    return exitOnFailure(error, io.err, { helpCommand: 'aep-relay' });
  } finally {
    backend?.close();
  }
}

async function execute(command: Exclude<Command, { kind: 'help' }>, backend: AdminBackend, io: CliIo): Promise<Outcome> {
  const admin = backend.operations;
  const hint = backend.unreachableConnectionsHint;
  const tenantOf = (tenant: string | undefined): string => {
    // Direct mode has no token to imply a tenant; HTTP mode's empty tenant means the token's own.
    if (tenant !== undefined) return tenant;
    if (backend.mode === 'http') return '';
    throw new UsageError(`${command.kind} needs --tenant <id> in direct mode`);
  };
  switch (command.kind) {
    case 'tenants create': {
      const tenant = await admin.createTenant(command.tenant);
      return { value: tenant, lines: [`created tenant ${tenant.tenant}`] };
    }
    case 'tenants list': {
      const tenants = await admin.listTenants();
      return { value: { tenants }, lines: tenantLines(tenants) };
    }
    case 'tenants disable': {
      const change = await admin.disableTenant(command.tenant);
      const reachedNothing = !change.connectionsClosed && change.streamsEnded === 0;
      return { value: change, lines: tenantStateLines(change, hint), ...(!change.changed && reachedNothing ? { nothingToDo: true as const } : {}) };
    }
    case 'tenants enable': {
      const change = await admin.enableTenant(command.tenant);
      return { value: change, lines: tenantStateLines(change, hint), ...(change.changed ? {} : { nothingToDo: true as const }) };
    }
    case 'tokens issue': {
      const { kind: _kind, tenant, ...grant } = command;
      const issued = await admin.issueToken({ ...grant, tenant: tenantOf(tenant) }, backend.issueOptions);
      return { value: issued, lines: issuedLines(issued), warnings: [SECRET_WARNING] };
    }
    case 'tokens list': {
      const tokens = await admin.listTokens(tenantOf(command.tenant));
      return { value: { tokens }, lines: tokenLines(tokens) };
    }
    case 'tokens revoke': {
      const revocation = await admin.revokeToken(tenantOf(command.tenant), command.tokenId);
      return { value: revocation, lines: revokedLines(revocation, hint), ...(revocationChangedNothing(revocation) ? { nothingToDo: true as const } : {}) };
    }
    case 'tokens rotate': {
      const rotated = await admin.rotateToken(tenantOf(command.tenant), command.tokenId);
      return { value: rotated, lines: rotatedLines(rotated, hint), warnings: [SECRET_WARNING] };
    }
    case 'policy show': {
      const policy = await admin.getControlPolicy(tenantOf(command.tenant));
      return { value: policy, lines: policyLines(policy) };
    }
    case 'policy set': {
      const tenant = tenantOf(command.tenant);
      const document = await readPolicyDocument(command.source, io);
      const policy = await admin.setControlPolicy(tenant, document);
      return { value: policy, lines: policySetLines(tenant, policy) };
    }
    case 'quotas show': {
      const view = await admin.getQuotas(tenantOf(command.tenant));
      return { value: view, lines: quotaLines(view) };
    }
    case 'quotas set': {
      // Merged into what is set (the route replaces the whole document), so naming one quota leaves the others.
      const tenant = tenantOf(command.tenant);
      const merged: Record<string, number> = { ...(await admin.getQuotas(tenant)).quotas };
      for (const [name, value] of Object.entries(command.changes)) {
        if (value === null) delete merged[name];
        else merged[name] = value;
      }
      const view = await admin.setQuotas(tenant, merged);
      return { value: view, lines: quotaLines(view) };
    }
    case 'bridges set': {
      const change = await bridgesOf(backend).setSinks(tenantOf(command.tenant), await readPolicyDocument(command.source, io));
      const minted = Object.keys(change.signingSecrets).length > 0;
      return { value: change, lines: sinkSetLines(change), ...(minted ? { warnings: [SIGNING_SECRET_WARNING] } : {}) };
    }
    case 'bridges list': {
      const sinks = await bridgesOf(backend).listSinks(tenantOf(command.tenant));
      return { value: { sinks }, lines: sinkLines(sinks) };
    }
    case 'bridges clear': {
      await bridgesOf(backend).clearSinks(tenantOf(command.tenant));
      return { value: { sinks: [] }, lines: ['removed every bridge sink'] };
    }
    case 'bridges dead-letters': {
      const deadLetters = await bridgesOf(backend).listDeadLetters(tenantOf(command.tenant));
      return { value: { deadLetters }, lines: deadLetterLines(deadLetters) };
    }
    case 'operators list': {
      const operators = await operatorsOf(backend).listOperators(tenantOf(command.tenant));
      return { value: { operators }, lines: operators.length === 0 ? ['no trusted operators'] : operators.map((operator) => `${operator.name}  ${operator.jwksUrl ?? `${(operator.jwks as { keys: unknown[] }).keys.length} inline keys`}  updated ${operator.updatedAt}`) };
    }
    case 'operators add': {
      const body = command.jwksUrl !== undefined ? { jwksUrl: command.jwksUrl } : { jwks: await readPolicyDocument(command.jwks as string, io) };
      const operator = await operatorsOf(backend).putOperator(tenantOf(command.tenant), command.name, body);
      return { value: operator, lines: [`trusting operator ${operator.name} (${operator.jwksUrl ?? 'inline keys'})`] };
    }
    case 'operators remove': {
      await operatorsOf(backend).removeOperator(tenantOf(command.tenant), command.name);
      return { value: { removed: command.name }, lines: [`no longer trusting operator ${command.name}`] };
    }
    case 'push list': {
      const subscriptions = await pushOf(backend).listPushSubscriptions();
      const lines = subscriptions.map((entry) => {
        const subscription = entry as { id: string; label?: string; maxCapture: string; owner: { token: string } };
        return `${subscription.id}  ${subscription.maxCapture}  ${subscription.label ?? ''}  (token ${subscription.owner.token})`;
      });
      return { value: { subscriptions }, lines: lines.length === 0 ? ['no push subscriptions'] : lines };
    }
    case 'push delete': {
      await pushOf(backend).removePushSubscription(command.id);
      return { value: { removed: command.id }, lines: [`removed push subscription ${command.id}`] };
    }
    case 'bridges redrive': {
      const schedule = await bridgesOf(backend).redrive(tenantOf(command.tenant));
      return {
        value: schedule,
        lines: [`scheduled ${schedule.scheduled} dead letters (${schedule.events} events) for the retry worker; ${schedule.orphaned} letters of removed sinks left. Watch \`bridges dead-letters\` for the outcome`],
      };
    }
  }
}

function operatorsOf(backend: AdminBackend): OperatorOperations {
  if (backend.operators === undefined) throw new UsageError('operators commands need HTTP mode (--url and an admin token): changes are audited by the relay');
  return backend.operators;
}

function pushOf(backend: AdminBackend): NonNullable<AdminBackend['push']> {
  if (backend.push === undefined) throw new UsageError('push commands need HTTP mode (--url and a token)');
  return backend.push;
}

function bridgesOf(backend: AdminBackend): BridgeOperations {
  if (backend.bridges === undefined) throw new UsageError('bridges commands need HTTP mode (--url and an admin token): the relay seals sink secrets with its own key');
  return backend.bridges;
}

async function readPolicyDocument(source: string, io: CliIo): Promise<unknown> {
  const text = source === '-' ? await io.readStdin() : await readFile(source, 'utf8');
  try {
    return JSON.parse(text) as unknown;
  } catch {
    throw new RelayError('invalid-request', 400, `${source === '-' ? 'standard input' : source} is not JSON`);
  }
}
