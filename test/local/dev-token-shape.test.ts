/**
 * `AEP_DEV_TOKEN` of the wrong shape: every request with it would be refused 401 (tokens are
 * `aep_` and 8 to 128 base64url characters), so `npm start` refuses it before starting anything,
 * saying the shape, with the usage exit code 2. Run as `npm start` runs it (`tsx local/start.ts`)
 * on a persistent data folder, which it must leave unmade: no DynamoDB Local ran on it, no dev
 * token was written, and nothing listens on the port it was given.
 */
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { freePort } from '../../local/free-port.ts';
import { startStackProcess } from '../support/local-stack-process.ts';

const parent = mkdtempSync(join(tmpdir(), 'aep-dev-token-'));
afterAll(() => rmSync(parent, { recursive: true, force: true }));

/** Whether something accepts TCP connections on the loopback port. */
function listening(port: number): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect(port, '127.0.0.1');
    socket.once('connect', () => {
      socket.destroy();
      resolve(true);
    });
    socket.once('error', () => resolve(false));
  });
}

describe('npm start with a malformed AEP_DEV_TOKEN', () => {
  it.each([
    ['without the prefix', 'my-dev-token'],
    ['too short', 'aep_short'],
    ['too long', `aep_${'x'.repeat(129)}`],
    ['with a space', 'aep_has space'],
  ])('refuses one %s with exit code 2 and the shape, having started nothing', async (_label, devToken) => {
    const dataDir = join(parent, `data-${Math.random().toString(36).slice(2)}`);
    const port = await freePort();
    const start = startStackProcess({ env: { AEP_DEV_TOKEN: devToken, AEP_PORT: String(port), AEP_DATA_DIR: dataDir }, args: [], timeoutMs: 60_000 });
    // A stack that started anyway is stopped before the test fails on it.
    const outcome = await start.then(
      async (stack) => {
        await stack.stop();
        return 'started';
      },
      (error: Error) => error.message,
    );
    expect(outcome).toMatch(/^local stack exited with code 2 before it was ready/);
    expect(outcome).toContain('AEP_DEV_TOKEN must be aep_ followed by 8 to 128 of A-Z a-z 0-9 _ - (aep_[A-Za-z0-9_-]{8,128})');
    expect(outcome).not.toContain('Dev token:');
    expect(existsSync(dataDir)).toBe(false);
    expect(await listening(port)).toBe(false);
  }, 90_000);
});
