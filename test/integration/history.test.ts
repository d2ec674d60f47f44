import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { runExport } from '../../bin/cli/export/run-export.ts';
import { SimulatedAgent } from '../../local/agent/simulated-agent.ts';
import { QuotaStore } from '../../src/store/quota-store.ts';
import { GetItemCommand, QueryCommand } from '@aws-sdk/client-dynamodb';
import { eventKeys } from '../../src/store/keys.ts';
import { eventually, expireEvents, postSequence } from '../support/history-fixtures.ts';
import { getPage, wholeHistory } from '../support/history-client.ts';
import { dynamoClient, eventLog, mintId, ndjson, postEvents, sessionEvent, storedTexts, tableNames, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { helloSocket, untilClaimed } from '../support/ws-client.ts';

/**
 * One long session shared by the tests of this file (2,400 posted events plus what a live
 * agent and its controller add: two commands in the middle, and the agent's answers), built
 * once because DynamoDB Local stores a few hundred events a second. Each half is over a page
 * at its largest (1,000), so every read crosses pages.
 */
const HALF = 1_200;
const tenant = uniqueName('hist');
const session = uniqueName('long');
let token = '';
let posted: string[] = [];
/** Every stored text of the session in position order, read through replay (a different read than history). */
let stored: string[] = [];
let commandIds: string[] = [];

beforeAll(async () => {
  token = await tenantWithToken(tenant, ['emit', 'consume', 'control']);
  posted = await postSequence(token, session, 0, HALF, { agent: 'sim' });
  const agent = new SimulatedAgent({ baseUrl: inject('baseUrl'), token, agent: 'sim', session, accepts: ['control.pause', 'control.resume'], epoch: 1 });
  await agent.start();
  await untilClaimed({ token }, session);
  const phone = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token });
  for (const type of ['control.pause', 'control.resume']) {
    const command = { aep: '0.1', id: mintId(), type, time: new Date().toISOString(), source: 'aep://phone/agent/phone', agent: 'phone', session, data: {} };
    phone.send(command);
    commandIds.push(command.id);
    // Routed commands are stored before they are delivered; the agent's answers follow them.
    await eventually(async () => agent.receivedCommands.length, (count) => count === commandIds.length, 30_000);
  }
  await new Promise((resolve) => setTimeout(resolve, 300));
  await phone.close();
  await agent.stop();
  posted.push(...(await postSequence(token, session, 2, HALF, { agent: 'sim' })));
  stored = await storedTexts(eventLog(), tenant, session);
}, 240_000);

