/**
 * `aep-relay attention list|answer`: a session's open attention requests, and answering one from
 * a terminal the way the console's Attention view does (`control.attention.respond`). Returns the
 * exit code (`exit-codes.ts`): 0 done, 1 refused, rejected or unanswered, 2 usage, 3 the request is
 * already resolved, 4 no such request in the session.
 */
import type { AttentionRequest } from '../../../console/src/attention.ts';
import { describeOutcome } from '../../../console/src/commands.ts';
import { senderIdentityOf } from '../../../console/src/sender-identity.ts';
import type { SenderIdentity } from '../../../console/src/sender-identity.ts';
import type { Environment } from '../../../src/config/env-readers.ts';
import { UsageError } from '../cli-arguments.ts';
import { EXIT, exitOnFailure } from '../exit-codes.ts';
import { httpHistorySource } from '../export/history-source.ts';
import { ATTENTION_USAGE, parseAttentionArguments } from './attention-arguments.ts';
import type { AttentionAnswer, AttentionTarget } from './attention-arguments.ts';
import { respondOverSocket } from './respond-over-socket.ts';
import { attentionOfSession } from './session-attention.ts';

export interface AttentionIo {
  out(line: string): void;
  err(line: string): void;
}

export async function runAttention(argv: readonly string[], env: Environment, io: AttentionIo): Promise<number> {
  try {
    const command = parseAttentionArguments(argv, env);
    if (command.kind === 'help') {
      io.out(ATTENTION_USAGE);
      return EXIT.ok;
    }
    if (command.kind === 'list') return await list(command, io);
    return await answer(command, command.requestId, command.answer, io);
  } catch (error) {
    return exitOnFailure(error, io.err, { helpCommand: 'aep-relay attention' });
  }
}

async function list(target: AttentionTarget, io: AttentionIo): Promise<number> {
  const open = (await attentionOfSession(httpHistorySource(target.url, target.token), target.session)).open();
  if (target.json) io.out(JSON.stringify({ session: target.session, requests: open.map(requestView) }));
  else if (open.length === 0) io.out(`no open attention requests in session ${target.session}`);
  else for (const request of open) io.out(requestLine(request));
  return EXIT.ok;
}

async function answer(target: AttentionTarget, requestId: string, given: AttentionAnswer, io: AttentionIo): Promise<number> {
  const request = (await attentionOfSession(httpHistorySource(target.url, target.token), target.session)).get(requestId);
  if (request === undefined) {
    io.err(`error: no attention request ${requestId} in session ${target.session} (aep-relay attention list --session ${target.session} shows the open ones)`);
    return EXIT.notFound;
  }
  if (request.terminal !== undefined) {
    const how = request.terminal.type === 'attention.timeout' ? 'timed out' : `resolved (${resolutionOf(request.terminal)})`;
    io.out(`attention request ${requestId} is already ${how}; nothing to do`);
    return EXIT.nothingToDo;
  }
  if (!request.answerableByControl) {
    io.err(`error: attention request ${requestId} is not answered by control (its respond_via does not list control)`);
    return EXIT.failed;
  }
  if (given.option !== undefined && request.options.length > 0 && !request.options.some((option) => option.id === given.option)) {
    throw new UsageError(`${JSON.stringify(given.option)} is not an option of ${requestId}; its options: ${request.options.map((option) => option.id).join(', ')}`);
  }
  const sender = await senderOf(target);
  const result = await respondOverSocket({ url: target.url, token: target.token, session: target.session, requestId, answer: given, sender });
  const accepted = result.outcome.state === 'accepted';
  if (target.json) {
    io.out(JSON.stringify({ command: result.command, outcome: result.outcome, ...(result.answered === undefined ? {} : { answered: result.answered }), ...(result.terminal === undefined ? {} : { resolved: result.terminal }) }));
  } else {
    io.out(`sent control.attention.respond ${String(result.command.id)} to session ${target.session} as ${sender.agent} (answer: ${answerWords(given)})`);
    io.out(`${describeOutcome(result.outcome)}${result.outcome.code === undefined ? '' : ` [${result.outcome.code}]`}${result.outcome.detail === undefined ? '' : `: ${result.outcome.detail}`}`);
    if (accepted && result.terminal !== undefined) io.out(`attention request ${requestId} ${result.terminal.type === 'attention.timeout' ? 'timed out' : `resolved: ${resolutionOf(result.terminal)}`}`);
    else if (accepted) io.out(`attention request ${requestId} not resolved yet (the agent accepted the answer; watch the session for attention.resolved)`);
  }
  return accepted ? EXIT.ok : EXIT.failed;
}

/** Who the command is sent as: the token's first bound agent, else `console` (`sender-identity.ts`, AEP-0004 §2.2). */
async function senderOf(target: AttentionTarget): Promise<SenderIdentity> {
  const response = await fetch(`${target.url.replace(/\/+$/, '')}/token`, { headers: { authorization: `Bearer ${target.token}` } });
  if (response.status !== 200) return senderIdentityOf(undefined);
  const grant = (await response.json()) as { agents?: unknown };
  const agents = Array.isArray(grant.agents) ? grant.agents.filter((agent): agent is string => typeof agent === 'string') : [];
  return senderIdentityOf(agents.length === 0 ? undefined : agents);
}

function requestView(request: AttentionRequest) {
  return {
    id: request.id,
    kind: request.kind,
    agent: request.agent,
    time: request.time,
    prompt: request.prompt,
    options: request.options,
    fields: request.fields,
    answerableByControl: request.answerableByControl,
    answered: request.answered !== undefined,
    ...(request.expiresAt === undefined ? {} : { expiresAt: request.expiresAt }),
  };
}

function requestLine(request: AttentionRequest): string {
  return [
    request.id,
    request.kind,
    `agent=${request.agent}`,
    request.time,
    JSON.stringify(request.prompt),
    ...(request.options.length === 0 ? [] : [`options: ${request.options.map((option) => option.id).join(', ')}`]),
    ...(request.fields.length === 0 ? [] : [`fields: ${request.fields.map((field) => `${field.id}(${field.type}${field.required ? ', required' : ''})`).join(', ')}`]),
    ...(request.expiresAt === undefined ? [] : [`expires ${request.expiresAt}`]),
    ...(request.answered === undefined ? [] : ['(answered, not resolved yet)']),
    ...(request.answerableByControl ? [] : ['(answered elsewhere, not by control)']),
  ].join('  ');
}

function answerWords(answer: AttentionAnswer): string {
  return [
    ...(answer.option === undefined ? [] : [`option ${answer.option}`]),
    ...(answer.text === undefined ? [] : ['text']),
    ...(answer.values === undefined ? [] : [`values for ${Object.keys(answer.values).join(', ') || 'no field'}`]),
  ].join(', ');
}

function resolutionOf(terminal: Record<string, unknown>): string {
  const data = terminal.data as { resolution?: unknown } | undefined;
  return typeof data?.resolution === 'string' ? data.resolution : String(terminal.type);
}
