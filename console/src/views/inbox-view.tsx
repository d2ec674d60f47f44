/**
 * The attention inbox (AEP-0002 §7): requests still open, newest first, with their question,
 * options or form fields (AEP-0006); answering sends `control.attention.respond` over the
 * WebSocket (AEP-0004 §5) and the card shows the ack, the refusal, and the lifecycle events.
 */
import { useState } from 'preact/hooks';
import type { AepObject, AttentionRequest } from '../attention.ts';
import type { ConsoleSession } from '../console-session.ts';
import { useSessionVersion } from '../use-session.ts';
import { CommandOutcomeLine } from './command-outcome.tsx';
import { FormAnswer } from './form-answer.tsx';

export function InboxView({ session }: { session: ConsoleSession }) {
  useSessionVersion(session);
  const open = session.attention.open();
  const closed = session.attention.closed().slice(0, 10);
  return (
    <section aria-labelledby="inbox-title">
      <h2 id="inbox-title">Attention</h2>
      <p class="help">
        Open requests from agents, newest first. Requests older than the relay's replay window are not listed. Answers are sent as agent{' '}
        <code data-testid="sender-agent">{session.socket.sender.agent}</code>.
      </p>
      {session.inboxRefusal !== undefined && (
        <p class="problem" role="alert">
          {session.inboxRefusal}
        </p>
      )}
      {open.length === 0 && <p class="empty">Nothing is waiting for you.</p>}
      <ul class="cards" aria-label="Open requests" data-testid="open-requests">
        {open.map((request) => (
          <li key={request.id}>
            <RequestCard session={session} request={request} />
          </li>
        ))}
      </ul>
      {closed.length > 0 && (
        <>
          <h3>Recently closed</h3>
          <ul class="cards closed" aria-label="Recently closed requests" data-testid="closed-requests">
            {closed.map((request) => (
              <li key={request.id}>
                <RequestCard session={session} request={request} />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

function RequestCard({ session, request }: { session: ConsoleSession; request: AttentionRequest }) {
  const [text, setText] = useState('');
  const commandId = session.answers.get(request.id);
  const headingId = `request-${request.id}`;
  const isOpen = request.terminal === undefined;
  const respond = (answer: AepObject) => session.answer(request.id, request.session, answer);
  return (
    <article class="card" aria-labelledby={headingId} data-request={request.id}>
      <h4 id={headingId}>{request.prompt || '(no prompt)'}</h4>
      <p class="meta">
        {request.kind} · agent {request.agent} · session {request.session} · <time>{request.time}</time>
        {request.expiresAt !== undefined && <> · expires {request.expiresAt}</>}
      </p>
      {isOpen && !request.answerableByControl && <p class="help">This request is answered in the agent's own interface, not from here.</p>}
      {isOpen && request.answerableByControl && request.fields.length > 0 && <FormAnswer fields={request.fields} onSubmit={(values) => respond({ values })} />}
      {isOpen && request.answerableByControl && request.fields.length === 0 && (
        <div class="answers">
          {request.options.length > 0 && (
            <div class="options" role="group" aria-label="Answer with an option">
              {request.options.map((option) => (
                <button type="button" key={option.id} onClick={() => respond({ option: option.id })}>
                  {option.label}
                </button>
              ))}
            </div>
          )}
          <form
            class="text-answer"
            onSubmit={(event) => {
              event.preventDefault();
              if (text.trim() !== '') respond({ text: text.trim() });
            }}
          >
            <label for={`text-${request.id}`}>{request.options.length > 0 ? 'Or answer in words' : 'Answer'}</label>
            <input id={`text-${request.id}`} value={text} onInput={(event) => setText((event.target as HTMLInputElement).value)} />
            <button type="submit" class="secondary">
              Send
            </button>
          </form>
        </div>
      )}
      {commandId !== undefined && <CommandOutcomeLine session={session} commandId={commandId} />}
      {request.answered !== undefined && <p class="lifecycle">answered{answerWords(request.answered)}</p>}
      {request.terminal !== undefined && (
        <p class="lifecycle" data-testid="terminal">
          {request.terminal.type === 'attention.timeout' ? 'timed out' : `resolved: ${String((request.terminal.data as AepObject | undefined)?.resolution ?? '')}`}
        </p>
      )}
    </article>
  );
}

function answerWords(answered: AepObject): string {
  const answer = ((answered.data as AepObject | undefined)?.answer ?? {}) as AepObject;
  if (typeof answer.option === 'string') return ` with option ${answer.option}`;
  if (typeof answer.text === 'string') return ' in words';
  if (answer.values !== undefined) return ' with a form';
  return '';
}
