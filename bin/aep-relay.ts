/**
 * `aep-relay`: the admin CLI (tenants, tokens, control policy). Run it with `npx aep-relay`
 * (through `bin/aep-relay.mjs`) or `npm run admin --`; `aep-relay --help` lists the commands.
 */
import { runCli } from './cli/run-cli.ts';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

process.exitCode = await runCli(process.argv.slice(2), process.env, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  readStdin,
});
