/**
 * DynamoDB Local never outlives the stack that started it (issue 49, point 4), however the
 * stack's process ends. A process cannot run code on SIGKILL, so the JVM watches its side: its
 * stdin is a pipe only the stack holds, and it exits when that ends (the kernel closes it with
 * the process). And a stack whose launcher is killed (npm's process) stops itself, database
 * included, rather than serve on with nobody to stop it.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { isProcessAlive, PID_FILE } from '../../local/dynamodb-local.ts';
import { startStackProcess } from '../support/local-stack-process.ts';

const dataDirs: string[] = [];
/** Every process a test started, ended whatever a failed test left. */
const pids: number[] = [];

afterAll(() => {
  for (const pid of pids) {
    try {
      process.kill(pid, 'SIGKILL');
    } catch {
      // Gone, as it should be.
    }
  }
  for (const dir of dataDirs) rmSync(dir, { recursive: true, force: true });
});

/** Child processes of `pid` (Linux /proc). */
function childrenOf(pid: number): number[] {
  const children: number[] = [];
  for (const entry of readdirSync('/proc')) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[1]) === pid) children.push(Number(entry));
    } catch {
      // Exited meanwhile.
    }
  }
  return children;
}

const isJava = (pid: number) => {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, 'utf8').includes('DynamoDBLocal');
  } catch {
    return false;
  }
};

async function gone(pid: number, what: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (isProcessAlive(pid)) {
    if (Date.now() > deadline) throw new Error(`${what} (pid ${pid}) is still running 30 s later`);
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
}

describe('DynamoDB Local and the stack that started it', () => {
  it('goes when the stack is killed with SIGKILL (persistent data folder)', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'aep-lifetime-'));
    dataDirs.push(dataDir);
    const stack = await startStackProcess({ args: [], env: { AEP_DATA_DIR: dataDir } });
    const jvm = Number(readFileSync(join(dataDir, 'dynamodb', PID_FILE), 'utf8').trim());
    pids.push(stack.child.pid as number, jvm);
    expect(isJava(jvm)).toBe(true);
    process.kill(stack.child.pid as number, 'SIGKILL');
    await gone(jvm, 'DynamoDB Local');
  }, 120_000);

  it('goes when an in-memory stack is killed with SIGKILL', async () => {
    const stack = await startStackProcess({ args: ['--in-memory'] });
    const jvms = childrenOf(stack.child.pid as number).filter(isJava);
    pids.push(stack.child.pid as number, ...jvms);
    expect(jvms).toHaveLength(1);
    process.kill(stack.child.pid as number, 'SIGKILL');
    await gone(jvms[0] as number, 'DynamoDB Local');
  }, 120_000);

  it('goes, with the stack, when the npm process that started it is killed with SIGKILL', async () => {
    const dataDir = mkdtempSync(join(tmpdir(), 'aep-lifetime-npm-'));
    dataDirs.push(dataDir);
    const stack = await startStackProcess({ via: 'npm', args: [], env: { AEP_DATA_DIR: dataDir } });
    const npm = stack.child.pid as number;
    const [node] = childrenOf(npm);
    const jvm = Number(readFileSync(join(dataDir, 'dynamodb', PID_FILE), 'utf8').trim());
    pids.push(npm, node as number, jvm);
    expect(node).toBeDefined();
    expect(childrenOf(node as number)).toContain(jvm);
    process.kill(npm, 'SIGKILL');
    await gone(node as number, 'the stack');
    await gone(jvm, 'DynamoDB Local');
    // It stopped as on SIGTERM, not killed: the port is free again.
    await expect(fetch(`${stack.baseUrl}/healthz`)).rejects.toThrow();
  }, 120_000);
});

