/**
 * The credential `aep-relay login` keeps: one JSON file in the user's config directory
 * (`$AEP_CONFIG_DIR`, else `$XDG_CONFIG_HOME/aep-relay`, else `~/.config/aep-relay`), written
 * with mode 0600 in a directory of mode 0700, never printed. Every command takes it when no
 * `AEP_TOKEN` is set (`withStoredCredential`); an expired one is ignored.
 */
import { chmodSync, existsSync, mkdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { homedir } from 'node:os';
import { join } from 'node:path';
import type { Environment } from '../../../src/config/env-readers.ts';

export interface StoredCredential {
  url: string;
  tenant: string;
  token: string;
  tokenId: string;
  expiresAt: string;
  scopes: string[];
  person: { subject: string; name: string; provider: string };
}

export function credentialFile(env: Environment): string {
  const dir = nonEmpty(env.AEP_CONFIG_DIR) ?? join(nonEmpty(env.XDG_CONFIG_HOME) ?? join(homedir(), '.config'), 'aep-relay');
  return join(dir, 'credentials.json');
}

export function saveCredential(env: Environment, credential: StoredCredential): string {
  const file = credentialFile(env);
  const dir = join(file, '..');
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  // Written 0600 from the first byte, and set again in case the file was there with wider bits.
  writeFileSync(file, `${JSON.stringify(credential, null, 2)}\n`, { mode: 0o600 });
  chmodSync(file, 0o600);
  return file;
}

/** The stored credential, or undefined when there is none, it is unreadable, or it has expired. */
export function loadCredential(env: Environment, nowMs = Date.now()): StoredCredential | undefined {
  const file = credentialFile(env);
  if (!existsSync(file)) return undefined;
  try {
    const credential = JSON.parse(readFileSync(file, 'utf8')) as StoredCredential;
    if (typeof credential.token !== 'string' || typeof credential.url !== 'string') return undefined;
    return Date.parse(credential.expiresAt) > nowMs ? credential : undefined;
  } catch {
    return undefined;
  }
}

export function forgetCredential(env: Environment): void {
  rmSync(credentialFile(env), { force: true });
}

/**
 * The environment a command runs with: without `AEP_TOKEN`, the stored credential fills it (and
 * `AEP_URL` when that is unset too, unless a direct-mode table is named); it stands in for
 * `AEP_ADMIN_TOKEN` only when it carries the admin scope.
 */
export function withStoredCredential(env: Environment): Environment {
  if (nonEmpty(env.AEP_TOKEN) !== undefined) return env;
  const credential = loadCredential(env);
  if (credential === undefined) return env;
  const url = nonEmpty(env.AEP_URL) ?? (nonEmpty(env.AEP_TENANTS_TABLE) === undefined ? credential.url : undefined);
  if (url === undefined || url.replace(/\/$/, '') !== credential.url.replace(/\/$/, '')) return env;
  return {
    ...env,
    AEP_URL: url,
    AEP_TOKEN: credential.token,
    ...(nonEmpty(env.AEP_ADMIN_TOKEN) === undefined && credential.scopes.includes('admin') ? { AEP_ADMIN_TOKEN: credential.token } : {}),
  };
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
