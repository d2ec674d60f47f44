/**
 * `aep-relay export` of a tenant-wide window round-trips: a tenant with several sessions (some
 * outside the window, some not matching the pattern, one with a gap, a seq-less
 * `attention.routed`, a second emitter under one session name, and a routed command), exported,
 * then POSTed into a new tenant, stores the same texts byte for byte, read from the log itself.
 * An export stopped (by --max-events, by a kill) and resumed writes the same file as one run.
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, appendFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { QueryCommand } from '@aws-sdk/client-dynamodb';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { runExport } from '../../bin/cli/export/run-export.ts';
import { SimulatedAgent } from '../../local/agent/simulated-agent.ts';
import { mintTokenSecret, hashTokenSecret } from '../../src/auth/token-secret.ts';
import { isCommandType } from '../../src/protocol/type-grammar.ts';
import { eventKeys } from '../../src/store/keys.ts';
import { tenantTableStores } from '../../src/store/tenant-table.ts';
import { eventually } from '../support/history-fixtures.ts';
import { dynamoClient, eventLog, mintId, ndjson, postEvents, sessionEvent, storedTexts, tableNames, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket } from '../support/ws-client.ts';

const tenant = uniqueName('exsrc');
const tag = mintId().slice(-6).toLowerCase();
const name = (suffix: string) => `build-${tag}-${suffix}`;
/** Sessions the pattern `build-{tag}-*` and the window select, in the file's (name) order. */
const chosen = [name('a'), name('b'), name('c')];
const old = name('old');
const late = name('late');
const other = `deploy-${tag}-d`;
let token = '';
let since = '';
let until = '';
const postedInside: string[] = [];
const postedOutside: string[] = [];
let commandId = '';
const directory = mkdtempSync(join(tmpdir(), 'aep-export-window-'));

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function post(events: Array<Record<string, unknown>>, into: string[]): Promise<void> {
  const response = await postEvents(ndjson(events), { token, contentType: 'application/x-ndjson' });
  if (response.status !== 202) throw new Error(`POST /events answered ${response.status}: ${await response.text()}`);
  into.push(...events.map((event) => JSON.stringify(event)));
}

/** A session's stored texts in history order, with their admission times, read from the table itself. */
async function storedWithTimes(owner: string, session: string): Promise<Array<{ raw: string; storedAt: number }>> {
  const client = dynamoClient();
  const times = new Map<string, number>();
  let start: Record<string, never> | undefined;
  do {
    const page = await client.send(
      new QueryCommand({ TableName: tableNames.events, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: eventKeys.sessionPartition(owner, session) } }, ConsistentRead: true, ExclusiveStartKey: start }),
    );
    for (const item of page.Items ?? []) if (item.raw?.S !== undefined) times.set(item.raw.S, Number(item.storedAt?.N));
    start = page.LastEvaluatedKey as typeof start;
  } while (start !== undefined);
  return (await storedTexts(eventLog(), owner, session)).map((raw) => ({ raw, storedAt: times.get(raw) ?? Number.NaN }));
}

const isCommand = (text: string) => isCommandType((JSON.parse(text) as { type: string }).type);

/** What the window export of a session must hold: its stored texts admitted inside the window, commands left out. */
async function expectedOf(session: string): Promise<string[]> {
  const sinceMs = Date.parse(since);
  const untilMs = Date.parse(until);
  return (await storedWithTimes(tenant, session)).filter(({ raw, storedAt }) => storedAt >= sinceMs && storedAt < untilMs && !isCommand(raw)).map(({ raw }) => raw);
}

const quiet = () => {
  const errors: string[] = [];
  const lines: string[] = [];
  return { io: { out: (line: string) => lines.push(line), err: (line: string) => errors.push(line) }, errors, lines };
};
const selection = () => ['--sessions', `build-${tag}-*`, '--since', since, '--until', until];
const http = () => ['--url', inject('baseUrl'), '--token', token];

