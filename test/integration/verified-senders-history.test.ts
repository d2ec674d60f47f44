import { describe, expect, inject, it } from 'vitest';
import { admin, issue, tenantWithAdmin } from '../support/admin-client.ts';
import { testOperator } from '../support/identity-cards.ts';
import { mintId, sessionEvent, uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';
import { helloSocket } from '../support/ws-client.ts';
import type { TestSocket } from '../support/ws-client.ts';

/**
 * History says which commands came from a verified sender (AEP-0003 §8.3) beside the stored
 * text, never in it: the claimant, a live SSE consumer and both history formats see the text
 * exactly as it was sent.
 */
const pause = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Every text message the socket receives, as received. */
function receivedTexts(socket: TestSocket): string[] {
  const texts: string[] = [];
  socket.socket.on('message', (data) => texts.push(data.toString()));
  return texts;
}

/** A command as a sender might write it: its own member order and spacing, which must survive. */
function commandText(session: string, id: string): string {
  return `{ "type":"control.cancel",  "aep":"0.1", "id":"${id}", "session":"${session}", "source":"aep://h/agent/phone", "agent":"phone", "time":"${new Date().toISOString()}", "data":{ "scope":"session" } }`;
}

async function until(condition: () => boolean, what: string): Promise<void> {
  const deadline = Date.now() + 15_000;
  while (!condition()) {
    if (Date.now() > deadline) throw new Error(`not within 15 s: ${what}`);
    await pause(50);
  }
}

async function history(token: string, session: string, accept: string, params: Record<string, string> = {}): Promise<Response> {
  return fetch(`${inject('baseUrl')}/history?${new URLSearchParams({ session, ...params }).toString()}`, { headers: { authorization: `Bearer ${token}`, accept } });
}

describe('verified senders in history', () => {
  it('marks only the command from the verified connection, and every copy of both is the text as sent', async () => {
    const { tenant, adminToken } = await tenantWithAdmin('vhist');
    const acme = await testOperator('acme', 'ES256', tenant);
    expect((await admin('PUT', '/operators/acme', { token: adminToken, body: { jwks: acme.jwks } })).status).toBe(200);
    const emitter = await issue(adminToken, { scopes: ['emit', 'consume'] });
    const sender = await issue(adminToken, { scopes: ['control', 'consume'] });
    const session = uniqueName('marked');
    const claimant = await helloSocket({ role: 'emitter', identity: { agent: 'worker' }, capabilities: { control: { accepts: ['control.cancel'] } } }, { token: emitter.token });
    const atClaimant = receivedTexts(claimant);
    claimant.send(sessionEvent(session, 0, { agent: 'worker', source: `aep://h/agent/worker/session/${session}` }));
    const stream = await openStream({ filter: JSON.stringify({ session }) }, { token: emitter.token });
    const verified = await helloSocket({ role: 'both', identity: { agent: 'phone', card: await acme.card('phone', []) } }, { token: sender.token });
    const unverified = await helloSocket({ role: 'both', identity: { agent: 'phone' } }, { token: sender.token });
    await pause(300);
    try {
      const fromVerified = commandText(session, mintId());
      const fromUnverified = commandText(session, mintId());
      verified.socket.send(fromVerified);
      await until(() => atClaimant.includes(fromVerified), 'the verified command reaches the claimant');
      unverified.socket.send(fromUnverified);
      await until(() => atClaimant.includes(fromUnverified), 'the unverified command reaches the claimant');
      // A retransmit of the unverified command over the verified connection is delivered again
      // and stored no second time: the stored item, and so its (absent) mark, stay as they were.
      verified.socket.send(fromUnverified);
      await until(() => atClaimant.filter((text) => text === fromUnverified).length === 2, 'the retransmit reaches the claimant');
      await stream.waitFor(() => [fromVerified, fromUnverified].every((text) => stream.messages().some((message) => message.data === text)), 15_000);
      expect(verified.all((frame) => frame.type === 'error')).toEqual([]);
      expect(unverified.all((frame) => frame.type === 'error')).toEqual([]);

      const page = await history(sender.token, session, 'application/json');
      expect(page.status).toBe(200);
      expect(page.headers.get('content-type')).toBe('application/json');
      const { items } = (await page.json()) as { items: Array<{ raw: string; senderVerified?: unknown }> };
      expect(items.find((item) => item.raw === fromVerified)).toEqual({ raw: fromVerified, senderVerified: { operator: 'acme' } });
      expect(items.find((item) => item.raw === fromUnverified)).toEqual({ raw: fromUnverified });
      expect(items.filter((item) => item.senderVerified !== undefined)).toHaveLength(1);
      expect(items.filter((item) => item.raw === fromUnverified)).toHaveLength(1);

      // NDJSON (the default, what export writes and POST /events takes back): the same texts, one a line, no mark.
      const lines = await history(sender.token, session, 'application/x-ndjson');
      expect(lines.headers.get('content-type')).toBe('application/x-ndjson');
      const body = await lines.text();
      expect(body).toBe(items.map((item) => `${item.raw}\n`).join(''));
      expect(body).not.toContain('senderVerified');
      const byDefault = await history(sender.token, session, '*/*');
      expect(await byDefault.text()).toBe(body);

      // JSON pages page like NDJSON ones: the cursor in the body's `next` and in the Link header.
      const first = await history(sender.token, session, 'application/json', { limit: '1' });
      const firstPage = (await first.json()) as { items: unknown[]; next?: string };
      expect(firstPage.items.length).toBeGreaterThan(0);
      expect(typeof firstPage.next).toBe('string');
      const target = /^<([^>]*)>; rel="next"$/.exec(first.headers.get('link') ?? '')?.[1] ?? '';
      expect(new URL(target, 'http://relay').searchParams.get('cursor')).toBe(firstPage.next);
    } finally {
      stream.close();
      await Promise.all([claimant.close(), verified.close(), unverified.close()]);
    }
  });
});
