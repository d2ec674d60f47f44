/**
 * `--help` and unknown flags for every npm script and every `aep-relay` command (issue 49,
 * point 3), run as a person runs them (`npm run <script> -- ...`, `npx aep-relay ...`).
 * `--help` prints the usage and exits 0 with nothing started: no stack (the port stays free and
 * no data folder appears), no connection to a relay, no key written, no bench output touched.
 * An unknown flag exits 2 naming it, with a pointer to `--help` and no stack trace.
 *
 * The scripts come from package.json itself, so a new one is covered or this test fails. Four
 * scripts are a tool's own command line (vite, tsc, vitest), whose arguments are the tool's: for
 * them `--help` is the tool's help; they are listed below and not run here (`test:unit -- --help`
 * is vitest's help, `typecheck -- --help` would typecheck the project first).
 */
import { spawn } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { createServer } from 'node:net';
import type { Server } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { repoRoot } from '../support/local-stack-process.ts';

/** Scripts that hand their arguments to a tool's own command line. */
const TOOL_SCRIPTS: Record<string, string> = { build: 'vite', typecheck: 'tsc', 'test:unit': 'vitest', screenshots: 'vitest' };

const scripts = Object.keys((JSON.parse(readFileSync(join(repoRoot, 'package.json'), 'utf8')) as { scripts: Record<string, string> }).scripts);
const projectScripts = scripts.filter((name) => TOOL_SCRIPTS[name] === undefined);

/** A listener that counts connections: where the agent and verify would connect, were they started. */
let relay: Server;
let relayUrl: string;
let connections = 0;
const scratch = mkdtempSync(join(tmpdir(), 'aep-help-'));
const dataDir = join(scratch, 'data');
const BENCH_OUTPUTS = ['BENCHMARKS.md', 'bench/results.json'];
const modified = () => BENCH_OUTPUTS.map((file) => (existsSync(join(repoRoot, file)) ? statSync(join(repoRoot, file)).mtimeMs : 0));
let benchOutputsBefore: number[];

beforeAll(async () => {
  relay = createServer((socket) => {
    connections += 1;
    socket.destroy();
  });
  await new Promise<void>((resolve) => relay.listen(0, '127.0.0.1', resolve));
  relayUrl = `http://127.0.0.1:${(relay.address() as { port: number }).port}`;
  benchOutputsBefore = modified();
});

afterAll(async () => {
  await new Promise((resolve) => relay.close(resolve));
  rmSync(scratch, { recursive: true, force: true });
});

interface Run {
  code: number | null;
  stdout: string;
  stderr: string;
}

function run(command: string, args: string[]): Promise<Run> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AEP_')));
  // Where a started script would go: the scratch data folder (a stack would create it), the
  // counting relay (an agent or verify would connect to it).
  const env = { ...inherited, AEP_PORT: '0', AEP_DATA_DIR: dataDir, AEP_URL: relayUrl, AEP_TOKEN: 'aep_help_test_token', AEP_ADMIN_TOKEN: 'aep_help_test_token' };
  const child = spawn(command, args, { cwd: repoRoot, env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}

const npmRun = (script: string, args: string[]) => run('npm', ['run', '--silent', script, '--', ...args]);
const aepRelay = (args: string[]) => run(join(repoRoot, 'node_modules', '.bin', 'node'), [join(repoRoot, 'bin', 'aep-relay.mjs'), ...args]);

/** What every refused flag answers: exit 2, the flag named, where the help is, no stack trace. */
function expectRefusedFlag(result: Run, flag: string, helpCommand: string): void {
  expect(result.code, result.stderr).toBe(2);
  expect(result.stderr).toContain(`error: Unknown option '${flag}'`);
  expect(result.stderr).toContain(`run ${helpCommand} --help for usage`);
  expect(result.stderr).not.toMatch(/\n\s+at |ERR_PARSE_ARGS/);
}

describe('npm scripts', () => {
  it('lists the tool scripts it leaves to their tools, and every other script is a project command', () => {
    expect(projectScripts.length).toBeGreaterThan(0);
    for (const tool of Object.keys(TOOL_SCRIPTS)) expect(scripts).toContain(tool);
  });

  for (const script of projectScripts) {
    it(`npm run ${script} -- --help prints its usage and exits 0, starting nothing; an unknown flag exits 2 naming it`, { timeout: 120_000 }, async () => {
      // Both at once: each is a process that starts, prints and exits.
      const [help, refused] = await Promise.all([npmRun(script, ['--help']), npmRun(script, ['--no-such-flag'])]);
      expect(help.code, help.stderr).toBe(0);
      expect(help.stdout).toMatch(/^Usage: /m);
      expect(help.stderr).toBe('');
      expect(help.stdout).not.toMatch(/AEP relay ready|^DynamoDB Local: |session ready|^PASS |^FAIL |^card: /m);

      expectRefusedFlag(refused, '--no-such-flag', script === 'start' || script === 'test' ? `npm ${script} --` : script === 'admin' ? 'aep-relay' : script === 'bench' ? 'npm run bench --' : `npm run ${script} --`);
    });
  }

  it('started nothing: no data folder, no connection to the relay, no bench output touched', () => {
    expect(existsSync(dataDir)).toBe(false);
    expect(connections).toBe(0);
    expect(modified()).toEqual(benchOutputsBefore);
  });
});

describe('aep-relay commands', () => {
  const groups = ['tenants', 'tokens', 'policy', 'quotas', 'bridges', 'operators'];

  it('aep-relay --help lists every command group', async () => {
    const help = await aepRelay(['--help']);
    expect(help.code).toBe(0);
    for (const group of [...groups, 'export', 'attention']) expect(help.stdout).toContain(`  ${group} `);
  });

  for (const group of groups) {
    it(`aep-relay ${group} --help prints that group's commands only, and an unknown flag exits 2 naming it`, async () => {
      const asked = [[group, '--help'], [group, 'list', '--help'], [group, '-h']];
      const [refused, ...helps] = await Promise.all([aepRelay([group, 'list', '--no-such-flag']), ...asked.map((args) => aepRelay(args))]);
      for (const [index, help] of helps.entries()) {
        expect(help.code, asked[index]?.join(' ')).toBe(0);
        expect(help.stdout).toMatch(new RegExp(`^Usage: aep-relay ${group} <command>`));
        const commandLines = help.stdout.split('\n').filter((line) => /^ {2}[a-z]+ [a-z-]+/.test(line) && !line.startsWith('  --'));
        expect(commandLines.length).toBeGreaterThan(0);
        for (const line of commandLines) expect(line.trimStart().startsWith(`${group} `), line).toBe(true);
      }
      expectRefusedFlag(refused, '--no-such-flag', 'aep-relay');
    });
  }

  for (const command of ['export', 'attention']) {
    it(`aep-relay ${command} --help prints its usage, and an unknown flag exits 2 naming it`, async () => {
      const [help, refused] = await Promise.all([aepRelay([command, '--help']), aepRelay([command, '--no-such-flag'])]);
      expect(help.code).toBe(0);
      expect(help.stdout).toMatch(new RegExp(`^Usage: aep-relay ${command} `));
      expectRefusedFlag(refused, '--no-such-flag', `aep-relay ${command}`);
    });
  }

  it('started nothing: no connection to the relay', () => {
    expect(connections).toBe(0);
  });
});
