/**
 * The walkthrough, as a person pastes it (issue 49, point 5): every shell block README and the
 * documents it continues in (`WALKTHROUGH_FILES`) mark with `<!-- walkthrough -->` is extracted
 * from the files themselves and run in order, in bash, against a fresh `npm start` (its own port
 * and data folder, which the blocks read as npm start's defaults `AEP_PORT` and `AEP_DATA_DIR`),
 * and each block's exit code is checked, so the docs cannot drift from what works. Each block runs with `set -e -o pipefail`, in the checkout, with the variables
 * and functions the blocks before it left (one shell, as in a terminal). A marker may say
 * `exit=N` (the block shows a refusal) or `background ready="<text>"` (a block that keeps running,
 * like the agent: the walkthrough goes on once it printed the text, and it gets Ctrl-C after the
 * last block, and exits 0).
 *
 * Then README "Five minutes with it" followed step by step against the shared local stack: the token in
 * AEP_URL/AEP_TOKEN, a POST whose status is shown, the SSE stream, `npm run agent` (the command it
 * runs: local/agent/cli.ts) raising an attention request, and `aep-relay attention list` and
 * `attention answer` answering it from a terminal, with their exit codes. A tenant of its own stands
 * in for the dev tenant, whose control policy other tests change.
 */
import { spawn } from 'node:child_process';
import type { ChildProcessWithoutNullStreams } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join } from 'node:path';
import { afterEach, describe, expect, inject, it } from 'vitest';
import { cli } from '../support/cli-run.ts';
import { repoRoot, startStackProcess } from '../support/local-stack-process.ts';
import { tenantWithToken, uniqueName } from '../support/relay-fixtures.ts';
import { openStream } from '../support/sse-client.ts';

/** The files whose marked blocks make the walkthrough, in the order it runs them. */
const WALKTHROUGH_FILES = ['README.md', 'docs/security-and-isolation.md', 'docs/bridges.md'];

/** One shell block a walkthrough file marks. */
interface WalkthroughBlock {
  /** `<file>:<line>` of its opening fence. */
  at: string;
  /** The file and the section (its `#` or `##` heading) it is in. */
  section: string;
  script: string;
  exit: number;
  /** Keeps running beside the blocks after it; the walkthrough goes on once its output holds this. */
  ready?: string;
}

/** A file's marked blocks, in order. A marker must stand right before a ```sh fence, or this refuses the file. */
function walkthroughBlocks(file: string, text: string): WalkthroughBlock[] {
  const lines = text.split('\n');
  const blocks: WalkthroughBlock[] = [];
  let section = '';
  let fenced = false;
  for (const [index, line] of lines.entries()) {
    if (line.startsWith('```')) fenced = !fenced;
    const heading = fenced ? null : /^#{1,2} (.+)$/.exec(line);
    if (heading !== null) section = `${file} ${heading[1]}`;
    const marker = /^<!-- walkthrough(?<options>.*) -->$/.exec(line);
    if (marker === null) continue;
    const options = marker.groups?.options ?? '';
    if (!/^( exit=\d+| background ready="[^"]+")?$/.test(options)) throw new Error(`${file}:${index + 1}: unknown walkthrough marker options ${JSON.stringify(options)}`);
    if (lines[index + 1] !== '```sh') throw new Error(`${file}:${index + 1}: a walkthrough marker must stand right before a \`\`\`sh block`);
    const end = lines.indexOf('```', index + 2);
    if (end === -1) throw new Error(`${file}:${index + 2}: the walkthrough block never closes`);
    const ready = /ready="([^"]+)"/.exec(options)?.[1];
    blocks.push({ at: `${file}:${index + 2}`, section, script: lines.slice(index + 2, end).join('\n'), exit: Number(/exit=(\d+)/.exec(options)?.[1] ?? 0), ...(ready === undefined ? {} : { ready }) });
  }
  return blocks;
}

/**
 * What runs a block: the state the blocks before it left, `set -e -o pipefail`, the block, and
 * (a foreground block that got to its end) its variables and functions saved for the next one.
 */
function blockScript(block: WalkthroughBlock, stateFile: string): string {
  const save = [
    // Variables this shell did not start with (the walkthrough's own), and every function.
    'for __aep_name in $(compgen -v); do',
    '  case "$__aep_name" in __aep_*|BASH*|FUNCNAME|PIPESTATUS|_) continue ;; esac',
    '  case "$__aep_baseline" in *" $__aep_name "*) continue ;; esac',
    '  __aep_declared=$(declare -p "$__aep_name" 2>/dev/null) || continue',
    '  __aep_flags=${__aep_declared#declare -}',
    '  case "${__aep_flags%% *}" in *r*) continue ;; esac',
    '  printf \'%s\\n\' "$__aep_declared"',
    `done > ${JSON.stringify(stateFile)}`,
    `declare -f >> ${JSON.stringify(stateFile)}`,
  ];
  return [
    '__aep_baseline=" $(compgen -v | tr \'\\n\' \' \') "',
    `if [ -f ${JSON.stringify(stateFile)} ]; then source ${JSON.stringify(stateFile)}; fi`,
    'set -e -o pipefail',
    block.script,
    ...(block.ready === undefined ? ['set +e', ...save] : []),
  ].join('\n');
}

