/**
 * `aep-relay login` runs the device authorization grant (RFC 8628) against the shared stack's
 * embedded dev provider: the test approves the user code at the provider's own pages (over
 * HTTP, as the person would in a browser), the CLI stores the credential with mode 0600, and a
 * command then runs as that person with no AEP_TOKEN set: the answer it sends is recorded beside
 * the stored command with the person. `aep-relay logout` revokes it.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, statSync, existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, inject, it } from 'vitest';
import { SimulatedAgent } from '../../local/agent/simulated-agent.ts';
import { admin } from '../support/admin-client.ts';
import { cli } from '../support/cli-run.ts';
import { walkProvider } from '../support/dev-provider-login.ts';
import { repoRoot } from '../support/local-stack-process.ts';
import { uniqueName } from '../support/relay-fixtures.ts';

/** Runs `aep-relay login`, approving its code at the provider as `login` once it is printed. */
function loginApproving(login: string, env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AEP_')));
  const child = spawn(join(repoRoot, 'node_modules', '.bin', 'node'), [join(repoRoot, 'bin', 'aep-relay.mjs'), 'login', '--url', inject('baseUrl'), '--tenant', 'local'], {
    cwd: repoRoot,
    env: { ...inherited, ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let stdout = '';
  let stderr = '';
  let approving: Promise<unknown> | undefined;
  child.stdout.on('data', (chunk: Buffer) => {
    stdout += chunk.toString();
    const complete = /\(or open (\S+)\)/.exec(stdout)?.[1];
    if (complete !== undefined && approving === undefined) approving = walkProvider(complete, login);
  });
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => {
      void (approving ?? Promise.resolve()).then(() => resolve({ code, stdout, stderr }), reject);
    });
  });
}

describe('aep-relay login (device authorization grant)', () => {
  it('signs in as the person, stores the credential 0600, and a command then runs as that person', async () => {
    const configHome = mkdtempSync(join(tmpdir(), 'aep-login-'));
    const env = { XDG_CONFIG_HOME: configHome };
    const login = await loginApproving('demo', env);
    expect(login.stderr).toBe('');
    expect(login.code).toBe(0);
    expect(login.stdout).toContain('signed in to tenant local as Dana Demo (Local dev provider); scopes consume, control');
    const file = join(configHome, 'aep-relay', 'credentials.json');
    expect(statSync(file).mode & 0o777).toBe(0o600);
    const stored = JSON.parse(readFileSync(file, 'utf8')) as { token: string; tokenId: string };
    // The secret is in the file only, never printed.
    expect(login.stdout).not.toContain(stored.token);

    // An agent asks; the person answers from the terminal with no AEP_TOKEN and no AEP_URL set.
    const agentToken = ((await (await admin('POST', '/tokens', { body: { scopes: ['emit', 'consume', 'control'] } })).json()) as { token: string }).token;
    const session = uniqueName('cli-login');
    const agent = new SimulatedAgent({ baseUrl: inject('baseUrl'), token: agentToken, agent: 'sim', session, accepts: ['control.attention.respond'] });
    await agent.start();
    const requestId = agent.requestAttention('May I tag the release?');
    await expect.poll(async () => (await cli(['attention', 'list', '--session', session], env)).stdout).toContain(requestId);
    const answered = await cli(['attention', 'answer', '--session', session, requestId, 'allow'], env);
    expect(answered.stderr).toBe('');
    expect(answered.code).toBe(0);
    await expect.poll(() => agent.receivedCommands.length).toBe(1);
    await agent.stop();

    // History shows the person beside the answer.
    await expect
      .poll(async () => {
        const history = await fetch(`${inject('baseUrl')}/history?session=${session}`, { headers: { authorization: `Bearer ${inject('devToken')}`, accept: 'application/json' } });
        const { items } = (await history.json()) as { items: Array<{ raw: string; sentBy?: unknown }> };
        return items.find((item) => item.raw.includes('control.attention.respond'))?.sentBy;
      })
      .toEqual({ subject: 'demo', name: 'Dana Demo', provider: 'Local dev provider' });

    // logout revokes the credential and removes the file.
    const logout = await cli(['logout'], env);
    expect(logout.code).toBe(0);
    expect(existsSync(file)).toBe(false);
    expect((await fetch(`${inject('baseUrl')}/token`, { headers: { authorization: `Bearer ${stored.token}` } })).status).toBe(401);
  }, 90_000);

  it('refuses a person outside the mapped group, naming the rule set, and stores nothing', async () => {
    const configHome = mkdtempSync(join(tmpdir(), 'aep-login-'));
    const login = await loginApproving('visitor', { XDG_CONFIG_HOME: configHome });
    expect(login.code).toBe(1);
    expect(login.stderr).toContain('no-matching-rule');
    expect(login.stderr).toContain('"local demo rules"');
    expect(existsSync(join(configHome, 'aep-relay', 'credentials.json'))).toBe(false);
  }, 90_000);
});
