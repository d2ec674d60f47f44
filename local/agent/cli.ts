/**
 * `npm run agent`: a simulated control-capable agent against a running relay.
 * Environment: AEP_URL (default http://127.0.0.1:8787), AEP_TOKEN (required).
 * Flags: --session NAME, --agent NAME, --accepts a,b,c.
 */
import { SimulatedAgent } from './simulated-agent.ts';

function flag(name: string, fallback: string): string {
  const index = process.argv.indexOf(`--${name}`);
  return index === -1 ? fallback : (process.argv[index + 1] ?? fallback);
}

const token = process.env.AEP_TOKEN;
if (token === undefined || token === '') {
  console.error('set AEP_TOKEN to a token with the emit scope (npm start prints a dev token)');
  process.exit(2);
}
const session = flag('session', `sim-${Date.now().toString(36)}`);
const agent = new SimulatedAgent({
  baseUrl: process.env.AEP_URL ?? 'http://127.0.0.1:8787',
  token,
  agent: flag('agent', 'simulator'),
  session,
  accepts: flag('accepts', 'control.attention.respond,control.cancel,control.pause,control.resume').split(','),
  onLog: (line) => console.log(line),
});
await agent.start();
const requestId = agent.requestAttention();
console.log(`session ready; attention request ${requestId} is waiting for control.attention.respond (subject = that id)`);
// The terminal's way to answer it (the console's Attention view is the other): bin/cli/attention.
console.log(`answer it from another terminal: npx aep-relay attention answer --session ${session} ${requestId} allow   (or deny; attention list --session ${session} shows it)`);
process.on('SIGINT', () => void agent.stop().then(() => process.exit(0)));
