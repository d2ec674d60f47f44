/**
 * The attention inbox (AEP-0002 §7): requests still open, newest first, with their question,
 * options or form fields (AEP-0006); answering sends `control.attention.respond` over the
 * WebSocket (AEP-0004 §5) and the card shows the ack, the refusal, and the lifecycle events.
 * Opened at a request (`#/inbox/{id}`, where a notification leads), that request's card is
 * brought into view and focused, ready to answer. "Notify me" turns on Web Push for this browser.
 */
import { useEffect, useRef, useState } from 'preact/hooks';
import { currentNotifyState, turnOnNotifications } from '../push-notifications.ts';
import type { NotifyState } from '../push-notifications.ts';
import type { AepObject, AttentionRequest } from '../attention.ts';
import type { ConsoleSession } from '../console-session.ts';
import { useSessionVersion } from '../use-session.ts';
import { CommandOutcomeLine } from './command-outcome.tsx';
import { FormAnswer } from './form-answer.tsx';

export function InboxView({ session, focus }: { session: ConsoleSession; focus?: string | undefined }) {
  useSessionVersion(session);
  const open = session.attention.open();
  const closed = session.attention.closed().slice(0, 10);
  const focusedLoaded = focus !== undefined && [...open, ...closed].some((request) => request.id === focus);
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
      <NotifyMe session={session} />
      {focus !== undefined && !focusedLoaded && (
        <p class="help" role="status">
          Looking for request <code>{focus}</code>…
        </p>
      )}
      {open.length === 0 && <p class="empty">Nothing is waiting for you.</p>}
      <ul class="cards" aria-label="Open requests" data-testid="open-requests">
        {open.map((request) => (
          <li key={request.id}>
            <RequestCard session={session} request={request} focused={request.id === focus} />
          </li>
        ))}
      </ul>
      {closed.length > 0 && (
        <>
          <h3>Recently closed</h3>
          <ul class="cards closed" aria-label="Recently closed requests" data-testid="closed-requests">
            {closed.map((request) => (
              <li key={request.id}>
                <RequestCard session={session} request={request} focused={request.id === focus} />
              </li>
            ))}
          </ul>
        </>
      )}
    </section>
  );
}

/** Turns on Web Push notifications for this browser (`push-notifications.ts`). */
function NotifyMe({ session }: { session: ConsoleSession }) {
  const [state, setState] = useState<NotifyState | 'working' | undefined>(undefined);
  const [problem, setProblem] = useState<string | undefined>(undefined);
  useEffect(() => {
    void currentNotifyState().then(setState, () => setState('unsupported'));
  }, []);
  if (state === undefined || state === 'unsupported') return null;
  return (
    <div class="notify" data-testid="notify">
      {state === 'on' ? (
        <p class="help" role="status">
          Notifications are on for this browser.
        </p>
      ) : (
        <button
          type="button"
          class="secondary"
          disabled={state === 'working' || state === 'denied'}
          onClick={() => {
            setState('working');
            setProblem(undefined);
            turnOnNotifications(session.client).then(
              (outcome) => {
                setState(outcome.state);
                setProblem(outcome.problem);
              },
              (error: unknown) => {
                setState('off');
                setProblem(error instanceof Error ? error.message : 'Notifications could not be turned on.');
              },
            );
          }}
        >
          Notify me
        </button>
      )}
      {state === 'denied' && <p class="help">Notifications are blocked for this site in the browser's settings.</p>}
      {problem !== undefined && (
        <p class="problem" role="alert">
          {problem}
        </p>
      )}
    </div>
  );
}

function RequestCard({ session, request, focused }: { session: ConsoleSession; request: AttentionRequest; focused: boolean }) {
  const [text, setText] = useState('');
  const article = useRef<HTMLElement>(null);
  useEffect(() => {
    if (!focused) return;
    article.current?.scrollIntoView({ block: 'center' });
    article.current?.focus();
  }, [focused]);
  const commandId = session.answers.get(request.id);
  const headingId = `request-${request.id}`;
  const isOpen = request.terminal === undefined;
  const respond = (answer: AepObject) => session.answer(request.id, request.session, answer);
  return (
    <article ref={article} class={focused ? 'card focused' : 'card'} aria-labelledby={headingId} aria-current={focused ? 'true' : undefined} tabIndex={focused ? -1 : undefined} data-request={request.id}>
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