interface BlockRun {
  child: ChildProcessWithoutNullStreams;
  output(): string;
  exited: Promise<number | null>;
}

function runBlock(block: WalkthroughBlock, stateFile: string, env: NodeJS.ProcessEnv): BlockRun {
  // A process group of its own, so Ctrl-C (SIGINT to the group) reaches what the block runs.
  const child = spawn('bash', ['-c', blockScript(block, stateFile)], { cwd: repoRoot, env, detached: true });
  let output = '';
  child.stdout.on('data', (chunk: Buffer) => (output += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (output += chunk.toString()));
  const exited = new Promise<number | null>((resolve) => child.once('close', (code) => resolve(code)));
  return { child, output: () => output, exited };
}

/** Resolves when `check` holds, or fails after `timeoutMs` (a generous bound on a wait, never an assertion on time). */
async function waitUntil(check: () => boolean, what: () => string, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(what());
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('the walkthrough blocks of README and docs, pasted as written', () => {
  it('runs every marked block in order against a fresh npm start, each with the exit code its file gives it', { timeout: 600_000 }, async () => {
    const blocks = WALKTHROUGH_FILES.flatMap((file) => walkthroughBlocks(file, readFileSync(join(repoRoot, file), 'utf8')));
    // The walkthrough spans these sections; a lost marker fails here, not silently.
    expect(new Set(blocks.map((block) => block.section))).toEqual(new Set([
      'README.md Five minutes with it',
      'docs/security-and-isolation.md Tenants and tokens (admin CLI)',
      'docs/security-and-isolation.md Identity cards (AEP-0003 §8.3): verified identity at the relay',
      'docs/bridges.md Sinks out',
    ]));
    const scratch = mkdtempSync(join(tmpdir(), 'aep-walkthrough-'));
    const dataDir = join(scratch, 'data');
    // docs/bridges.md's own instruction for its EventBridge sink: npm start with its bus allowed.
    const buses = [...blocks.map((block) => block.script).join('\n').matchAll(/"busArn": "([^"]+)"/g)].map((match) => match[1] as string);
    const stack = await startStackProcess({ via: 'npm', args: [], env: { AEP_DATA_DIR: dataDir, AEP_BRIDGE_EVENT_BUSES: buses.join(',') } });
    // A person's shell: no AEP_* or npm_* variables of this test run, no node_modules/.bin on the PATH.
    const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AEP_') && !name.startsWith('npm_')));
    const path = (process.env.PATH ?? '').split(delimiter).filter((entry) => !entry.includes(join('node_modules', '.bin'))).join(delimiter);
    const env = { ...inherited, PATH: path, AEP_PORT: new URL(stack.baseUrl).port, AEP_DATA_DIR: dataDir };
    const stateFile = join(scratch, 'walkthrough-state.sh');
    const background: Array<{ block: WalkthroughBlock; run: BlockRun }> = [];
    const results: Array<{ at: string; exit: number | null }> = [];
    const outputs: string[] = [];
    try {
      for (const block of blocks) {
        const run = runBlock(block, stateFile, env);
        if (block.ready !== undefined) {
          const ready = block.ready;
          await waitUntil(() => run.output().includes(ready) || run.child.exitCode !== null, () => `${block.at} printed no "${ready}":\n${run.output()}`, 120_000);
          background.push({ block, run });
          continue;
        }
        const timer = setTimeout(() => process.kill(-(run.child.pid as number), 'SIGKILL'), 180_000);
        const exit = await run.exited;
        clearTimeout(timer);
        results.push({ at: block.at, exit });
        outputs.push(`--- ${block.at} (exit ${exit})\n${run.output()}`);
        if (exit !== block.exit) break;
      }
    } finally {
      // Ctrl-C for what keeps running, as a person ends it.
      for (const { block, run } of background) {
        if (run.child.exitCode === null) process.kill(-(run.child.pid as number), 'SIGINT');
        results.push({ at: block.at, exit: await run.exited });
        outputs.push(`--- ${block.at} (background, exit ${run.child.exitCode})\n${run.output()}`);
      }
      await stack.stop();
      rmSync(scratch, { recursive: true, force: true });
    }
    const expected = blocks.map((block) => ({ at: block.at, exit: block.exit }));
    const byPlace = (a: { at: string }, b: { at: string }) => blocks.findIndex((block) => block.at === a.at) - blocks.findIndex((block) => block.at === b.at);
    expect(results.sort(byPlace), outputs.join('\n')).toEqual(expected);
  });
});

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

describe('README "Five minutes with it", step by step', () => {
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