describe('GET /history of a 2,400-event session', () => {
  it('holds the posted events and the routed commands', () => {
    expect(stored.filter((text) => posted.includes(text))).toEqual(posted);
    expect(commandIds.every((id) => stored.some((text) => text.includes(id)))).toBe(true);
  });

  it('pages forward: every stored event exactly once, byte-identical, in (epoch, seq) order with commands in place', async () => {
    const { lines, pages } = await wholeHistory(token, { session }, 700);
    expect(lines).toEqual(stored);
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(stored.length / 700));
    const firstCommand = lines.findIndex((line) => line.includes(commandIds[0] as string));
    expect(firstCommand).toBeGreaterThan(HALF);
    expect(firstCommand).toBeLessThan(lines.length - HALF);
  });

  it('pages backward (order=desc): the same events exactly once, newest first', async () => {
    const { lines } = await wholeHistory(token, { session, order: 'desc' }, 1000);
    expect(lines).toEqual([...stored].reverse());
  });

  it('reads between positions, exclusive, and the middle of the session holds the agent and its commands', async () => {
    const { lines } = await wholeHistory(token, { session, after: `0:${HALF - 1}`, before: '2:0' }, 1000);
    expect(lines).toEqual(stored.slice(HALF, stored.length - HALF));
    expect(lines.filter((line) => (JSON.parse(line) as { type: string }).type.startsWith('control.pause'))).toHaveLength(1);
    const { lines: tail } = await wholeHistory(token, { session, after: `2:${HALF - 3}` }, 1000);
    expect(tail).toEqual(stored.slice(-2));
  });

  it('filters in the attr-match dialect; a page reads at most limit events, so filtered pages may be short', async () => {
    const { lines, pages } = await wholeHistory(token, { session, filter: JSON.stringify({ type: ['control.pause', 'control.resume'] }) }, 1000);
    expect(lines.map((line) => (JSON.parse(line) as { id: string }).id)).toEqual(commandIds);
    const acks = await wholeHistory(token, { session, filter: JSON.stringify({ type: 'control.*', agent: 'sim' }) }, 1000);
    expect(acks.lines.map((line) => (JSON.parse(line) as { cause: string }).cause)).toEqual(commandIds);
    expect(pages).toBeGreaterThanOrEqual(Math.ceil(stored.length / 1000));
    const first = await getPage('/history', token, { session, filter: '{"seq":1}' });
    expect(first.status).toBe(400);
    expect(JSON.parse(first.body)).toMatchObject({ error: 'invalid-filter' });
  });

  it('refuses cursors that were altered, belong to another tenant, or change the query', async () => {
    const page = await getPage('/history', token, { session, limit: '10' });
    const cursor = page.next as string;
    expect(cursor).toBeDefined();
    const [body = '', signature = ''] = cursor.split('.');
    const decoded = JSON.parse(Buffer.from(body, 'base64url').toString('utf8')) as Record<string, unknown>;
    const forged = Buffer.from(JSON.stringify({ ...decoded, query: { ...(decoded.query as object), session: 'other' } })).toString('base64url');
    for (const bad of [`${forged}.${signature}`, `${body}.${signature.slice(1)}`, body, 'not-a-cursor', `${body}.${signature}.x`]) {
      const refused = await getPage('/history', token, { cursor: bad });
      expect(refused.status, bad).toBe(400);
      expect(JSON.parse(refused.body)).toMatchObject({ error: 'invalid-cursor' });
    }
    const otherTenant = uniqueName('hist-other');
    const otherToken = await tenantWithToken(otherTenant, ['consume']);
    const foreign = await getPage('/history', otherToken, { cursor });
    expect(foreign.status).toBe(403);
    expect(JSON.parse(foreign.body)).toMatchObject({ error: 'unauthorized' });
    const sessionsCursor = await getPage('/sessions', token, { cursor });
    expect(sessionsCursor.status).toBe(400);
    const mixed = await getPage('/history', token, { cursor, session });
    expect(mixed.status).toBe(400);
    const next = await getPage('/history', token, { cursor, limit: '10' });
    expect(next.status).toBe(200);
    expect(next.lines).toEqual(stored.slice(10, 20));
  });
});

