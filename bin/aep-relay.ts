/**
 * `aep-relay`: the admin CLI (tenants, tokens, control policy), `aep-relay export` (a
 * session's history as JSONL, `cli/export/`) and `aep-relay attention` (list and answer a
 * session's attention requests, `cli/attention/`). Run it with `npx aep-relay`
 * (through `bin/aep-relay.mjs`) or `npm run admin --`; `aep-relay --help` lists the commands.
 */
import { withStoredCredential } from './cli/login/stored-credential.ts';
// Each command's module is loaded when it runs: a CLI starts in the time its one command needs.

async function readStdin(): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of process.stdin) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}

const argv = process.argv.slice(2);
// Without AEP_TOKEN, the credential `aep-relay login` stored (team sign-in) is used.
const env = argv[0] === 'login' || argv[0] === 'logout' ? process.env : withStoredCredential(process.env);
const lines = { out: (line: string) => process.stdout.write(`${line}\n`), err: (line: string) => process.stderr.write(`${line}\n`) };

if (argv[0] === 'login') {
  const { runLogin } = await import('./cli/login/run-login.ts');
  process.exitCode = await runLogin(argv.slice(1), env, lines);
} else if (argv[0] === 'logout') {
  const { runLogout } = await import('./cli/login/run-login.ts');
  process.exitCode = await runLogout(env, lines);
} else if (argv[0] === 'export') {
  const { runExport } = await import('./cli/export/run-export.ts');
  process.exitCode = await runExport(argv.slice(1), env, {
    ...lines,
    // Progress only on a terminal: a redirected or piped stderr gets the final line alone.
    ...(process.stderr.isTTY ? { progress: (text: string) => process.stderr.write(`\r\u001b[K${text}`) } : {}),
  });
} else if (argv[0] === 'attention') {
  const { runAttention } = await import('./cli/attention/run-attention.ts');
  process.exitCode = await runAttention(argv.slice(1), env, lines);
} else {
  const { runCli } = await import('./cli/run-cli.ts');
  process.exitCode = await runCli(argv, env, { ...lines, readStdin });
}
