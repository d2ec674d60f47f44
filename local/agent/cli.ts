/** `npm run agent`: a simulated control-capable agent against a running relay (usage below). */
import { scriptArguments } from '../../bin/cli/script-arguments.ts';
import { SimulatedAgent } from './simulated-agent.ts';

const DEFAULT_ACCEPTS = 'control.attention.respond,control.cancel,control.pause,control.resume';
const USAGE = `Usage: npm run agent -- [--session <id>] [--agent <name>] [--accepts <type,type,...>]

A simulated control-capable agent: it connects over the WebSocket, claims the session, raises an
attention request (kind permission, options allow and deny) and answers the commands it accepts,
until Ctrl-C.

  --session <id>     the session it emits (default sim-<time>)
  --agent <name>     its agent name (default simulator)
  --accepts <list>   the control types it accepts (default ${DEFAULT_ACCEPTS})

Environment: AEP_TOKEN (required: a token with emit; npm start keeps its dev token in
.aep-local/dev-token), AEP_URL (default http://127.0.0.1:8787).`;

const { values } = scriptArguments({
  command: 'npm run agent --',
  usage: USAGE,
  config: { options: { session: { type: 'string' }, agent: { type: 'string' }, accepts: { type: 'string' } } },
});

const token = process.env.AEP_TOKEN;
if (token === undefined || token === '') {
  console.error('set AEP_TOKEN to a token with the emit scope (npm start prints a dev token)');
  process.exit(2);
}
const session = values.session ?? `sim-${Date.now().toString(36)}`;
const agent = new SimulatedAgent({
  baseUrl: process.env.AEP_URL ?? 'http://127.0.0.1:8787',
  token,
  agent: values.agent ?? 'simulator',
  session,
  accepts: (values.accepts ?? DEFAULT_ACCEPTS).split(','),
  onLog: (line) => console.log(line),
});
await agent.start();
const requestId = agent.requestAttention();
console.log(`session ready; attention request ${requestId} is waiting for control.attention.respond (subject = that id)`);
// The terminal's way to answer it (the console's Attention view is the other): bin/cli/attention.
console.log(`answer it from another terminal: npx aep-relay attention answer --session ${session} ${requestId} allow   (or deny; attention list --session ${session} shows it)`);
process.on('SIGINT', () => void agent.stop().then(() => process.exit(0)));
