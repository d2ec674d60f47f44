/**
 * `AEP_TOKEN=<token> npm run verify -- <BaseUrl>`, the deployment check, run against the local
 * stack exactly as someone who deployed runs it against theirs: the token in the environment,
 * never on the command line (which npm run echoes).
 */
import { execFile } from 'node:child_process';
import { connect, createServer } from 'node:net';
import type { AddressInfo, Socket } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { describe, expect, inject, it } from 'vitest';
import { admin } from '../support/admin-client.ts';
import { repoRoot } from '../support/local-stack-process.ts';
import { tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';

const run = promisify(execFile);
const tsx = join(repoRoot, 'node_modules', '.bin', 'tsx');

/** A TCP relay in front of the stack that keeps every byte clients send (request lines, headers), WebSocket upgrades included. */
async function recordingProxy(target: string): Promise<{ url: string; sent(): string; close(): Promise<void> }> {
  const { hostname, port } = new URL(target);
  let sent = '';
  const sockets = new Set<Socket>();
  const server = createServer((client) => {
    const upstream = connect(Number(port), hostname);
    for (const socket of [client, upstream]) {
      sockets.add(socket);
      socket.on('close', () => sockets.delete(socket));
    }
    client.on('data', (chunk: Buffer) => (sent += chunk.toString('latin1')));
    client.pipe(upstream).on('error', () => client.destroy());
    upstream.pipe(client).on('error', () => upstream.destroy());
    client.on('error', () => upstream.destroy());
    upstream.on('error', () => client.destroy());
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
    sent: () => sent,
    close: () =>
      new Promise<void>((resolve) => {
        for (const socket of sockets) socket.destroy();
        server.close(() => resolve());
      }),
  };
}

describe('npm run verify', () => {
  it('passes every check against the local stack with the token from AEP_TOKEN, one line per check and a summary', async () => {
    // A tenant of its own with an all-scope token, as a deployment's operator has: the shared
    // stack's dev tenant carries control policies other tests set.
    const tenant = uniqueName('verify');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control', 'admin']);
    const args = [join(repoRoot, 'bin', 'verify.ts'), inject('baseUrl'), '--tenant', tenant];
    expect(args.join(' ')).not.toContain(token);
    const { stdout, stderr } = await run(tsx, args, { cwd: repoRoot, timeout: 90_000, env: { ...process.env, AEP_TOKEN: token } }).catch((error: { stdout?: string; stderr?: string }) => ({
      stdout: error.stdout ?? String(error),
      stderr: error.stderr ?? '',
    }));
    expect(`${stdout}${stderr}`).not.toContain(token);
    expect(stderr).not.toContain('--token puts the secret');
    if (!stdout.includes('11/11 checks passed')) console.error(stdout);
    const lines = stdout.trim().split('\n');
    const checks = lines.filter((line) => /^(PASS|FAIL) {2}/.test(line));
    expect(checks.map((line) => line.split(':')[0])).toEqual([
      'PASS  discovery with a token',
      'PASS  discovery without a token',
      'PASS  stream with ?access_token= (EventSource style)',
      'PASS  stream with the Authorization header',
      'PASS  WebSocket subscribe',
      'PASS  POST /events',
      'PASS  the event on the ?access_token= stream',
      'PASS  the event on the header stream',
      'PASS  the event on the WebSocket',
      'PASS  command round trip with the simulated agent',
      'PASS  revocation cuts the agent socket',
    ]);
    expect(lines.at(-1)).toBe('11/11 checks passed');
  }, 120_000);

  it('sends a consume-only token it issued as ?access_token=, never the token it was given, and revokes it', async () => {
    const tenant = uniqueName('verify-query');
    const token = await tenantWithToken(tenant, ['emit', 'consume', 'control', 'admin']);
    const proxy = await recordingProxy(inject('baseUrl'));
    try {
      const { stdout } = await run(tsx, [join(repoRoot, 'bin', 'verify.ts'), proxy.url, '--tenant', tenant], { cwd: repoRoot, timeout: 90_000, env: { ...process.env, AEP_TOKEN: token } });
      expect(stdout).toContain('11/11 checks passed');
    } finally {
      await proxy.close();
    }
    const queryTokens = [...proxy.sent().matchAll(/[?&]access_token=([^&\s]+)/g)].map((match) => decodeURIComponent(match[1] as string));
    expect(queryTokens.length).toBeGreaterThan(0);
    expect(queryTokens).not.toContain(token);
    // What went into the URL was a token of its own, consume only, and no longer valid.
    for (const queryToken of new Set(queryTokens)) expect((await fetch(`${inject('baseUrl')}/token`, { headers: { authorization: `Bearer ${queryToken}` } })).status).toBe(401);
    const listed = (await (await admin('GET', `/tokens?tenant=${tenant}`)).json()) as { tokens: Array<{ scopes: string[]; status: string; label?: string }> };
    expect(listed.tokens.filter((issued) => issued.label?.includes('?access_token='))).toEqual([expect.objectContaining({ scopes: ['consume'], status: 'revoked' })]);
  }, 120_000);

  it('fails, naming the checks, with a token the relay does not know; --token still works, with a warning', async () => {
    const failed = run(tsx, [join(repoRoot, 'bin', 'verify.ts'), inject('baseUrl'), '--token', 'aep_not_a_token'], { cwd: repoRoot, timeout: 120_000, env: { ...process.env, AEP_TOKEN: '', AEP_VERIFY_TIMEOUT_MS: '3000' } });
    await expect(failed).rejects.toMatchObject({ code: 1, stdout: expect.stringContaining('FAIL  POST /events: HTTP 401'), stderr: expect.stringContaining('set AEP_TOKEN instead') });
  }, 150_000);

  it('exits 2 with usage naming AEP_TOKEN when no token is given', async () => {
    const refused = run(tsx, [join(repoRoot, 'bin', 'verify.ts'), inject('baseUrl')], { cwd: repoRoot, timeout: 60_000, env: { ...process.env, AEP_TOKEN: '' } });
    await expect(refused).rejects.toMatchObject({ code: 2, stderr: expect.stringContaining('AEP_TOKEN=<token> npm run verify -- <BaseUrl>') });
  }, 90_000);
});
