/**
 * `aep-relay`: the admin CLI (tenants, tokens, control policy), `aep-relay export` (a
 * session's history as JSONL, `cli/export/`) and `aep-relay attention` (list and answer a
 * session's attention requests, `cli/attention/`). Run it with `npx aep-relay`
 * (through `bin/aep-relay.mjs`) or `npm run admin --`; `aep-relay --help` lists the commands.
 */
import { runAttention } from './cli/attention/run-attention.ts';
import { runCli } from './cli/run-cli.ts';
import { runExport } from './cli/export/run-export.ts';

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const argv = process.argv.slice(2);

if (argv[0] === 'export') {
  process.exitCode = await runExport(argv.slice(1), process.env, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
    // Progress only on a terminal: a redirected or piped stderr gets the final line alone.
    ...(process.stderr.isTTY ? { progress: (text: string) => process.stderr.write(`\r\u001b[K${text}`) } : {}),
  });
} else if (argv[0] === 'attention') {
  process.exitCode = await runAttention(argv.slice(1), process.env, {
    out: (line) => process.stdout.write(`${line}\n`),
    err: (line) => process.stderr.write(`${line}\n`),
  });
} else process.exitCode = await runCli(argv, process.env, {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  readStdin,
});
