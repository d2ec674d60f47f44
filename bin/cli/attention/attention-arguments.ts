/** `aep-relay attention` arguments: argv to a listing or an answer, or a usage error. Pure. */
import { parseCommandLine, UsageError } from '../cli-arguments.ts';
import { EXIT_CODES_HELP } from '../exit-codes.ts';

/** The relay and the token both commands talk with. */
export interface AttentionTarget {
  url: string;
  token: string;
  session: string;
  json: boolean;
}

/** `answer` of AEP-0004 §5 `control.attention.respond`: an option, a text (AEP-0008), form values (AEP-0006). */
export interface AttentionAnswer {
  option?: string;
  text?: string;
  values?: Record<string, unknown>;
}

export type AttentionCommand =
  | { kind: 'help' }
  | ({ kind: 'list' } & AttentionTarget)
  | ({ kind: 'answer'; requestId: string; answer: AttentionAnswer } & AttentionTarget);

export const ATTENTION_USAGE = `Usage: aep-relay attention list --session <id>
       aep-relay attention answer --session <id> <requestId> <option>
       aep-relay attention answer --session <id> <requestId> --text <text> | --values <json object>

list     the session's open attention requests (no attention.resolved or attention.timeout yet),
         newest first, read from its history (GET /history): id, kind, agent, time, prompt, options
answer   sends control.attention.respond (AEP-0004 §5: subject and cause = the request id) over the
         WebSocket, as the console does, and waits for the agent's ack (10 s, the default ack window)
         and then for attention.resolved
  <option>           the id of one of the request's options (list shows them)
  --text <text>      a text answer (AEP-0008)
  --values <json>    the values of a kind "form" request (AEP-0006), e.g. '{"reason":"ok"}'

  --session <id>     the session that raised the request
  --url <base>       the relay's base URL (or AEP_URL)
  the token: AEP_TOKEN (consume to list; consume and control to answer). --token <token> works
             too, but a command line is kept in shell history, shown by ps and echoed by npm run.
  --json             one JSON document instead of lines

${EXIT_CODES_HELP}`;

export function parseAttentionArguments(argv: readonly string[], env: Readonly<Record<string, string | undefined>>): AttentionCommand {
  const parsed = parseCommandLine({
    args: [...argv],
    options: {
      session: { type: 'string' },
      text: { type: 'string' },
      values: { type: 'string' },
      url: { type: 'string' },
      token: { type: 'string' },
      json: { type: 'boolean' },
      help: { type: 'boolean', short: 'h' },
    },
    allowPositionals: true,
  });
  const { values, positionals } = parsed;
  const [verb, ...operands] = positionals;
  if (values.help === true || verb === undefined) return { kind: 'help' };
  if (verb !== 'list' && verb !== 'answer') throw new UsageError(`unknown command: attention ${verb} (list or answer)`);
  if (values.session === undefined || values.session === '') throw new UsageError(`attention ${verb} needs --session <id>`);
  const url = values.url ?? nonEmpty(env.AEP_URL);
  if (url === undefined) throw new UsageError('attention needs the relay: --url <base> or AEP_URL');
  const token = values.token ?? nonEmpty(env.AEP_TOKEN);
  if (token === undefined) throw new UsageError('attention needs a token: set AEP_TOKEN (consume to list; consume and control to answer)');
  const target: AttentionTarget = { url, token, session: values.session, json: values.json === true };
  if (verb === 'list') {
    if (operands.length > 0 || values.text !== undefined || values.values !== undefined) throw new UsageError('attention list takes only --session (and --url, --json)');
    return { kind: 'list', ...target };
  }
  const [requestId, option, ...rest] = operands;
  if (requestId === undefined || requestId === '') throw new UsageError('attention answer needs the request id (attention list shows it)');
  if (rest.length > 0) throw new UsageError(`attention answer takes one option, got ${[option, ...rest].join(' ')}`);
  const answer: AttentionAnswer = {
    ...(option === undefined ? {} : { option }),
    ...(values.text === undefined ? {} : { text: values.text }),
    ...(values.values === undefined ? {} : { values: formValues(values.values) }),
  };
  if (Object.keys(answer).length === 0) throw new UsageError('attention answer needs an answer: an option id, --text <text> or --values <json>');
  return { kind: 'answer', ...target, requestId, answer };
}

function formValues(text: string): Record<string, unknown> {
  let parsed: unknown;
  try {
    parsed = JSON.parse(text) as unknown;
  } catch {
    throw new UsageError('--values is a JSON object of field ids to values, e.g. \'{"reason":"ok"}\'');
  }
  if (typeof parsed !== 'object' || parsed === null || Array.isArray(parsed)) throw new UsageError('--values is a JSON object of field ids to values');
  return parsed as Record<string, unknown>;
}

function nonEmpty(value: string | undefined): string | undefined {
  return value === undefined || value === '' ? undefined : value;
}
