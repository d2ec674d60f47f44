/**
 * README "Trying it locally", followed step by step against the shared local stack: the token in
 * AEP_URL/AEP_TOKEN, a POST whose status is shown, the SSE stream, `npm run agent` (the command it
 * runs: tsx local/agent/cli.ts) raising an attention request, and `aep-relay attention list` and
 * `attention answer` answering it from a terminal. A tenant of its own stands in for the dev
 * tenant, whose control policy other tests change.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { cli } from '../support/cli-run.ts';
import { repoRoot } from '../support/local-stack-process.ts';
import { tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';

interface AgentProcess {
  child: ChildProcessWithoutNullStreams;
  output(): string;
  /** Resolves with the first match of `pattern` in its standard output. */
  waitFor(pattern: RegExp, timeoutMs?: number): Promise<RegExpExecArray>;
  exited: Promise<number | null>;
}

const running: AgentProcess[] = [];

afterEach(async () => {
  for (const agent of running.splice(0)) {
    if (agent.child.exitCode === null) agent.child.kill('SIGINT');
    await agent.exited;
  }
});

/** `npm run agent -- --session <session>`, with the walkthrough's two variables. */
function runAgent(env: Record<string, string>, session: string): AgentProcess {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AEP_')));
  const child = spawn(join(repoRoot, 'node_modules', '.bin', 'tsx'), [join(repoRoot, 'local', 'agent', 'cli.ts'), '--session', session], { cwd: repoRoot, env: { ...inherited, ...env } });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('exit', (code) => resolve(code)));
  const agent: AgentProcess = {
    child,
    output: () => stdout,
    exited,
    waitFor: (pattern, timeoutMs = 30_000) =>
      new Promise((resolve, reject) => {
        const deadline = Date.now() + timeoutMs;
        const poll = () => {
          const match = pattern.exec(stdout);
          if (match !== null) return resolve(match);
          if (child.exitCode !== null || Date.now() > deadline) return reject(new Error(`agent printed no ${pattern} (exit ${child.exitCode}); stdout: ${stdout}; stderr: ${stderr}`));
          setTimeout(poll, 50);
        };
        poll();
      }),
  };
  running.push(agent);
  return agent;
}

async function walkthroughEnvironment(prefix: string): Promise<Record<string, string>> {
  const token = await tenantWithToken(uniqueName(prefix), ['emit', 'consume', 'control', 'admin']);
  return { AEP_URL: inject('baseUrl'), AEP_TOKEN: token };
}

/** `attention list` until the agent's request is stored and shows (the agent prints its id as it sends it). */
async function listShowing(env: Record<string, string>, session: string, requestId: string): Promise<string> {
  let stdout = '';
  await expect
    .poll(async () => {
      const listed = await cli(['attention', 'list', '--session', session], env);
      expect(listed.code, listed.stderr).toBe(0);
      stdout = listed.stdout;
      return stdout;
    }, { timeout: 20_000, interval: 250 })
    .toContain(requestId);
  return stdout;
}

