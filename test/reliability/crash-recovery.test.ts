/**
 * kill -9 of the local stack during ingest, then a restart on the same data folder (persistent
 * mode). The promise: a 202 means every event of the request is durably stored, so each one
 * is in the log after the restart; what got no answer may or may not be stored, and a retry
 * with the same ids stores each event once.
 *
 * DynamoDB Local is a child JVM of the stack that exits when the stack's process is gone, SIGKILL
 * included (`local/dynamodb-local.ts`), so the restart finds the data folder free (its lock
 * stale, `local/data-folder-lock.ts`), which this test checks too.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isProcessAlive, killStaleDynamoDbLocal, PID_FILE } from '../../local/dynamodb-local.ts';
import { startStackProcess } from '../support/local-stack-process.ts';
import type { StackProcess } from '../support/local-stack-process.ts';
import { openStream } from '../support/sse-client.ts';
import { helloSocket, isType } from '../support/ws-client.ts';
import { eventOf, eventually, ownStackOf, post, sleep, TEST_TOKEN, uniqueName } from './support/fault-stack.ts';

const dataDir = mkdtempSync(join(tmpdir(), 'aep-crash-'));
const pidFile = join(dataDir, 'dynamodb', PID_FILE);
const env = { AEP_DATA_DIR: dataDir, AEP_DEV_TOKEN: TEST_TOKEN, AEP_REPLAY_BUFFER: '10000', AEP_LOCAL_POLL_MS: '50' };
const started: StackProcess[] = [];

afterAll(async () => {
  for (const stack of started) await stack.stop('SIGKILL');
  // Whatever JVM is still registered for the data folder (the test failed before a clean stop).
  await killStaleDynamoDbLocal(pidFile);
  rmSync(dataDir, { recursive: true, force: true });
}, 30_000);


describe('kill -9 of the local stack during ingest', () => {
  it('keeps every event that got a 202; the JVM goes with the stack, the restarted stack serves them all, and stores retried events once', async () => {
    const first = await startStackProcess({ env, args: [] });
    started.push(first);
    const jvmPid = Number(readFileSync(pidFile, 'utf8').trim());
    expect(isProcessAlive(jvmPid)).toBe(true);

    // Six emitters post batches of five back to back, each for its own session.
    const sessions = Array.from({ length: 6 }, (_, index) => uniqueName(`crash-${index}`));
    const acked = new Map<string, Array<Record<string, unknown>>>(sessions.map((session) => [session, []]));
    const unanswered: Array<Array<Record<string, unknown>>> = [];
    let ackedCount = 0;
    const emitters = sessions.map(async (session) => {
      for (let seq = 0; ; seq += 5) {
        const batch = Array.from({ length: 5 }, (_, offset) => eventOf(session, seq + offset));
        try {
          const { status } = await post(first.baseUrl, first.devToken, batch);
          expect(status).toBe(202);
          acked.get(session)?.push(...batch);
          ackedCount += batch.length;
        } catch {
          // The stack died with this request in flight: no answer, no promise.
          unanswered.push(batch);
          return;
        }
      }
    });
    await eventually(() => ackedCount >= 150, () => `only ${ackedCount} events acknowledged`, 30_000);

    // SIGKILL the stack itself, mid-ingest.
    process.kill(first.child.pid as number, 'SIGKILL');
    await Promise.all(emitters);
    const ackedBeforeKill = [...acked.values()].flat();
    console.log(`[crash] ${ackedBeforeKill.length} events acknowledged before kill -9, ${unanswered.flat().length} in flight`);
    // Its JVM does not outlive it (it exits when its stdin, held by the stack, ends).
    await eventually(() => !isProcessAlive(jvmPid), () => `DynamoDB Local (pid ${jvmPid}) outlived its stack`, 20_000);

    const second = await startStackProcess({ env, args: [] });
    started.push(second);
    const restarted = ownStackOf(second);
    expect(Number(readFileSync(pidFile, 'utf8').trim())).not.toBe(jvmPid);

    // Every acknowledged event is in the log, exactly once; an unanswered one at most once.
    const unansweredIds = new Set(unanswered.flat().map((event) => String(event.id)));
    for (const session of sessions) {
      const storedIds = (await restarted.stored(session)).map((event) => String(event.id));
      const ackedIds = (acked.get(session) ?? []).map((event) => String(event.id));
      expect(storedIds.slice(0, ackedIds.length), session).toEqual(ackedIds);
      expect(storedIds.slice(ackedIds.length).every((id) => unansweredIds.has(id)), session).toBe(true);
      expect(new Set(storedIds).size).toBe(storedIds.length);
    }

    // The relay serves them from replay.
    const replay = await openStream({ from: 'all', live: '0', filter: JSON.stringify({ session: sessions }) }, { baseUrl: second.baseUrl, token: second.devToken });
    expect(replay.status).toBe(200);
    await replay.ended;
    const replayed = new Set(replay.messages().map((message) => String(message.json.id)));
    expect(ackedBeforeKill.filter((event) => !replayed.has(String(event.id)))).toEqual([]);

    // The emitters retry what got no answer with the same ids: stored once each.
    const watcher = await helloSocket({}, { baseUrl: second.baseUrl, token: second.devToken });
    watcher.send({ type: 'subscribe', id: 'after', filter: { session: sessions } });
    await watcher.next(isType('subscribed'));
    for (const batch of unanswered) {
      const { status, body } = await post(second.baseUrl, second.devToken, batch);
      expect(status, JSON.stringify(body)).toBe(202);
      expect((body.stored as number) + (body.duplicates as number)).toBe(batch.length);
    }
    for (const session of sessions) {
      const storedIds = (await restarted.stored(session)).map((event) => String(event.id));
      const expected = [...(acked.get(session) ?? []), ...unanswered.flat().filter((event) => event.session === session)].map((event) => String(event.id));
      expect(storedIds, session).toEqual(expected);
    }
    // And the restarted stack delivers live.
    const fresh = eventOf(sessions[0] as string, 100_000);
    expect((await post(second.baseUrl, second.devToken, [fresh])).status).toBe(202);
    await watcher.next((frame) => frame.id === fresh.id);
    watcher.socket.terminate();
    await sleep(50);
    await restarted.stop();
    expect(isProcessAlive(Number(second.child.pid))).toBe(false);
  }, 150_000);
});
