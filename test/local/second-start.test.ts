/**
 * A second `npm start` beside a running stack (issue 49, point 1). It is refused before it
 * touches anything the first one owns: the port is checked first (and held), then the data
 * folder's lock, and only then DynamoDB Local is started (whose start ends a JVM a killed stack
 * left on the folder: before the lock, that was the running stack's own database). The refusal
 * says what runs and what to change, and exits 2; the first stack notices nothing: it serves a
 * POST and an SSE replay afterwards, on the same DynamoDB Local process, with no error logged.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { LOCK_FILE } from '../../local/data-folder-lock.ts';
import { isProcessAlive, PID_FILE } from '../../local/dynamodb-local.ts';
import { repoRoot, startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { openStream } from '../support/sse-client.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'aep-second-start-'));
const otherDataDir = join(mkdtempSync(join(tmpdir(), 'aep-second-start-other-')), 'data');
let first: StackProcess;
let port: string;
let jvmPid: number;

beforeAll(async () => {
  first = await startStackProcess({ args: [], env: { AEP_DATA_DIR: dataDir } });
  port = new URL(first.baseUrl).port;
  jvmPid = Number(readFileSync(join(dataDir, 'dynamodb', PID_FILE), 'utf8').trim());
}, 120_000);

afterAll(async () => {
  await first?.stop();
  rmSync(dataDir, { recursive: true, force: true });
  rmSync(join(otherDataDir, '..'), { recursive: true, force: true });
}, 60_000);

/** `npm start` with these settings, to its exit. */
function npmStart(env: Record<string, string>): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AEP_')));
  const child = spawn('npm', ['start'], { cwd: repoRoot, env: { ...inherited, ...env }, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

/** The first stack still works: a POST is stored and an SSE replay serves it, on the same database process. */
async function firstStackServes(session: string): Promise<void> {
  const event = { aep: '0.1', id: `01JX${Date.now().toString().padStart(22, '0')}`, type: 'session.started', time: new Date().toISOString(), source: `aep://test/agent/a/session/${session}`, agent: 'a', session, seq: 0 };
  const posted = await fetch(`${first.baseUrl}/events`, { method: 'POST', headers: { authorization: `Bearer ${first.devToken}`, 'aep-version': '0.1', 'content-type': 'application/json' }, body: JSON.stringify(event) });
  expect([posted.status, await posted.json()]).toEqual([202, { accepted: 1, stored: 1, duplicates: 0 }]);
  const replay = await openStream({ from: 'all', live: '0', filter: JSON.stringify({ session: [session] }) }, { baseUrl: first.baseUrl, token: first.devToken });
  expect(replay.status).toBe(200);
  await replay.ended;
  expect(replay.messages().map((message) => message.json.id)).toEqual([event.id]);
  expect(isProcessAlive(jvmPid)).toBe(true);
  expect(Number(readFileSync(join(dataDir, 'dynamodb', PID_FILE), 'utf8').trim())).toBe(jvmPid);
  expect(first.output()).not.toMatch(/ECONNREFUSED|"level":"error"|unavailable/);
}

describe('a second npm start beside a running stack', () => {
  it('on the same port and data folder: exits 2 naming AEP_PORT, and the first stack serves on, its DynamoDB Local untouched', async () => {
    const second = await npmStart({ AEP_PORT: port, AEP_DATA_DIR: dataDir });
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`error: port ${port} is already in use (another \`npm start\`, or another server): nothing was started.`);
    expect(second.stderr).toMatch(/Set AEP_PORT to another port, e\.g\. AEP_PORT=\d+ npm start \(AEP_PORT=0 picks a free one\)\./);
    expect(second.stderr).not.toMatch(/EADDRINUSE|\n\s+at /);
    expect(second.stdout).not.toContain('AEP relay ready');
    // The first stack still holds its data folder.
    expect(Number(readFileSync(join(dataDir, LOCK_FILE), 'utf8').trim())).toBe(first.child.pid);
    await firstStackServes('second-start-port');
  }, 120_000);

  it('on another port and the same data folder: exits 2 naming AEP_DATA_DIR and the owner, and the first stack serves on', async () => {
    const second = await npmStart({ AEP_PORT: '0', AEP_DATA_DIR: dataDir });
    expect(second.code).toBe(2);
    expect(second.stderr).toContain(`error: the data folder ${dataDir} is in use by another local stack (pid ${first.child.pid}): nothing was started.`);
    expect(second.stderr).toContain('Set AEP_DATA_DIR to another folder, or run npm start -- --in-memory.');
    expect(second.stderr).not.toMatch(/\n\s+at /);
    await firstStackServes('second-start-folder');
  }, 120_000);

  it('touches no data folder when the port is taken', async () => {
    const second = await npmStart({ AEP_PORT: port, AEP_DATA_DIR: otherDataDir });
    expect(second.code).toBe(2);
    expect(existsSync(otherDataDir)).toBe(false);
  }, 120_000);
});