beforeAll(async () => {
  token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
  // Before the window: a whole session, and the start of session a.
  await post([0, 1, 2].map((seq) => sessionEvent(old, seq)), postedOutside);
  await post([0, 1].map((seq) => sessionEvent(name('a'), seq)), postedOutside);
  await sleep(1500);
  since = new Date().toISOString();
  await sleep(500);
  // Inside: a gap (no seq 4), a seq-less attention.routed in its place, a second emitter under b's name.
  await post([2, 3, 5].map((seq) => sessionEvent(name('a'), seq)), postedInside);
  const routed = { aep: '0.1', id: mintId(), type: 'attention.routed', time: new Date().toISOString(), source: 'aep://host/agent/sink', agent: 'sink', session: name('a'), subject: mintId(), data: { to: 'phone' } };
  await post([routed], postedInside);
  await post([6, 7].map((seq) => sessionEvent(name('a'), seq)), postedInside);
  await post(Array.from({ length: 30 }, (_, seq) => sessionEvent(name('b'), seq)), postedInside);
  await post([0, 1, 2].map((seq) => sessionEvent(name('b'), seq, { agent: 'other', source: `aep://test/agent/other/session/${name('b')}` })), postedInside);
  await post([0, 1, 2].map((seq) => sessionEvent(other, seq)), postedInside);
  // Session c: a live agent and a routed command (seq-less, stored before it is delivered).
  const agent = new SimulatedAgent({ baseUrl: inject('baseUrl'), token, agent: 'sim', session: name('c'), accepts: ['control.pause'], epoch: 1 });
  await agent.start();
  await sleep(300);
  const phone = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token });
  commandId = mintId();
  phone.send({ aep: '0.1', id: commandId, type: 'control.pause', time: new Date().toISOString(), source: 'aep://phone/agent/phone', agent: 'phone', session: name('c'), data: {} });
  await eventually(async () => agent.receivedCommands.length, (count) => count === 1, 30_000);
  await sleep(300);
  await phone.close();
  await agent.stop();
  await sleep(1000);
  until = new Date().toISOString();
  await sleep(500);
  // After the window: more of b, and a session that starts after it.
  await post([30, 31].map((seq) => sessionEvent(name('b'), seq)), postedOutside);
  await post([0].map((seq) => sessionEvent(late, seq)), postedOutside);
  // The listing is folded by fan-out: wait until every session shows.
  const listed = async () => {
    const response = await fetch(`${inject('baseUrl')}/sessions?limit=1000`, { headers: { authorization: `Bearer ${token}` } });
    return ((await response.json()) as { sessions: Array<{ session: string }> }).sessions.map((summary) => summary.session);
  };
  const every = [...chosen, old, late, other];
  const seen = await eventually(listed, (sessions) => every.every((session) => sessions.includes(session)), 60_000);
  expect(every.filter((session) => !seen.includes(session))).toEqual([]);
}, 240_000);