describe('GET /history requests', () => {
  it('bounds limit and requires a session and the consume scope', async () => {
    expect((await getPage('/history', token, { session, limit: '1001' })).status).toBe(400);
    expect((await getPage('/history', token, { session, limit: '0' })).status).toBe(400);
    expect((await getPage('/history', token, {})).status).toBe(400);
    expect((await getPage('/history', token, { session, after: '1' })).status).toBe(400);
    expect((await getPage('/history', token, { session, after: '2:5', before: '2:5' })).status).toBe(400);
    expect((await getPage('/history', token, { session, after: '2:6', before: '1:0' })).status).toBe(400);
    const emitOnly = await tenantWithToken(tenant, ['emit']);
    expect((await getPage('/history', emitOnly, { session })).status).toBe(403);
    const anonymous = await fetch(`${inject('baseUrl')}/history?session=${session}`);
    expect(anonymous.status).toBe(401);
    // The query-string fallback is for EventSource (GET /stream); history and the session list
    // take the header only, so a token never has to travel in their URLs.
    for (const path of ['/history', '/sessions']) {
      const inQuery = await fetch(`${inject('baseUrl')}${path}?session=${session}&access_token=${encodeURIComponent(token)}`);
      expect(inQuery.status, path).toBe(401);
    }
  });

  it('answers nothing for another tenant holding a session of the same name', async () => {
    const otherToken = await tenantWithToken(uniqueName('hist-b'), ['emit', 'consume']);
    const page = await getPage('/history', otherToken, { session });
    expect(page.status).toBe(200);
    expect(page.lines).toEqual([]);
    expect(page.next).toBeUndefined();
  });

  it('down-levels to the capture ceiling and is byte-identical without one', async () => {
    const small = uniqueName('cap');
    const secret = sessionEvent(small, 0, { type: 'tool.failed', capture: 'redacted', data: { tool: { name: 'Bash' }, error: { type: 'ExecError', message: 'SECRET path' } } });
    expect((await postEvents(JSON.stringify(secret), { token })).status).toBe(202);
    const asStored = await getPage('/history', token, { session: small });
    expect(asStored.lines).toEqual([JSON.stringify(secret)]);
    const ceiling = await getPage('/history', token, { session: small, capture: 'metadata' });
    expect(ceiling.lines).toHaveLength(1);
    const event = JSON.parse(ceiling.lines[0] as string) as { capture: string; data: { error?: { message?: string } } };
    expect(event.capture).toBe('metadata');
    expect(ceiling.body).not.toContain('SECRET');
    expect((await getPage('/history', token, { session: small, capture: 'everything' })).status).toBe(400);
  });

  it('reads an admission time window', async () => {
    const small = uniqueName('window');
    const first = await postSequence(token, small, 0, 3);
    await new Promise((resolve) => setTimeout(resolve, 50));
    const middle = Date.now();
    await new Promise((resolve) => setTimeout(resolve, 50));
    const second = await postSequence(token, small, 1, 3);
    expect((await wholeHistory(token, { session: small, since: String(middle) }, 100)).lines).toEqual(second);
    expect((await wholeHistory(token, { session: small, until: new Date(middle).toISOString() }, 100)).lines).toEqual(first);
    expect((await getPage('/history', token, { session: small, since: 'yesterday' })).status).toBe(400);
  });

  it('never shows expired events (DynamoDB Local keeps them: history filters on read)', async () => {
    const small = uniqueName('expired');
    const texts = await postSequence(token, small, 0, 4);
    await expireEvents(tenant, small, [0, 1]);
    expect((await wholeHistory(token, { session: small }, 100)).lines).toEqual(texts.slice(2));
    expect((await wholeHistory(token, { session: small, order: 'desc' }, 1)).lines).toEqual(texts.slice(2).reverse());
  });

  it("applies the tenant's retentionDays quota to new events", async () => {
    const retained = uniqueName('retain');
    const retainedToken = await tenantWithToken(retained, ['emit', 'consume']);
    const quotas = new QuotaStore(dynamoClient(), { tenantsTable: tableNames.tenants, connectionsTable: tableNames.connections, now: Date.now, cacheMs: 0 });
    expect(await quotas.setQuotas(retained, { retentionDays: 2 })).toBe(true);
    const small = uniqueName('retained');
    await postEvents(ndjson([sessionEvent(small, 0)]), { token: retainedToken, contentType: 'application/x-ndjson' });
    const client = dynamoClient();
    const page = await client.send(new QueryCommand({ TableName: tableNames.events, KeyConditionExpression: 'pk = :pk', ExpressionAttributeValues: { ':pk': { S: eventKeys.sessionPartition(retained, small) } }, ConsistentRead: true }));
    const expiresAt = Number(page.Items?.[0]?.expiresAt?.N);
    const twoDays = Math.floor(Date.now() / 1000) + 2 * 86_400;
    expect(Math.abs(expiresAt - twoDays)).toBeLessThan(120);
    const registry = await client.send(new GetItemCommand({ TableName: tableNames.events, Key: { pk: { S: eventKeys.sessionRegistryPartition(retained) }, sk: { S: small } }, ConsistentRead: true }));
    expect(Math.abs(Number(registry.Item?.expiresAt?.N) - twoDays)).toBeLessThan(120);
  });
});

