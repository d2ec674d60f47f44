/**
 * Web Push for attention requests through the whole relay on the shared local stack: a
 * subscription registered over the HTTP API, an attention request POSTed, and what the push
 * service stand-in gets after the real lane (event log, stream, bridges consumer, `web-push`)
 * sends it: a message signed with the relay's VAPID key and encrypted to the subscription, which
 * the stand-in verifies and decrypts as a browser would. What a notification says is cut to the
 * subscription's ceiling; the follow-up replaces it; a push service answering 410 ends it.
 */
import { afterAll, beforeAll, describe, expect, inject, it } from 'vitest';
import { startPushServiceStandIn } from '../support/push-service-stand-in.ts';
import type { PushServiceStandIn, ReceivedPush, StandInSubscription } from '../support/push-service-stand-in.ts';
import { eventually } from '../support/history-fixtures.ts';
import { cli } from '../support/cli-run.ts';
import { postEvents, sessionEvent, tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';

const PROMPT = 'Drop the production customers table? It holds 2.1M rows.';
const LABELS = ['Yes, drop it now', 'No, keep the table'];
const CONTEXT_SECRET = 'sk-live-CONTEXT-ONLY';

let standIn: PushServiceStandIn;
beforeAll(async () => {
  standIn = await startPushServiceStandIn();
});
afterAll(async () => {
  await standIn?.close();
});

async function api(token: string, method: string, path: string, body?: unknown): Promise<Response> {
  return fetch(`${inject('baseUrl')}${path}`, {
    method,
    headers: { authorization: `Bearer ${token}`, 'content-type': 'application/json' },
    ...(body === undefined ? {} : { body: JSON.stringify(body) }),
  });
}

async function register(token: string, subscription: StandInSubscription, extra: Record<string, unknown> = {}): Promise<{ id: string; maxCapture: string }> {
  const response = await api(token, 'POST', '/push/subscriptions', { ...subscription, ...extra });
  expect(response.status, await response.clone().text()).toBe(201);
  return (await response.json()) as { id: string; maxCapture: string };
}

function request(session: string, seq: number, extra: Record<string, unknown> = {}): Record<string, unknown> {
  return sessionEvent(session, seq, {
    type: 'attention.requested',
    severity: 'warning',
    capture: 'full',
    data: { kind: 'permission', prompt: PROMPT, options: [{ id: 'yes', label: LABELS[0] }, { id: 'no', label: LABELS[1] }], context: { token: CONTEXT_SECRET } },
    ...extra,
  });
}

async function post(token: string, event: Record<string, unknown>): Promise<void> {
  const response = await postEvents(JSON.stringify(event), { token });
  expect(response.status, await response.clone().text()).toBe(202);
}

const to = (subscription: StandInSubscription) => (push: ReceivedPush) => push.endpoint === subscription.endpoint;

describe('Web Push for attention requests, end to end', () => {
  it('publishes the VAPID key a browser subscribes under, and lists a subscription without its keys', async () => {
    const token = await tenantWithToken(uniqueName('push'), ['consume']);
    const key = await api(token, 'GET', '/push/key');
    expect(key.status).toBe(200);
    const { vapidKey } = (await key.json()) as { vapidKey: string };
    expect(Buffer.from(vapidKey, 'base64url')).toHaveLength(65);
    const created = await register(token, standIn.subscribe(uniqueName('listed')), { label: 'my phone' });
    expect(created.maxCapture).toBe('metadata');
    const listed = (await (await api(token, 'GET', '/push/subscriptions')).json()) as { subscriptions: Array<Record<string, unknown>> };
    expect(listed.subscriptions).toEqual([expect.objectContaining({ id: created.id, label: 'my phone', vapidKey, maxCapture: 'metadata' })]);
    expect(JSON.stringify(listed)).not.toContain('p256dh');
    // Another tenant's token does not see it, and cannot remove it.
    const stranger = await tenantWithToken(uniqueName('push'), ['consume', 'admin']);
    expect(((await (await api(stranger, 'GET', '/push/subscriptions')).json()) as { subscriptions: unknown[] }).subscriptions).toEqual([]);
    expect((await api(stranger, 'DELETE', `/push/subscriptions/${created.id}`)).status).toBe(404);
    expect((await api(token, 'DELETE', `/push/subscriptions/${created.id}`)).status).toBe(204);
  });

  it('refuses a subscription above the token\'s own ceiling, one without consume, and an unknown filter key', async () => {
    const capped = await tenantWithToken(uniqueName('push'), ['consume'], { maxCapture: 'metadata' });
    const emitOnly = await tenantWithToken(uniqueName('push'), ['emit']);
    const subscription = standIn.subscribe(uniqueName('refused'));
    expect((await api(emitOnly, 'POST', '/push/subscriptions', subscription)).status).toBe(403);
    const above = await api(capped, 'POST', '/push/subscriptions', { ...subscription, maxCapture: 'full' });
    expect([above.status, ((await above.json()) as { detail: string }).detail]).toEqual([400, expect.stringContaining("above this token's own ceiling")]);
    const badFilter = await api(capped, 'POST', '/push/subscriptions', { ...subscription, filter: { data: 'x' } });
    expect([badFilter.status, ((await badFilter.json()) as { detail: string }).detail]).toEqual([400, expect.stringContaining('"filter"')]);
  });

  it('sends a request cut to each subscription\'s ceiling, signed and encrypted, and replaces it with the follow-up', async () => {
    const token = await tenantWithToken(uniqueName('push'), ['emit', 'consume']);
    const atMetadata = standIn.subscribe(uniqueName('meta'));
    const atFull = standIn.subscribe(uniqueName('full'));
    const otherKind = standIn.subscribe(uniqueName('kinds'));
    await register(token, atMetadata);
    await register(token, atFull, { maxCapture: 'full' });
    await register(token, otherKind, { kinds: ['form'], filter: { severity: { gte: 'notice' } } });
    const session = uniqueName('s');
    const asked = request(session, 0);
    await post(token, asked);
    await standIn.waitFor(() => standIn.received.filter(to(atMetadata)).length === 1 && standIn.received.filter(to(atFull)).length === 1, 'both requests');

    const [metadata] = standIn.received.filter(to(atMetadata)) as [ReceivedPush];
    expect(metadata.payload).toMatchObject({
      kind: 'request',
      capture: 'metadata',
      attentionKind: 'permission',
      request: { id: asked.id, session, agent: 'tester' },
      options: [{ id: 'yes' }, { id: 'no' }],
      tag: `aep:${session}:${String(asked.id)}`,
      url: `/console/#/inbox/${String(asked.id)}`,
    });
    // Nothing the metadata ceiling keeps out: not the prompt, not a label, not the context.
    for (const secret of [PROMPT, ...LABELS, CONTEXT_SECRET, 'drop']) expect(metadata.text.toLowerCase()).not.toContain(secret.toLowerCase());
    expect(metadata.headers.urgency).toBe('high');

    const [full] = standIn.received.filter(to(atFull)) as [ReceivedPush];
    expect(full.payload).toMatchObject({ capture: 'full', body: expect.stringContaining(PROMPT), options: [{ id: 'yes', label: LABELS[0] }, { id: 'no', label: LABELS[1] }] });
    // A notification never carries the request's full-level context, whatever the ceiling.
    expect(full.text).not.toContain(CONTEXT_SECRET);
    // Both under the key the relay publishes.
    const { vapidKey } = (await (await api(token, 'GET', '/push/key')).json()) as { vapidKey: string };
    expect([metadata.vapidKey, full.vapidKey]).toEqual([vapidKey, vapidKey]);

    await post(token, sessionEvent(session, 1, { type: 'attention.resolved', subject: asked.id, data: { resolution: 'answered' } }));
    await standIn.waitFor(() => standIn.received.filter(to(atMetadata)).length === 2 && standIn.received.filter(to(atFull)).length === 2, 'both follow-ups');
    for (const subscription of [atMetadata, atFull]) {
      const [first, followUp] = standIn.received.filter(to(subscription)) as [ReceivedPush, ReceivedPush];
      // Same tag (the browser replaces the shown notification), same Topic (the push service drops an undelivered one).
      expect(followUp.payload).toMatchObject({ kind: 'closed', tag: first.payload.tag, outcome: 'resolved (answered)' });
      expect(followUp.headers.topic).toBe(first.headers.topic);
    }
    // The form-only subscription got neither the request nor its follow-up.
    expect(standIn.received.filter(to(otherKind))).toEqual([]);
    expect(standIn.refusals).toEqual([]);
  });

  it('lists and deletes a subscription with the CLI (aep-relay push list / push delete)', async () => {
    const token = await tenantWithToken(uniqueName('push'), ['consume']);
    const created = await register(token, standIn.subscribe(uniqueName('cli')), { label: 'cli phone' });
    const env = { AEP_URL: inject('baseUrl'), AEP_ADMIN_TOKEN: token };
    const listed = await cli(['push', 'list', '--json'], env);
    expect([listed.code, (JSON.parse(listed.stdout) as { subscriptions: Array<{ id: string }> }).subscriptions.map((entry) => entry.id)]).toEqual([0, [created.id]]);
    expect((await cli(['push', 'delete', created.id], env)).code).toBe(0);
    const again = await cli(['push', 'list'], env);
    expect([again.code, again.stdout.trim()]).toEqual([0, 'no push subscriptions']);
    expect((await cli(['push', 'delete', created.id], env)).code).toBe(4);
  });

  it('removes a subscription whose push service answers 410', async () => {
    const token = await tenantWithToken(uniqueName('push'), ['emit', 'consume']);
    const name = uniqueName('gone');
    const created = await register(token, standIn.subscribe(name, 'gone'));
    await post(token, request(uniqueName('s'), 0));
    await eventually(
      async () => ((await (await api(token, 'GET', '/push/subscriptions')).json()) as { subscriptions: Array<{ id: string }> }).subscriptions,
      (subscriptions) => !subscriptions.some((subscription) => subscription.id === created.id),
    );
    expect(standIn.log.filter((entry) => entry.endpoint.endsWith(`/push/${name}`)).map((entry) => entry.what)).toEqual(['refused']);
  });
});
