/**
 * `aep-relay login --url <base> --tenant <id>`: team sign-in from a terminal with the OAuth 2.0
 * device authorization grant (RFC 8628), run by the relay against the tenant's provider
 * (`/signin/device`): prints where to go and the code to enter, polls at the interval the
 * provider set, and stores the credential (`stored-credential.ts`). `aep-relay logout` revokes
 * it at the relay (its sockets and streams end) and removes the file.
 */
import type { Environment } from '../../../src/config/env-readers.ts';
import { EXIT } from '../exit-codes.ts';
import { parseCommandLine } from '../cli-arguments.ts';
import { forgetCredential, loadCredential, saveCredential } from './stored-credential.ts';
import type { StoredCredential } from './stored-credential.ts';

export interface LoginIo {
  out(line: string): void;
  err(line: string): void;
  /** Waits between polls; tests may pass a quicker one. */
  sleep?(ms: number): Promise<void>;
}

const LOGIN_USAGE = `Usage: aep-relay login --url <base> --tenant <id>     (or AEP_URL)
       aep-relay logout

Signs you in with your team's identity provider (the device authorization grant): open the
address shown, enter the code, sign in there. The credential is kept in your config directory
with mode 0600 (AEP_CONFIG_DIR, else $XDG_CONFIG_HOME/aep-relay, else ~/.config/aep-relay) and
used by every command when AEP_TOKEN is unset, until it expires. logout revokes it.`;

export async function runLogin(argv: readonly string[], env: Environment, io: LoginIo): Promise<number> {
  let values;
  try {
    ({ values } = parseCommandLine({ args: [...argv], options: { url: { type: 'string' }, tenant: { type: 'string' }, help: { type: 'boolean', short: 'h' } }, allowPositionals: false }));
  } catch (error) {
    io.err(`error: ${error instanceof Error ? error.message : String(error)}`);
    return EXIT.usage;
  }
  if (values.help === true) {
    io.out(LOGIN_USAGE);
    return EXIT.ok;
  }
  const url = (values.url ?? env.AEP_URL ?? '').replace(/\/$/, '');
  const tenant = values.tenant;
  if (url === '' || tenant === undefined || tenant === '') {
    io.err('error: login needs --url <base> (or AEP_URL) and --tenant <id>');
    return EXIT.usage;
  }
  const started = await post(url, '/signin/device', { tenant });
  if (!started.ok) return refused(io, started.body);
  const device = started.body as { handle: string; userCode: string; verificationUri: string; verificationUriComplete?: string; intervalSeconds: number; expiresInSeconds: number };
  io.out(`To sign in, open ${device.verificationUri} and enter the code ${device.userCode}`);
  if (device.verificationUriComplete !== undefined) io.out(`(or open ${device.verificationUriComplete})`);
  const sleep = io.sleep ?? ((ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)));
  let intervalSeconds = device.intervalSeconds;
  for (;;) {
    await sleep(intervalSeconds * 1000);
    const polled = await post(url, '/signin/device/poll', { tenant, handle: device.handle });
    if (!polled.ok) return refused(io, polled.body);
    const answer = polled.body as { status: string; intervalSeconds?: number } & Partial<StoredCredential>;
    if (answer.status === 'pending' || answer.status === 'slow-down') {
      intervalSeconds = answer.intervalSeconds ?? intervalSeconds;
      continue;
    }
    const credential: StoredCredential = {
      url,
      tenant,
      token: answer.token as string,
      tokenId: answer.tokenId as string,
      expiresAt: answer.expiresAt as string,
      scopes: answer.scopes ?? [],
      person: answer.person as StoredCredential['person'],
    };
    const file = saveCredential(env, credential);
    io.out(`signed in to tenant ${tenant} as ${credential.person.name} (${credential.person.provider}); scopes ${credential.scopes.join(', ')}; until ${credential.expiresAt}`);
    io.out(`credential kept in ${file} (mode 0600); commands use it when AEP_TOKEN is unset`);
    return EXIT.ok;
  }
}

export async function runLogout(env: Environment, io: LoginIo): Promise<number> {
  const credential = loadCredential(env);
  if (credential === undefined) {
    forgetCredential(env);
    io.out('not signed in (no unexpired credential stored)');
    return EXIT.nothingToDo;
  }
  const answer = await post(credential.url, '/signin/signout', {}, credential.token);
  forgetCredential(env);
  if (!answer.ok) return refused(io, answer.body);
  io.out(`signed out of tenant ${credential.tenant}: the credential is revoked and removed`);
  return EXIT.ok;
}

async function post(url: string, path: string, body: unknown, token?: string): Promise<{ ok: boolean; body: unknown }> {
  try {
    const response = await fetch(`${url}${path}`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', ...(token === undefined ? {} : { authorization: `Bearer ${token}` }) },
      body: JSON.stringify(body),
    });
    const text = await response.text();
    return { ok: response.ok, body: text === '' ? {} : (JSON.parse(text) as unknown) };
  } catch (error) {
    return { ok: false, body: { error: 'unreachable', detail: `the relay could not be reached (${error instanceof Error ? error.message : String(error)})` } };
  }
}

function refused(io: LoginIo, body: unknown): number {
  const { error, detail } = (body ?? {}) as { error?: string; detail?: string };
  io.err(`error: ${error ?? 'refused'}${detail === undefined ? '' : `: ${detail}`}`);
  return EXIT.failed;
}