describe('aep-relay export', () => {
  const directory = mkdtempSync(join(tmpdir(), 'aep-export-'));
  const httpArgs = () => ['--session', session, '--url', inject('baseUrl'), '--token', token];
  const quiet = () => {
    const errors: string[] = [];
    const lines: string[] = [];
    return { io: { out: (line: string) => lines.push(line), err: (line: string) => errors.push(line) }, errors, lines };
  };
  const fileLines = (path: string) => readFileSync(path, 'utf8').split('\n').filter((line) => line !== '');

  it('writes the whole session as JSONL: the stored events, byte-identical, to a file or to standard output', async () => {
    const out = join(directory, 'whole.jsonl');
    const run = quiet();
    expect(await runExport([...httpArgs(), '--out', out, '--page-size', '700'], {}, run.io)).toBe(0);
    expect(run.errors).toEqual([]);
    expect(readFileSync(out, 'utf8')).toBe(stored.map((line) => `${line}\n`).join(''));
    // Progress is drawn only where the caller can draw it (the bin passes it when stderr is a terminal).
    const progress: string[] = [];
    const drawn = quiet();
    expect(await runExport([...httpArgs(), '--out', join(directory, 'drawn.jsonl')], {}, { ...drawn.io, progress: (text: string) => progress.push(text) })).toBe(0);
    expect(progress.at(-2)).toBe(`exporting ${session}: ${stored.length} events`);
    expect(progress.at(-1)).toBe(`exported ${stored.length} events\n`);
    expect(drawn.errors).toEqual([]);
    const piped = quiet();
    expect(await runExport(httpArgs(), {}, piped.io)).toBe(0);
    expect(piped.lines).toEqual(stored);
  });

  it('resumes from the file after a torn last line, and after a cut just past a command: no duplicate, no gap', async () => {
    const torn = join(directory, 'torn.jsonl');
    writeFileSync(torn, stored.slice(0, 2345).map((line) => `${line}\n`).join('') + (stored[2345] as string).slice(0, 40));
    expect(await runExport([...httpArgs(), '--out', torn], {}, quiet().io)).toBe(0);
    expect(fileLines(torn)).toEqual(stored);
    const afterCommand = stored.findIndex((line) => line.includes(commandIds[1] as string)) + 1;
    const cut = join(directory, 'cut.jsonl');
    writeFileSync(cut, stored.slice(0, afterCommand).map((line) => `${line}\n`).join(''));
    expect(await runExport([...httpArgs(), '--out', cut], {}, quiet().io)).toBe(0);
    expect(fileLines(cut)).toEqual(stored);
  });

  it('resumes an export whose process was killed mid-way', async () => {
    const out = join(directory, 'killed.jsonl');
    const child = spawn(process.execPath, ['bin/aep-relay.mjs', 'export', ...httpArgs(), '--out', out, '--page-size', '50'], { stdio: 'ignore' });
    await eventually(async () => (existsSync(out) ? statSync(out).size : 0), (size) => size > 200_000, 30_000);
    child.kill('SIGKILL');
    await new Promise((resolve) => child.once('exit', resolve));
    const partial = fileLines(out).length;
    expect(partial).toBeGreaterThan(0);
    expect(partial).toBeLessThan(stored.length);
    expect(await runExport([...httpArgs(), '--out', out], {}, quiet().io)).toBe(0);
    expect(fileLines(out)).toEqual(stored);
  });

  it('exports in direct mode from DynamoDB with the same result', async () => {
    const env = {
      AEP_EVENTS_TABLE: tableNames.events,
      AEP_CONNECTIONS_TABLE: tableNames.connections,
      AEP_TENANTS_TABLE: tableNames.tenants,
      AEP_DYNAMODB_ENDPOINT: inject('dynamoEndpoint'),
    };
    const run = quiet();
    expect(await runExport(['--session', session, '--tenant', tenant], env, run.io)).toBe(0);
    expect(run.lines).toEqual(stored);
  });

  it('exits non-zero with the relay’s refusal, and 2 on bad usage', async () => {
    const emitOnly = await tenantWithToken(tenant, ['emit']);
    const refused = quiet();
    expect(await runExport(['--session', session, '--url', inject('baseUrl'), '--token', emitOnly], {}, refused.io)).toBe(1);
    expect(refused.errors).toEqual(['error: the relay refused the export: unauthorized: this token lacks the consume scope']);
    const badToken = quiet();
    expect(await runExport(['--session', session, '--url', inject('baseUrl'), '--token', 'aep_nope'], {}, badToken.io)).toBe(1);
    expect(badToken.errors[0]).toMatch(/^error: the relay refused the export: unauthenticated/);
    const usage = quiet();
    expect(await runExport(['--url', inject('baseUrl'), '--token', token], {}, usage.io)).toBe(2);
    expect(usage.errors[0]).toBe('error: export needs --session <id>, or --sessions <glob> and/or --since/--until for a tenant-wide export');
  });
});