describe('README "Trying it locally", step by step', () => {
  it('posts an event (202 shown), streams it, runs the agent, and lists and answers its attention request from the terminal', { timeout: 120_000 }, async () => {
    const env = await walkthroughEnvironment('walk');
    const session = uniqueName('demo');

    // curl -sS -w '\n%{http_code}\n' ... "$AEP_URL/events": the JSON answer, then 202.
    const s1 = uniqueName('s1');
    const event = { aep: '0.1', id: '01JX0000000000000000000001', type: 'session.started', time: '2026-07-03T10:14:00Z', source: 'aep://me/agent/demo/session/s1', agent: 'demo', session: s1, seq: 0 };
    const posted = await fetch(`${env.AEP_URL}/events`, { method: 'POST', headers: { authorization: `Bearer ${env.AEP_TOKEN}`, 'aep-version': '0.1', 'content-type': 'application/json' }, body: JSON.stringify(event) });
    expect([posted.status, await posted.json()]).toEqual([202, { accepted: 1, stored: 1, duplicates: 0 }]);

    // curl -N ... "$AEP_URL/stream?from=all": the event is there.
    const stream = await openStream({ from: 'all' }, { token: env.AEP_TOKEN as string });
    expect(stream.status).toBe(200);
    await stream.waitFor((items) => items.some((item) => item.kind === 'message' && item.json.session === s1));
    stream.close();

    // npm run agent -- --session demo: it raises a request and says how to answer it.
    const agent = runAgent(env, session);
    const requestId = (await agent.waitFor(/attention request (\S+) is waiting/))[1] as string;
    await agent.waitFor(new RegExp(`answer it from another terminal: npx aep-relay attention answer --session ${session} ${requestId} allow`));

    // npx aep-relay attention list --session demo
    const listed = await listShowing(env, session, requestId);
    expect(listed).toMatch(new RegExp(`^${requestId}  permission  agent=simulator  \\S+  "simulator requests permission: demo"  options: allow, deny\\n$`));
    const listedJson = await cli(['attention', 'list', '--session', session, '--json'], env);
    expect(JSON.parse(listedJson.stdout)).toMatchObject({ session, requests: [{ id: requestId, kind: 'permission', agent: 'simulator', options: [{ id: 'allow' }, { id: 'deny' }], answered: false }] });

    // An option the request does not offer is a usage error, and nothing is sent.
    const wrong = await cli(['attention', 'answer', '--session', session, requestId, 'maybe'], env);
    expect(wrong.code).toBe(2);
    expect(wrong.stderr).toContain('its options: allow, deny');

    // npx aep-relay attention answer --session demo <request id> allow
    const answered = await cli(['attention', 'answer', '--session', session, requestId, 'allow'], env);
    expect(answered.code, answered.stderr).toBe(0);
    const lines = answered.stdout.trim().split('\n');
    expect(lines[0]).toMatch(new RegExp(`^sent control\\.attention\\.respond \\S+ to session ${session} as console \\(answer: option allow\\)$`));
    expect(lines.slice(1)).toEqual(['accepted by the agent', `attention request ${requestId} resolved: answered`]);
    await agent.waitFor(/emitted attention\.resolved/);

    // It is no longer open; answering it again has nothing to do; an unknown id is not found.
    expect((await cli(['attention', 'list', '--session', session], env)).stdout).toBe(`no open attention requests in session ${session}\n`);
    const again = await cli(['attention', 'answer', '--session', session, requestId, 'deny'], env);
    expect([again.code, again.stdout]).toEqual([3, `attention request ${requestId} is already resolved (answered); nothing to do\n`]);
    const unknown = await cli(['attention', 'answer', '--session', session, '01JX00000000000000000NOPE0', 'allow'], env);
    expect(unknown.code).toBe(4);
    expect(unknown.stderr).toContain(`no attention request 01JX00000000000000000NOPE0 in session ${session}`);

    agent.child.kill('SIGINT');
    expect(await agent.exited).toBe(0);
  });

  it('says in words that no agent holds the session once the agent is gone, and exits 1', { timeout: 120_000 }, async () => {
    const env = await walkthroughEnvironment('walkgone');
    const session = uniqueName('demo');
    const agent = runAgent(env, session);
    const requestId = (await agent.waitFor(/attention request (\S+) is waiting/))[1] as string;
    await listShowing(env, session, requestId);
    agent.child.kill('SIGINT');
    expect(await agent.exited).toBe(0);
    // Its claim goes with its $disconnect, which runs after the close.
    await expect
      .poll(async () => {
        const listed = (await (await fetch(`${env.AEP_URL}/sessions?prefix=${encodeURIComponent(session)}`, { headers: { authorization: `Bearer ${env.AEP_TOKEN}` } })).json()) as { sessions: Array<{ session: string; claimed: boolean }> };
        return listed.sessions.find((entry) => entry.session === session)?.claimed;
      }, { timeout: 20_000, interval: 250 })
      .toBe(false);

    const refused = await cli(['attention', 'answer', '--session', session, requestId, 'allow'], env);
    expect(refused.code).toBe(1);
    expect(refused.stdout).toContain('the relay refused it: no agent is connected for this session right now [no-route]');
  });

  it('needs a token in the environment and the session, with usage errors (exit 2)', { timeout: 60_000 }, async () => {
    const noToken = await cli(['attention', 'list', '--session', 'demo'], { AEP_URL: inject('baseUrl') });
    expect([noToken.code, noToken.stderr.split('\n')[0]]).toEqual([2, 'error: attention needs a token: set AEP_TOKEN (consume to list; consume and control to answer)']);
    const noSession = await cli(['attention', 'answer', 'id', 'allow'], { AEP_URL: inject('baseUrl'), AEP_TOKEN: inject('devToken') });
    expect(noSession.code).toBe(2);
    const help = await cli(['attention', '--help'], {});
    expect([help.code, help.stdout]).toEqual([0, expect.stringContaining('aep-relay attention answer --session <id> <requestId> <option>')]);
  });
});
