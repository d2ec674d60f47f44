/**
 * Web Push settings (RFC 8030/8291/8292), read with the rest of the relay configuration. The
 * VAPID key pair is derived from a seed (`vapid-keys.ts` in src/gateway): in AWS a value Secrets
 * Manager generates at deploy, locally one kept in the data folder. Without a seed the relay
 * sends no notifications and refuses push subscriptions, naming the variable.
 */
import { optionalString } from './env-readers.ts';
import type { Environment } from './env-readers.ts';
import { PUSH_VARIABLES } from './relay-environment.ts';

export interface PushConfig {
  /** Seeds of the VAPID keys, current first; a second one only during a rotation. Empty: push is off. */
  vapidSeeds: string[];
  /** The VAPID `sub` claim (a mailto: or https: URL). */
  vapidSubject: string;
  /** The console's URL notifications open; absent: a relative `/console/` (the service worker resolves it). */
  consoleUrl?: string;
}

/** A placeholder contact; deployments set their own (`-c pushContact=mailto:…`), as push services may write to it. */
export const DEFAULT_VAPID_SUBJECT = 'mailto:aep-relay@example.invalid';

export function readPushConfig(env: Environment): PushConfig {
  const current = optionalString(env, PUSH_VARIABLES.vapidSeed);
  const previous = optionalString(env, PUSH_VARIABLES.vapidPreviousSeed);
  const consoleUrl = optionalString(env, PUSH_VARIABLES.consoleUrl);
  const seeds = current === undefined ? [] : previous === undefined || previous === current ? [current] : [current, previous];
  return {
    vapidSeeds: seeds,
    vapidSubject: optionalString(env, PUSH_VARIABLES.vapidSubject) ?? DEFAULT_VAPID_SUBJECT,
    ...(consoleUrl === undefined ? {} : { consoleUrl }),
  };
}
