/**
 * `npm start`: runs the relay on this machine (usage below). A start that would share what a
 * running stack owns (its port, its data folder) is refused before it touches either, with
 * exit code 2.
 */
import { resolve } from 'node:path';
import { isWellFormedTokenSecret } from '../src/auth/token-secret.ts';
import { DataFolderInUseError } from './data-folder-lock.ts';
import { PortInUseError } from './gateway/server.ts';
import { startStack } from './stack.ts';
import type { RunningStack } from './stack.ts';
import { scriptArguments } from '../bin/cli/script-arguments.ts';

import { LOCAL_EVENTS_PER_SECOND } from './local-defaults.ts';

const USAGE = `Usage: npm start [-- --in-memory]

Runs the relay on this machine: DynamoDB Local, the tables, a local tenant with a dev token, and
every route on one port. Ctrl-C (SIGINT) or SIGTERM stops it, in dependency order.

  --in-memory   a throwaway stack: the database in memory, nothing kept in the data folder

Environment (docs/local-stack.md "Settings" lists every setting):
  AEP_PORT        port of the local gateway (default 8787; 0 picks a free one)
  AEP_DATA_DIR    where the data is kept across restarts (default .aep-local); one stack per folder
  AEP_DEV_TOKEN   the local tenant's dev token (default: minted once, kept in the data folder)
  AEP_DEFAULT_EVENTS_PER_SECOND  events a tenant may admit per second when its quotas set none
                  (default here ${LOCAL_EVENTS_PER_SECOND}: what one DynamoDB Local serves; 0: no limit)
  AEP_REPLAY_BUFFER   events per session replay serves (default 1000)
  AEP_LOCAL_OIDC_PORT port of the embedded dev OpenID Connect provider (default 0: a free one)

Exit codes: 0 stopped cleanly, 1 failed, 2 usage, or the port or the data folder is in use.`;

const { values } = scriptArguments({ command: 'npm start --', usage: USAGE, config: { options: { 'in-memory': { type: 'boolean' } } } });
const inMemory = values['in-memory'] === true;
const port = Number(process.env.AEP_PORT ?? 8787);
if (!Number.isInteger(port) || port < 0 || port > 65535) {
  console.error(`AEP_PORT must be a port number, got ${JSON.stringify(process.env.AEP_PORT)}`);
  process.exit(2);
}
const devToken = process.env.AEP_DEV_TOKEN === '' ? undefined : process.env.AEP_DEV_TOKEN;
// Every request with a token of another shape is refused unread (401), so a stack started with
// one would print a dev token that works nowhere: refuse it before anything starts. The value
// itself is not echoed (it is a secret, or meant to be).
if (devToken !== undefined && !isWellFormedTokenSecret(devToken)) {
  console.error('AEP_DEV_TOKEN must be aep_ followed by 8 to 128 of A-Z a-z 0-9 _ - (aep_[A-Za-z0-9_-]{8,128}); unset it to have one minted');
  process.exit(2);
}
const dataDir = resolve(process.env.AEP_DATA_DIR ?? '.aep-local');
// One machine's ceiling: DynamoDB Local takes about 360 conditional puts a second, an event
// costs one, and fan-out and the other tenants need the rest. Without a per-tenant default one
// tenant's flood would take the whole box (docs/operations.md, "Overload").
process.env.AEP_DEFAULT_EVENTS_PER_SECOND ??= String(LOCAL_EVENTS_PER_SECOND);

// Until the stack is up, a signal simply exits (the JVM child is killed on exit).
const exitNow = () => process.exit(130);
process.once('SIGINT', exitNow);
process.once('SIGTERM', exitNow);

let stack: RunningStack;
try {
  stack = await startStack({
    port,
    inMemory,
    dataDir,
    ...(devToken === undefined ? {} : { devToken }),
  });
} catch (error) {
  if (error instanceof PortInUseError) {
    console.error(`error: port ${error.port} is already in use (another \`npm start\`, or another server): nothing was started.`);
    console.error(`Set AEP_PORT to another port, e.g. AEP_PORT=${error.port === 8787 ? 8788 : error.port + 1} npm start (AEP_PORT=0 picks a free one).`);
    process.exit(2);
  }
  if (error instanceof DataFolderInUseError) {
    console.error(`error: ${error.message}: nothing was started.`);
    console.error('Two stacks cannot share a data folder (DynamoDB Local keeps one database file in it). Set AEP_DATA_DIR to another folder, or run npm start -- --in-memory.');
    process.exit(2);
  }
  throw error;
}

console.log(`DynamoDB Local: ${stack.dynamoEndpoint}${inMemory ? ' (in memory)' : ''}`);
console.log(`Tenant: local`);
console.log(`Dev token: ${stack.devToken}`);
console.log(`Replay buffer: ${stack.config.replayBuffer} events per session`);
const { tables } = stack.config;
const { accessKeyId, secretAccessKey } = stack.managementCredentials;
// The management endpoint takes only this run's credentials (loopback, key id checked), so the
// CLI's direct mode needs them to close sockets; DynamoDB Local takes them too.
console.log(
  `Admin (direct): AEP_DYNAMODB_ENDPOINT=${stack.dynamoEndpoint} AEP_TENANTS_TABLE=${tables.tenants} AEP_EVENTS_TABLE=${tables.events} AEP_CONNECTIONS_TABLE=${tables.connections} AEP_WS_MANAGEMENT_ENDPOINT=${stack.managementEndpoint} AWS_ACCESS_KEY_ID=${accessKeyId} AWS_SECRET_ACCESS_KEY=${secretAccessKey}`,
);
console.log(`Console: ${stack.baseUrl}/console/ (sign in with the dev token)`);
console.log(`Team sign-in (dev provider): ${stack.identityProvider.issuer}: in the console choose tenant ${stack.identityProvider.tenant}, "Sign in with ${stack.identityProvider.displayName}", log in as demo (any password); visitor is outside the mapped group; CLI: AEP_URL=${stack.baseUrl} npx aep-relay login --tenant ${stack.identityProvider.tenant} (docs/team-sign-in.md)`);
console.log(`Origins (direct, as the execute-api URLs; refused without the edge's origin header): ${stack.originUrl}`);
console.log(`AEP relay ready: ${stack.baseUrl}`);

let stopping = false;
const stop = async () => {
  if (stopping) return;
  stopping = true;
  try {
    await stack.stop();
  } catch (error) {
    console.error('the stack did not stop cleanly:', error);
    process.exit(1);
  }
  process.exit(0);
};
process.removeListener('SIGINT', exitNow);
process.removeListener('SIGTERM', exitNow);
process.on('SIGINT', () => void stop());
process.on('SIGTERM', () => void stop());
// A stack whose launcher is gone (npm's or tsx's process killed, a test worker torn down) would
// serve on with nobody to stop it: it stops as on SIGTERM once this process is re-parented.
const launcher = process.ppid;
setInterval(() => {
  if (process.ppid !== launcher) void stop();
}, 1000).unref();
