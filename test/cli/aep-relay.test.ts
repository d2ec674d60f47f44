import { describe, expect, inject, it } from 'vitest';
import { localTableNames } from '../../local/create-tables.ts';
import { cli } from '../support/cli-run.ts';
import { postEvents, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';
import { helloSocket, isType } from '../support/ws-client.ts';

const httpMode = () => ({ AEP_URL: inject('baseUrl'), AEP_ADMIN_TOKEN: inject('devToken') });

const directMode = () => {
  const names = localTableNames('aep-local');
  return {
    AEP_DYNAMODB_ENDPOINT: inject('dynamoEndpoint'),
    AEP_TENANTS_TABLE: names.tenants,
    AEP_EVENTS_TABLE: names.events,
    AEP_CONNECTIONS_TABLE: names.connections,
    AEP_WS_MANAGEMENT_ENDPOINT: inject('managementEndpoint'),
    // The management endpoint takes only the stack's credentials (as `npm start` prints them).
    AWS_ACCESS_KEY_ID: inject('managementCredentials').accessKeyId,
    AWS_SECRET_ACCESS_KEY: inject('managementCredentials').secretAccessKey,
  };
};

const post = (token: string) => postEvents(JSON.stringify(sessionEvent(uniqueName('cli'), 0)), { token });

describe.each([
  ['HTTP', httpMode],
  ['direct', directMode],
])('aep-relay in %s mode', (_mode, envOf) => {
  it('creates a tenant, issues a token that works, lists it without the secret, and revokes it', { timeout: 60_000 }, async () => {
    const env = envOf();
    const tenant = uniqueName('cli');
    const created = await cli(['tenants', 'create', tenant], env);
    expect(created).toMatchObject({ code: 0, stdout: `created tenant ${tenant}\n` });

    const issued = await cli(['tokens', 'issue', '--tenant', tenant, '--scopes', 'emit,consume', '--label', 'from the cli', '--json'], env);
    expect(issued.code, issued.stderr).toBe(0);
    expect(issued.stderr).toContain('shown once and is not stored');
    const { token, tokenId } = JSON.parse(issued.stdout) as { token: string; tokenId: string };
    expect(token).toMatch(/^aep_/);
    expect((await post(token)).status).toBe(202);

    for (const format of [[], ['--json']]) {
      const listed = await cli(['tokens', 'list', '--tenant', tenant, ...format], env);
      expect(listed.code).toBe(0);
      expect(listed.stdout).toContain(tokenId);
      expect(listed.stdout).not.toContain(token);
      expect(listed.stderr).not.toContain(token);
    }

    const revoked = await cli(['tokens', 'revoke', '--tenant', tenant, tokenId], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).toContain(`revoked ${tokenId}`);
    expect((await post(token)).status).toBe(401);
    const listedAfter = await cli(['tokens', 'list', '--tenant', tenant, '--json'], env);
    expect((JSON.parse(listedAfter.stdout) as { tokens: Array<{ tokenId: string; status: string }> }).tokens).toEqual([expect.objectContaining({ tokenId, status: 'revoked' })]);
  });

  it('sets a control policy from standard input and shows it', { timeout: 60_000 }, async () => {
    const env = envOf();
    const tenant = uniqueName('pol');
    expect((await cli(['tenants', 'create', tenant], env)).code).toBe(0);
    const policy = { default: 'deny', rules: [{ effect: 'allow', types: ['control.*'], agents: ['sim'] }] };
    const set = await cli(['policy', 'set', '--tenant', tenant, '-'], env, JSON.stringify(policy));
    expect(set.code, set.stderr).toBe(0);
    const shown = await cli(['policy', 'show', '--tenant', tenant, '--json'], env);
    expect(JSON.parse(shown.stdout)).toEqual(policy);
    const refused = await cli(['policy', 'set', '--tenant', tenant, '-'], env, '{"default":"maybe"}');
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('invalid control policy');
  });

  it('exits 1 with the relay error when an operation is refused, 3 when there is nothing to do and 4 when there is no such thing', { timeout: 60_000 }, async () => {
    const env = envOf();
    const refused = await cli(['quotas', 'set', '--tenant', 'local', 'noSuchQuota=5'], env);
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain('invalid-request');
    const duplicate = await cli(['tenants', 'create', 'local'], env);
    expect(duplicate.code).toBe(3);
    expect(duplicate.stderr).toContain('tenant-exists');
    const unknown = await cli(['tokens', 'revoke', '--tenant', 'local', 'tok_nope'], env);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain('not-found');
    const noTenant = await cli(['tenants', 'disable', uniqueName('ghost')], env);
    expect(noTenant.code).toBe(4);
    expect(noTenant.stderr).toContain('not-found');
  });

  it('counts closed sockets and ended streams apart, and says a revoked token was already revoked with exit 3', { timeout: 60_000 }, async () => {
    const env = envOf();
    const tenant = uniqueName('clirev');
    expect((await cli(['tenants', 'create', tenant], env)).code).toBe(0);
    const issued = await cli(['tokens', 'issue', '--tenant', tenant, '--scopes', 'consume', '--json'], env);
    expect(issued.code, issued.stderr).toBe(0);
    const { token, tokenId } = JSON.parse(issued.stdout) as { token: string; tokenId: string };
    const socket = await helloSocket({}, { token });
    const stream = await openStream({}, { token });
    expect(stream.status).toBe(200);
    await stream.waitFor((items) => items.some((item) => item.kind === 'comment' && item.text.includes('aep stream open')));

    const revoked = await cli(['tokens', 'revoke', '--tenant', tenant, tokenId], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout.split('\n')).toEqual(expect.arrayContaining([`revoked ${tokenId} of tenant ${tenant}`, 'closed 1 open WebSocket connection', 'told 1 open SSE stream to end (within one poll)']));
    expect(await socket.next(isType('closing'))).toMatchObject({ reason: 'token-revoked' });
    await stream.ended;
    expect(stream.comments().at(-1)).toBe('closing: token-revoked');

    const again = await cli(['tokens', 'revoke', '--tenant', tenant, tokenId], env);
    expect(again.code, again.stderr).toBe(3);
    expect(again.stdout).toBe(`${tokenId} of tenant ${tenant} was already revoked; nothing to do\n`);
    const againJson = await cli(['tokens', 'revoke', '--tenant', tenant, tokenId, '--json'], env);
    expect(againJson.code).toBe(3);
    expect(JSON.parse(againJson.stdout)).toMatchObject({ tokenId, alreadyRevoked: true, connectionsClosed: 0, streamsEnded: 0, alsoRevoked: [] });
  });

  it('says a tenant was already disabled or enabled, with exit 3', { timeout: 60_000 }, async () => {
    const env = envOf();
    const tenant = uniqueName('clitog');
    expect((await cli(['tenants', 'create', tenant], env)).code).toBe(0);
    const disabled = await cli(['tenants', 'disable', tenant], env);
    expect(disabled.code, disabled.stderr).toBe(0);
    expect(disabled.stdout).toContain(`disabled tenant ${tenant}: its tokens are refused from now on`);
    const again = await cli(['tenants', 'disable', tenant], env);
    expect(again.code, again.stderr).toBe(3);
    expect(again.stdout).toContain(`tenant ${tenant} was already disabled`);
    expect((await cli(['tenants', 'enable', tenant], env)).code).toBe(0);
    const enabledAgain = await cli(['tenants', 'enable', tenant], env);
    expect(enabledAgain.code).toBe(3);
    expect(enabledAgain.stdout).toBe(`tenant ${tenant} was already enabled; nothing to do\n`);
  });
});

describe('aep-relay', () => {
  it('exits 2 with usage for unknown commands, missing options, and no relay to talk to', { timeout: 60_000 }, async () => {
    const unknown = await cli(['tokens', 'frobnicate'], httpMode());
    expect(unknown.code).toBe(2);
    expect(unknown.stderr).toContain('unknown command');
    expect((await cli(['tokens', 'issue', '--tenant', 'local'], httpMode())).code).toBe(2);
    expect((await cli(['tokens', 'issue', '--tenant', 'local', '--scopes', 'root'], httpMode())).code).toBe(2);
    expect((await cli(['tenants', 'list'], {})).code).toBe(2);
    expect((await cli(['tokens', 'list'], directMode())).code).toBe(2);
    expect((await cli(['tenants', 'list'], { AEP_URL: inject('baseUrl') })).code).toBe(2);
  });

  it('runs as npm run admin does, through the tsx CLI', { timeout: 60_000 }, async () => {
    const help = await cli(['--help'], {}, '', 'tsx');
    expect(help.code).toBe(0);
    expect(help.stdout).toContain('Usage: aep-relay');
    // --help lists every exit code a script may branch on.
    for (const line of ['  0  done', '  2  usage', '  3  nothing to do', '  4  not found']) expect(help.stdout).toContain(line);
    const listed = await cli(['tenants', 'list', '--json'], httpMode(), '', 'tsx');
    expect(listed.code, listed.stderr).toBe(0);
    expect((JSON.parse(listed.stdout) as { tenants: Array<{ tenant: string }> }).tenants.map((entry) => entry.tenant)).toContain('local');
  });

  it('creates the tenant on its first token in direct mode (stack bootstrap) and says so', { timeout: 60_000 }, async () => {
    const tenant = uniqueName('boot');
    const { AEP_DYNAMODB_ENDPOINT, AEP_TENANTS_TABLE } = directMode();
    const issued = await cli(['tokens', 'issue', '--tenant', tenant, '--scopes', 'emit,consume,control,admin'], { AEP_DYNAMODB_ENDPOINT, AEP_TENANTS_TABLE });
    expect(issued.code, issued.stderr).toBe(0);
    expect(issued.stdout).toContain(`created tenant ${tenant}`);
    const token = /^token: (\S+)$/m.exec(issued.stdout)?.[1] ?? '';
    expect((await post(token)).status).toBe(202);
    const revoked = await cli(['tokens', 'revoke', '--tenant', tenant, /issued (tok_\S+)/.exec(issued.stdout)?.[1] ?? ''], { AEP_DYNAMODB_ENDPOINT, AEP_TENANTS_TABLE });
    expect(revoked.code).toBe(0);
    expect(revoked.stdout).toContain('were not closed');
    expect((await post(token)).status).toBe(401);
  });

  it('closes a revoked token\'s open WebSocket in direct mode through the loopback management endpoint, with the credentials npm start prints', { timeout: 60_000 }, async () => {
    const env = directMode();
    const tenant = uniqueName('clisock');
    const issued = await cli(['tokens', 'issue', '--tenant', tenant, '--scopes', 'consume', '--json'], env);
    expect(issued.code, issued.stderr).toBe(0);
    const { token, tokenId } = JSON.parse(issued.stdout) as { token: string; tokenId: string };
    const socket = await helloSocket({}, { token });
    const revoked = await cli(['tokens', 'revoke', '--tenant', tenant, tokenId], env);
    expect(revoked.code, revoked.stderr).toBe(0);
    expect(revoked.stdout).not.toContain('were not closed');
    expect(await socket.next(isType('closing'))).toMatchObject({ type: 'closing' });
    await socket.closed;
  });
});

describe('aep-relay bridges', () => {
  it('sets sinks from standard input, shows the signing secret once, and lists them without secrets', { timeout: 60_000 }, async () => {
    const tenant = uniqueName('clibr');
    expect((await cli(['tenants', 'create', tenant], httpMode())).code).toBe(0);
    const sinks = { sinks: [{ name: 'hook', kind: 'cloudevents-webhook', url: 'http://127.0.0.1:9/hook' }, { name: 'otel', kind: 'otlp', endpoint: 'https://otlp.example.com/v1/logs', headers: { authorization: 'Bearer cli-secret-header' } }] };
    const set = await cli(['bridges', 'set', '--tenant', tenant, '-'], httpMode(), JSON.stringify(sinks));
    expect(set.code, set.stderr).toBe(0);
    expect(set.stdout).toMatch(/^signing secret of hook: whsec_\S+$/m);
    expect(set.stderr).toContain('shown once');
    const listed = await cli(['bridges', 'list', '--tenant', tenant], httpMode());
    expect(listed.code, listed.stderr).toBe(0);
    expect(listed.stdout).toContain('otel  otlp  https://otlp.example.com/v1/logs  maxCapture=metadata  headers=authorization');
    expect(listed.stdout).not.toContain('cli-secret-header');
    expect(listed.stdout).not.toContain('whsec_');
    const letters = await cli(['bridges', 'dead-letters', '--tenant', tenant, '--json'], httpMode());
    expect(JSON.parse(letters.stdout)).toEqual({ deadLetters: [] });
    expect((await cli(['bridges', 'clear', '--tenant', tenant], httpMode())).code).toBe(0);
    expect((await cli(['bridges', 'list', '--tenant', tenant], httpMode())).stdout).toBe('no bridge sinks\n');
  });

  it('refuses bridges in direct mode with a usage error naming HTTP mode', { timeout: 60_000 }, async () => {
    const refused = await cli(['bridges', 'list', '--tenant', 'local'], directMode());
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('HTTP mode');
  });
});
