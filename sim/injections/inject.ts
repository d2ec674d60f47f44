/**
 * Known defects the simulation must find (`npm run sim -- --inject NAME`). Each is a patch
 * (`sim/injections/NAME.patch`) that puts one defect back into the relay's own code: the
 * simulation runs against a copy of the working tree with the patch applied, so the real code
 * is what fails, never a stand-in. A patch that no longer applies fails loudly: the defect it
 * names must then be written again against the code as it is.
 */
import { spawnSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, rmSync, symlinkSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const here = dirname(fileURLToPath(import.meta.url));
const root = resolve(here, '..', '..');
/** What the simulation imports: the relay's code, the local stack's shared pieces, and the simulation. */
const COPIED = ['src', 'functions', 'local', 'sim', 'bin', 'package.json', 'tsconfig.json'];

export function injectionNames(): string[] {
  return readdirSync(here)
    .filter((name) => name.endsWith('.patch'))
    .map((name) => name.slice(0, -'.patch'.length))
    .sort();
}

/** A copy of the working tree with the defect's patch applied; the caller removes it. */
export function injectedTree(name: string): string {
  const tree = mkdtempSync(join(tmpdir(), `aep-sim-${name}-`));
  for (const entry of COPIED) cpSync(join(root, entry), join(tree, entry), { recursive: true, filter: (source) => !source.includes(`${join('sim', 'scratch')}`) });
  symlinkSync(join(root, 'node_modules'), join(tree, 'node_modules'), 'dir');
  const applied = spawnSync('git', ['apply', '--whitespace=nowarn', join(here, `${name}.patch`)], { cwd: tree, encoding: 'utf8' });
  if (applied.status !== 0) {
    rmSync(tree, { recursive: true, force: true });
    throw new Error(`injection ${name} no longer applies to the relay's code: ${applied.stderr.trim()}`);
  }
  return tree;
}

/** Plays the simulation with `args` against the injected tree; answers its exit code. */
export async function runInjected(name: string, args: readonly string[]): Promise<number> {
  const tree = injectedTree(name);
  try {
    const tsx = join(tree, 'node_modules', 'tsx', 'dist', 'cli.mjs');
    if (!existsSync(tsx)) throw new Error('tsx is not installed (npm ci)');
    process.stdout.write(`injected defect: ${name}\n`);
    const run = spawnSync(process.execPath, [tsx, join('sim', 'cli.ts'), ...args], { cwd: tree, stdio: 'inherit' });
    return run.status ?? 1;
  } finally {
    rmSync(tree, { recursive: true, force: true });
  }
}
