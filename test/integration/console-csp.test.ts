/**
 * The console's content security policy as the local stack sends it (issue 26, item 12):
 * `connect-src` names the relay's own origin (`'self'` and the socket's `ws://` of the page's
 * host), never `ws:`/`wss:` to any host; a `Host` that is not a plain host[:port] adds nothing.
 * The deployed policy is asserted on the synthesized template (test/infra/relay-stack.test.ts).
 */
import { request } from 'node:http';
import { beforeAll, describe, expect, inject, it } from 'vitest';
import { buildConsole } from '../../infra/console-build.ts';
import { consoleContentSecurityPolicy } from '../../infra/constructs/console-site.ts';

/** The policy's directives by name. */
function directivesOf(policy: string | null): Record<string, string[]> {
  const directives: Record<string, string[]> = {};
  for (const directive of (policy ?? '').split(';')) {
    const [name, ...sources] = directive.trim().split(/\s+/);
    if (name !== undefined && name !== '') directives[name] = sources;
  }
  return directives;
}

/** GET /console/ with this Host header (fetch cannot set one). */
function consoleWithHost(host: string): Promise<{ status: number; policy: string | undefined }> {
  const base = new URL(inject('baseUrl'));
  return new Promise((resolve, reject) => {
    const outgoing = request({ host: base.hostname, port: base.port, path: '/console/', headers: { host } }, (response) => {
      response.resume();
      const policy = response.headers['content-security-policy'];
      resolve({ status: response.statusCode ?? 0, policy: typeof policy === 'string' ? policy : undefined });
    });
    outgoing.once('error', reject);
    outgoing.end();
  });
}

beforeAll(async () => {
  await buildConsole();
}, 120_000);

describe('the console content security policy, as sent', () => {
  it("lets the page connect to the relay's own origin only", async () => {
    const response = await fetch(`${inject('baseUrl')}/console/`);
    expect(response.status).toBe(200);
    const directives = directivesOf(response.headers.get('content-security-policy'));
    const host = new URL(inject('baseUrl')).host;
    expect(directives['connect-src']).toEqual(["'self'", `ws://${host}`]);
    expect(directives['default-src']).toEqual(["'self'"]);
    expect(directives['frame-ancestors']).toEqual(["'none'"]);
    for (const sources of Object.values(directives)) {
      for (const wildcard of ['ws:', 'wss:', 'http:', 'https:', '*']) expect(sources).not.toContain(wildcard);
    }
  });

  it('names the host the page was asked for, and nothing for a Host that is not a plain host[:port]', async () => {
    const named = await consoleWithHost('relay.localhost:8787');
    expect(named.status).toBe(200);
    expect(directivesOf(named.policy ?? null)['connect-src']).toEqual(["'self'", 'ws://relay.localhost:8787']);
    // `;` is legal in a URL host (so the gateway serves the page) but would start a new
    // directive in the header: such a Host adds no source.
    const injected = await consoleWithHost('relay;script-src');
    expect(injected.status).toBe(200);
    expect(injected.policy).toBe(consoleContentSecurityPolicy());
    expect(directivesOf(injected.policy ?? null)['connect-src']).toEqual(["'self'"]);
  });
});
