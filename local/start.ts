/**
 * `npm start`: runs the relay on this machine. Environment: AEP_PORT (default 8787),
 * AEP_DEV_TOKEN (fixes the dev token), AEP_REPLAY_BUFFER (events per session replay serves),
 * AEP_DATA_DIR (default .aep-local). Flag: --in-memory for a throwaway run.
 */
import { resolve } from 'node:path';
import { isWellFormedTokenSecret } from '../src/auth/token-secret.ts';
import { startStack } from './stack.ts';

const inMemory = process.argv.includes('--in-memory');
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

// Until the stack is up, a signal simply exits (the JVM child is killed on exit).
const exitNow = () => process.exit(130);
process.once('SIGINT', exitNow);
process.once('SIGTERM', exitNow);

const stack = await startStack({
  port,
  inMemory,
  dataDir: resolve(process.env.AEP_DATA_DIR ?? '.aep-local'),
  ...(devToken === undefined ? {} : { devToken }),
});

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
