/** Runs the admin CLI as a child process, as an operator would. */
import { spawn } from 'node:child_process';
import { join } from 'node:path';
import { repoRoot } from './local-stack-process.ts';

export interface CliRun {
  code: number | null;
  stdout: string;
  stderr: string;
}

/**
 * Runs `aep-relay` as a child process with only the given AEP_* variables: through the package
 * bin launcher (`npx aep-relay`: node + tsx's loader) or as `npm run admin` does (the tsx CLI).
 */
export function cli(args: string[], env: Record<string, string>, stdin = '', entry: 'launcher' | 'tsx' = 'launcher'): Promise<CliRun> {
  const inherited = Object.fromEntries(Object.entries(process.env).filter(([name]) => !name.startsWith('AEP_')));
  const [command, commandArgs] =
    entry === 'tsx'
      ? [join(repoRoot, 'node_modules', '.bin', 'tsx'), [join(repoRoot, 'bin', 'aep-relay.ts'), ...args]]
      : [join(repoRoot, 'node_modules', '.bin', 'node'), [join(repoRoot, 'bin', 'aep-relay.mjs'), ...args]];
  const child = spawn(command, commandArgs, { cwd: repoRoot, env: { ...inherited, ...env }, stdio: ['pipe', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (chunk: Buffer) => (stdout += chunk.toString()));
  child.stderr.on('data', (chunk: Buffer) => (stderr += chunk.toString()));
  child.stdin.end(stdin);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('close', (code) => resolve({ code, stdout, stderr }));
  });
}
