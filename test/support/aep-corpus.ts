/**
 * Locates the official AEP material that tests read (never copied into this repository).
 * `AEP_FIXTURES` points at `conformance/fixtures`, `AEP_SCHEMAS` at `schemas`; both default
 * to the checkout of the spec beside this repository (`../shared/aep/...`).
 */
import { existsSync, readFileSync, readdirSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');

function locate(envName: string, fallback: string): string {
  const dir = resolve(repoRoot, process.env[envName] ?? fallback);
  if (!existsSync(dir)) {
    throw new Error(
      `AEP corpus folder not found: looked in ${dir} (set ${envName} to override; the default is ${fallback} relative to the repository root)`,
    );
  }
  return dir;
}

export function fixturesDir(): string {
  return locate('AEP_FIXTURES', '../shared/aep/conformance/fixtures');
}

export function schemasDir(): string {
  return locate('AEP_SCHEMAS', '../shared/aep/schemas');
}

export function readFixtureJson<T>(relativePath: string): T {
  return JSON.parse(readFileSync(join(fixturesDir(), relativePath), 'utf8')) as T;
}

/** Every line of a JSONL fixture, parsed. */
export function readFixtureJsonl(relativePath: string): unknown[] {
  return readFileSync(join(fixturesDir(), relativePath), 'utf8')
    .split('\n')
    .filter((line) => line.trim() !== '')
    .map((line) => JSON.parse(line) as unknown);
}

/** The payload schema of every registered type, keyed by type name. */
export function readTypeSchemas(): Map<string, unknown> {
  const dir = join(schemasDir(), 'types');
  const schemas = new Map<string, unknown>();
  for (const file of readdirSync(dir)) {
    if (!file.endsWith('.schema.json')) continue;
    schemas.set(file.slice(0, -'.schema.json'.length), JSON.parse(readFileSync(join(dir, file), 'utf8')));
  }
  return schemas;
}

/** The registry's list of types with scope and schema file (schemas/registry/types.json). */
export function readTypeRegistry(): Array<{ type: string; status: string; scope: string; schema: string | null }> {
  const file = join(schemasDir(), 'registry', 'types.json');
  return (JSON.parse(readFileSync(file, 'utf8')) as { types: Array<{ type: string; status: string; scope: string; schema: string | null }> }).types;
}

/** Reports how many cases of a corpus ran, so the test output shows the count per corpus. */
export function reportCorpus(name: string, count: number): void {
  console.log(`[corpus] ${name}: ${count} cases`);
}
