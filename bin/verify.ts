/**
 * `AEP_TOKEN=... npm run verify -- <BaseUrl>`: checks a deployed relay end to end through its
 * one base URL, as clients meet it, and prints one line per check and a summary (exit 1 if any
 * failed). The token needs every scope (emit, consume, control, admin): the operator's first
 * token does. It leaves two tokens it issued, and revoked, in the token's tenant.
 *
 * The token comes from the environment (`AEP_TOKEN`): `npm run` echoes its whole command line
 * to standard output (and so to CI logs), and shells keep it in their history. `--token` still
 * works, with a warning.
 *
 * Checks: discovery with and without a token, a POST, an EventSource-style stream with
 * `?access_token=` (a consume-only token issued for it: a URL's query ends up in access logs, so
 * the token given never travels there) and one with the Authorization header, a WebSocket subscribe, a command round
 * trip with the simulated agent, and a revocation that must cut the agent's socket.
 */
import { randomBytes } from 'node:crypto';
import WebSocket from 'ws';
import { SimulatedAgent } from '../local/agent/simulated-agent.ts';
import { HttpAdminClient } from '../src/admin/http-admin-client.ts';
import { ulidFactory } from '../src/protocol/ulid.ts';
import { UsageError } from './cli/cli-arguments.ts';
import { scriptArguments } from './cli/script-arguments.ts';

const mintId = ulidFactory(Date.now, (length) => randomBytes(length));
type Json = Record<string, unknown>;

const USAGE = `Usage: AEP_TOKEN=<token> npm run verify -- <BaseUrl> [--tenant <tenant>]

Checks a deployed (or local) relay end to end through its one base URL and prints one line per
check and a summary; exit 1 if any check failed. The token (AEP_TOKEN, in the environment: npm run
echoes its command line) needs emit, consume, control and admin: the operator's first token does.

  <BaseUrl>          the relay's base URL (https://..., or http:// for a local stack)
  --tenant <tenant>  the token's tenant (default: found from the token)
  --token <token>    instead of AEP_TOKEN (warned about: it is then on the command line)`;

const { values: options, positionals } = scriptArguments({
  command: 'npm run verify --',
  usage: USAGE,
  config: { options: { token: { type: 'string' }, tenant: { type: 'string' } }, allowPositionals: true },
  check: ({ positionals }) => {
    if (positionals.length !== 1 || !/^https?:\/\//.test(positionals[0] ?? '')) throw new UsageError('give the relay\'s base URL (http:// or https://), once');
  },
});
const tokenArgument = options.token;
const tokenFromEnvironment = process.env.AEP_TOKEN === '' ? undefined : process.env.AEP_TOKEN;
const token = tokenArgument ?? tokenFromEnvironment;
const baseUrl = (positionals[0] as string).replace(/\/+$/, '');
if (token === undefined) {
  console.error(`error: set AEP_TOKEN to a token with emit, consume, control and admin\n${USAGE.split('\n')[0] ?? ''}`);
  process.exit(2);
}
if (tokenArgument !== undefined) console.error('warning: --token puts the secret on the command line (npm run echoes it, shells keep it); set AEP_TOKEN instead');
const TIMEOUT_MS = Number(process.env.AEP_VERIFY_TIMEOUT_MS ?? 15_000);

const results: Array<{ name: string; ok: boolean; detail: string }> = [];
async function check(name: string, run: () => Promise<string>): Promise<void> {
  try {
    results.push({ name, ok: true, detail: await withTimeout(run(), name) });
  } catch (error) {
    results.push({ name, ok: false, detail: error instanceof Error ? error.message : String(error) });
  }
  const last = results[results.length - 1]!;
  console.log(`${last.ok ? 'PASS' : 'FAIL'}  ${name}: ${last.detail}`);
}

function withTimeout<T>(promise: Promise<T>, label: string): Promise<T> {
  return Promise.race([promise, new Promise<T>((_resolve, reject) => setTimeout(() => reject(new Error(`no answer within ${TIMEOUT_MS} ms (${label})`)), TIMEOUT_MS).unref())]);
}

/** A stream reader that resolves once an event with this id arrives (SSE `data:` lines). */
async function streamFor(url: string, headers: Record<string, string>): Promise<{ waitFor(id: string): Promise<void>; close(): void }> {
  const controller = new AbortController();
  const response = await fetch(url, { headers: { accept: 'text/event-stream', ...headers }, signal: controller.signal });
  if (response.status !== 200) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  let text = '';
  const seen = new Set<string>();
  const waiters = new Map<string, () => void>();
  void (async () => {
    const decoder = new TextDecoder();
    for await (const chunk of response.body as unknown as AsyncIterable<Uint8Array>) {
      text += decoder.decode(chunk, { stream: true });
      for (const line of text.split('\n')) {
        if (!line.startsWith('data:')) continue;
        const id = (JSON.parse(line.slice(5)) as Json).id;
        if (typeof id === 'string') {
          seen.add(id);
          waiters.get(id)?.();
        }
      }
      text = text.slice(text.lastIndexOf('\n') + 1);
    }
  })().catch(() => undefined);
  return {
    waitFor: (id) => (seen.has(id) ? Promise.resolve() : new Promise((resolve) => waiters.set(id, resolve))),
    close: () => controller.abort(),
  };
}

/** A WebSocket client that said hello and records frames. */
async function helloSocket(hello: Json, socketToken: string): Promise<{ socket: WebSocket; next(test: (frame: Json) => boolean): Promise<Json>; send(frame: Json): void }> {
  const socket = new WebSocket(`${baseUrl!.replace(/^http/, 'ws')}/socket`, { headers: { authorization: `Bearer ${socketToken}` } });
  const frames: Json[] = [];
  const waiters: Array<{ test: (frame: Json) => boolean; resolve: (frame: Json) => void }> = [];
  socket.on('message', (data) => {
    const frame = JSON.parse(String(data)) as Json;
    frames.push(frame);
    for (const waiter of [...waiters]) if (waiter.test(frame)) waiter.resolve(frame);
  });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_request, response) => reject(new Error(`handshake refused: HTTP ${response.statusCode}`)));
    socket.once('error', reject);
  });
  const next = (test: (frame: Json) => boolean) => new Promise<Json>((resolve) => {
    const seen = frames.find(test);
    if (seen !== undefined) resolve(seen);
    else waiters.push({ test, resolve });
  });
  const send = (frame: Json) => socket.send(JSON.stringify(frame));
  send({ type: 'hello', versions: ['0.1'], identity: {}, capabilities: {}, role: 'consumer', ...hello });
  await next((frame) => frame.type === 'hello');
  return { socket, next, send };
}