describe('a tenant-wide export of a window', () => {
  let file = '';
  let whole = '';

  it('holds the chosen sessions in name order, each its stored texts of the window byte for byte, commands left out', async () => {
    file = join(directory, 'window.jsonl');
    const run = quiet();
    expect(await runExport([...selection(), '--out', file, ...http()], {}, run.io)).toBe(0);
    expect(run.errors).toEqual([]);
    whole = readFileSync(file, 'utf8');
    const expected = (await Promise.all(chosen.map(expectedOf))).flat();
    expect(whole).toBe(expected.map((line) => `${line}\n`).join(''));
    expect(run.lines).toEqual([`exported ${expected.length} events of 3 sessions in ${file} (1 commands left out)`]);
    const lines = whole.split('\n').filter((line) => line !== '');
    // What was posted inside the window is there (the other session's aside), each emitter's in its order
    // (two emitters under one name interleave by position); nothing from outside.
    const sourceOf = (line: string) => (JSON.parse(line) as { source: string }).source;
    for (const source of new Set(postedInside.map(sourceOf))) {
      const posted = postedInside.filter((line) => sourceOf(line) === source && !line.includes(other));
      expect(lines.filter((line) => sourceOf(line) === source && postedInside.includes(line))).toEqual(posted);
    }
    expect(lines.filter((line) => postedInside.includes(line)).length).toBe(postedInside.filter((line) => !line.includes(other)).length);
    expect(lines.filter((line) => postedOutside.includes(line))).toEqual([]);
    expect(lines.some((line) => line.includes(other))).toBe(false);
    // The command is left out; the agent's answers to it (which name it as their cause) are not.
    expect(lines.some((line) => line.includes(`"id":"${commandId}"`))).toBe(false);
    expect(lines.some((line) => line.includes(`"cause":"${commandId}"`))).toBe(true);
    // The agent's own events of session c are in it, and the seq-less event sits between seq 5 and 6.
    expect(lines.filter((line) => line.includes(`"session":"${name('c')}"`)).length).toBeGreaterThan(1);
    const routedAt = lines.findIndex((line) => line.includes('attention.routed'));
    expect(JSON.parse(lines[routedAt - 1] as string)).toMatchObject({ seq: 5 });
    expect(JSON.parse(lines[routedAt + 1] as string)).toMatchObject({ seq: 6 });
  });

  it('POSTed into a new tenant, stores the same events byte for byte', async () => {
    const restored = uniqueName('exdst');
    const emit = await tenantWithToken(restored, ['emit']);
    const response = await postEvents(whole, { token: emit, contentType: 'application/x-ndjson' });
    const count = whole.split('\n').filter((line) => line !== '').length;
    expect(response.status).toBe(202);
    expect(await response.json()).toMatchObject({ accepted: count, stored: count, duplicates: 0 });
    for (const session of chosen) {
      expect(await storedTexts(eventLog(), restored, session)).toEqual(await expectedOf(session));
    }
    // Posting it again stores nothing new: every line is a duplicate of itself.
    const again = await postEvents(whole, { token: emit, contentType: 'application/x-ndjson' });
    expect(await again.json()).toMatchObject({ accepted: count, stored: 0, duplicates: count });
  });

  it('with --commands include keeps the command in its place, and POST /events refuses that file whole', async () => {
    const withCommands = join(directory, 'with-commands.jsonl');
    expect(await runExport([...selection(), '--commands', 'include', '--out', withCommands, ...http()], {}, quiet().io)).toBe(0);
    const lines = readFileSync(withCommands, 'utf8').split('\n').filter((line) => line !== '');
    const stored = (await storedWithTimes(tenant, name('c'))).map(({ raw }) => raw);
    const command = stored.find((text) => text.includes(`"id":"${commandId}"`)) as string;
    expect(lines).toContain(command);
    expect(lines.filter((line) => line !== command)).toEqual(whole.split('\n').filter((line) => line !== ''));
    const restored = uniqueName('exref');
    const response = await postEvents(readFileSync(withCommands, 'utf8'), { token: await tenantWithToken(restored, ['emit']), contentType: 'application/x-ndjson' });
    expect(response.status).toBe(403);
    expect(await response.json()).toMatchObject({ error: 'unauthorized', line: lines.indexOf(command) });
  });

  it('resumed after --max-events stops, and after lines written past the checkpoint, is the same file', async () => {
    const out = join(directory, 'stepped.jsonl');
    const args = [...selection(), '--out', out, '--page-size', '4', '--max-events', '7', ...http()];
    let runs = 0;
    let code = -1;
    while (code !== 0 && runs < 50) {
      const run = quiet();
      code = await runExport(runs === 0 ? args : ['--resume', `${out}.checkpoint`, '--max-events', '7', '--page-size', '4', ...http()], {}, run.io);
      runs += 1;
      if (code === 3) {
        expect(run.errors[0]).toMatch(/^stopped at --max-events: \d+ events of 3 sessions/);
        // A kill between a page's write and its checkpoint leaves lines (or a torn one) past it.
        if (runs === 2) appendFileSync(out, (whole.split('\n')[0] as string) + '\n{"aep":"0.1","id":"torn');
      } else expect(code).toBe(0);
    }
    expect(runs).toBeGreaterThan(2);
    expect(readFileSync(out, 'utf8')).toBe(whole);
    // Complete: a rerun writes nothing more.
    expect(await runExport(['--resume', `${out}.checkpoint`, ...http()], {}, quiet().io)).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(whole);
  });

  it('resumed after the process was killed mid-way, is the same file', async () => {
    const out = join(directory, 'killed.jsonl');
    const child = spawn(process.execPath, ['bin/aep-relay.mjs', 'export', ...selection(), '--out', out, '--page-size', '1', ...http()], { stdio: 'ignore' });
    const exited = new Promise((resolve) => child.once('exit', resolve));
    // Polled often: one page of one event is a request, so the whole run takes a second or two.
    const deadline = Date.now() + 60_000;
    while ((existsSync(out) ? statSync(out).size : 0) <= 1500 && Date.now() < deadline) await sleep(5);
    child.kill('SIGKILL');
    await exited;
    const partial = readFileSync(out, 'utf8');
    expect(partial.length).toBeGreaterThan(0);
    expect(partial.length).toBeLessThan(whole.length);
    expect(await runExport([...selection(), '--out', out, ...http()], {}, quiet().io)).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(whole);
  });

  it('in direct mode writes the same file', async () => {
    const out = join(directory, 'direct.jsonl');
    const env = { AEP_EVENTS_TABLE: tableNames.events, AEP_CONNECTIONS_TABLE: tableNames.connections, AEP_TENANTS_TABLE: tableNames.tenants, AEP_DYNAMODB_ENDPOINT: inject('dynamoEndpoint') };
    expect(await runExport([...selection(), '--out', out, '--tenant', tenant], env, quiet().io)).toBe(0);
    expect(readFileSync(out, 'utf8')).toBe(whole);
  });

  it('at a token ceiling below full writes down-levelled copies, not the stored texts', async () => {
    const { tokens } = tenantTableStores(dynamoClient(), tableNames.tenants, Date.now);
    const capped = mintTokenSecret();
    await tokens.putToken({ tenant, tokenId: `tok-${mintId().toLowerCase()}`, scopes: ['consume'], maxCapture: 'none' }, hashTokenSecret(capped));
    const out = join(directory, 'capped.jsonl');
    expect(await runExport([...selection(), '--out', out, '--url', inject('baseUrl'), '--token', capped], {}, quiet().io)).toBe(0);
    const lines = readFileSync(out, 'utf8').split('\n').filter((line) => line !== '');
    expect(lines.length).toBe(whole.split('\n').filter((line) => line !== '').length);
    expect(lines.filter((line) => !whole.includes(line)).length).toBeGreaterThan(0);
    expect(lines.every((line) => (JSON.parse(line) as { data?: unknown }).data === undefined)).toBe(true);
  });

  it('refuses to resume into another selection, or into a file without a checkpoint', async () => {
    const run = quiet();
    expect(await runExport(['--sessions', 'other-*', '--resume', join(directory, 'window.jsonl.checkpoint'), ...http()], {}, run.io)).toBe(2);
    expect(run.errors[0]).toMatch(/continues another export/);
    const bare = join(directory, 'bare.jsonl');
    appendFileSync(bare, (whole.split('\n')[0] as string) + '\n');
    const refused = quiet();
    expect(await runExport([...selection(), '--out', bare, ...http()], {}, refused.io)).toBe(2);
    expect(refused.errors[0]).toMatch(/already holds lines and has no checkpoint/);
  });
});