const session = `verify-${mintId().slice(-10).toLowerCase()}`;
const event = { aep: '0.1', id: mintId(), type: 'progress.status', time: new Date().toISOString(), source: 'aep://verify/agent/verify', agent: 'verify', session, seq: 0, data: { message: 'npm run verify' } };
const streamQuery = `filter=${encodeURIComponent(JSON.stringify({ session }))}`;
const opened: Array<{ close(): void }> = [];

await check('discovery with a token', async () => {
  const response = await fetch(`${baseUrl}/.well-known/aep`, { headers: { authorization: `Bearer ${token}` } });
  const body = (await response.json()) as Json;
  if (response.status !== 200 || !Array.isArray(body.aep)) throw new Error(`HTTP ${response.status}: ${JSON.stringify(body)}`);
  return `200, aep ${JSON.stringify(body.aep)}, endpoints ${JSON.stringify(body.endpoints)}`;
});
await check('discovery without a token', async () => {
  const response = await fetch(`${baseUrl}/.well-known/aep`);
  const body = (await response.json()) as Json;
  if (response.status === 200 && Array.isArray(body.aep)) return '200: served without a token';
  if (response.status === 401 && body.error === 'unauthenticated') return '401 unauthenticated: this relay asks a token for discovery';
  throw new Error(`HTTP ${response.status}: ${JSON.stringify(body)}`);
});
const admin = new HttpAdminClient(baseUrl, token);
let queryStream: Awaited<ReturnType<typeof streamFor>> | undefined;
let headerStream: Awaited<ReturnType<typeof streamFor>> | undefined;
let consumer: Awaited<ReturnType<typeof helloSocket>> | undefined;
let queryToken: { tenant: string; tokenId: string } | undefined;
await check('stream with ?access_token= (EventSource style)', async () => {
  const tenant = await tenantOfToken();
  const issued = await admin.issueToken({ tenant, scopes: ['consume'], label: 'npm run verify: ?access_token= stream (revoked at the end)', expiresInSeconds: 3600 });
  queryToken = { tenant, tokenId: issued.tokenId };
  queryStream = await streamFor(`${baseUrl}/stream?${streamQuery}&access_token=${encodeURIComponent(issued.token)}`, {});
  opened.push(queryStream);
  return '200 text/event-stream, with a consume-only token issued for it';
});
await check('stream with the Authorization header', async () => {
  headerStream = await streamFor(`${baseUrl}/stream?${streamQuery}`, { authorization: `Bearer ${token}` });
  opened.push(headerStream);
  return '200 text/event-stream';
});
await check('WebSocket subscribe', async () => {
  consumer = await helloSocket({}, token);
  opened.push({ close: () => consumer?.socket.close() });
  consumer.send({ type: 'subscribe', id: 'verify', filter: { session } });
  const answer = await consumer.next((frame) => frame.id === 'verify');
  if (answer.type !== 'subscribed') throw new Error(JSON.stringify(answer));
  return 'subscribed';
});
await check('POST /events', async () => {
  const response = await fetch(`${baseUrl}/events`, { method: 'POST', headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json', 'aep-version': '0.1' }, body: JSON.stringify(event) });
  if (response.status !== 202) throw new Error(`HTTP ${response.status}: ${await response.text()}`);
  return '202';
});
await check('the event on the ?access_token= stream', async () => {
  if (queryStream === undefined) throw new Error('no stream');
  await queryStream.waitFor(event.id);
  return 'received';
});
await check('the event on the header stream', async () => {
  if (headerStream === undefined) throw new Error('no stream');
  await headerStream.waitFor(event.id);
  return 'received';
});
await check('the event on the WebSocket', async () => {
  if (consumer === undefined) throw new Error('no socket');
  await consumer.next((frame) => frame.id === event.id);
  return 'received';
});

// The agent gets a token of its own, so revoking it cuts only the agent.
let agent: SimulatedAgent | undefined;
let agentTokenId: string | undefined;
let agentTenant: string | undefined;
await check('command round trip with the simulated agent', async () => {
  const tenant = await tenantOfToken();
  agentTenant = tenant;
  const issued = await admin.issueToken({ tenant, scopes: ['emit', 'consume', 'control'], label: 'npm run verify (revoked at the end)', expiresInSeconds: 3600 });
  agentTokenId = issued.tokenId;
  const agentSession = `${session}-agent`;
  agent = new SimulatedAgent({ baseUrl: baseUrl!, token: issued.token, agent: 'verify-agent', session: agentSession, accepts: ['control.pause'] });
  await agent.start();
  const controller = await helloSocket({ role: 'both', identity: { agent: 'verify-controller' } }, token);
  opened.push({ close: () => controller.socket.close() });
  controller.send({ type: 'subscribe', id: 'acks', filter: { session: agentSession } });
  await controller.next((frame) => frame.id === 'acks');
  // Fan-out records the agent's claim from its first event: the roster shows it once it routes.
  for (let round = 0; ; round += 1) {
    controller.send({ type: 'roster', id: `claim-${round}` });
    const roster = await controller.next((frame) => frame.type === 'roster' && frame.id === `claim-${round}`);
    if ((roster.entries as Array<{ session?: unknown }> | undefined)?.some((entry) => entry.session === agentSession) === true) break;
    if (round >= 100) throw new Error(`the agent's claim of ${agentSession} never showed in the roster`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  const commandId = mintId();
  controller.send({ aep: '0.1', id: commandId, type: 'control.pause', time: new Date().toISOString(), source: 'aep://verify/agent/verify-controller', agent: 'verify-controller', session: agentSession });
  // The agent's own events caused by the command (its progress) may arrive before the ack: wait for the ack or a refusal.
  const ack = await controller.next((frame) => frame.cause === commandId && ['control.accepted', 'control.rejected', 'error'].includes(String(frame.type)));
  if (ack.type !== 'control.accepted') throw new Error(JSON.stringify(ack));
  return 'control.pause accepted by the agent';
});
await check('revocation cuts the agent socket', async () => {
  if (agent === undefined || agentTokenId === undefined || agentTenant === undefined) throw new Error('no agent to revoke');
  const closed = agent.closed();
  await admin.revokeToken(agentTenant, agentTokenId);
  await closed;
  return 'socket closed';
});

for (const stream of opened) stream.close();
await agent?.stop().catch(() => undefined);
if (queryToken !== undefined) await admin.revokeToken(queryToken.tenant, queryToken.tokenId).catch((error: unknown) => console.error(`could not revoke the ?access_token= token ${queryToken?.tokenId}: ${String(error)}`));
const failed = results.filter((result) => !result.ok).length;
console.log(`${results.length - failed}/${results.length} checks passed${failed === 0 ? '' : `, ${failed} failed`}`);
process.exit(failed === 0 ? 0 : 1);

/** The token's tenant: `--tenant`, else the first of the operator tenants whose tokens it may list (deployed `operator`, local `local`). */
async function tenantOfToken(): Promise<string> {
  if (options.tenant !== undefined) return options.tenant;
  for (const candidate of ['operator', 'local']) {
    if (await admin.listTokens(candidate).then(() => true, () => false)) return candidate;
  }
  throw new Error('could not tell the token\'s tenant: pass --tenant <tenant>');
}
