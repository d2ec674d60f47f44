/**
 * Sessions (`GET /sessions`) with their status, and a session's timeline (`GET /history`),
 * paged by the relay's `next` link. A relay without the history surface says so.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ConsoleSession } from '../console-session.ts';
import { loadHistory, loadSessions } from '../history-api.ts';
import type { HistoryLine, Loaded, SessionSummary } from '../history-api.ts';
import { EventDetail } from './event-detail.tsx';

const UNAVAILABLE = 'Not available on this relay: it does not serve the history routes (GET /sessions, GET /history).';

export function SessionsView({ session }: { session: ConsoleSession }) {
  const [page, setPage] = useState<Loaded<SessionSummary[]> | undefined>();
  const [prefix, setPrefix] = useState('');
  const [chosen, setChosen] = useState<string | undefined>();
  const load = async (path = '/sessions') => setPage(await loadSessions(session.client, path));
  useEffect(() => void load(), [session]);
  if (chosen !== undefined) return <Timeline session={session} name={chosen} onBack={() => setChosen(undefined)} />;
  return (
    <section aria-labelledby="sessions-title">
      <h2 id="sessions-title">Sessions</h2>
      <form
        class="filters"
        onSubmit={(event) => {
          event.preventDefault();
          void load(prefix.trim() === '' ? '/sessions' : `/sessions?prefix=${encodeURIComponent(prefix.trim())}`);
        }}
      >
        <div class="field">
          <label for="session-prefix">Session id starts with</label>
          <input id="session-prefix" value={prefix} onInput={(event) => setPrefix((event.target as HTMLInputElement).value)} />
        </div>
        <button type="submit">Search</button>
      </form>
      {page === undefined && <p>Loading…</p>}
      {page?.kind === 'unavailable' && (
        <p class="notice" role="status" data-testid="sessions-unavailable">
          {UNAVAILABLE}
        </p>
      )}
      {page?.kind === 'problem' && (
        <p class="problem" role="alert">
          {page.problem.status === 403 ? 'This token may not read sessions (it needs the consume scope).' : page.problem.detail}
        </p>
      )}
      {page?.kind === 'ok' && (
        <>
          {page.value.length === 0 && <p class="empty">No sessions.</p>}
          <div class="table-wrap">
            <table class="stack-on-phone">
              <caption class="visually-hidden">Sessions, newest activity first</caption>
              <thead>
                <tr>
                  <th scope="col">Session</th>
                  <th scope="col">Agent</th>
                  <th scope="col">Status</th>
                  <th scope="col">Events</th>
                  <th scope="col">Last activity</th>
                </tr>
              </thead>
              <tbody>
                {page.value.map((summary) => (
                  <tr key={summary.session}>
                    <th scope="row">
                      <button type="button" class="link" onClick={() => setChosen(summary.session)}>
                        {summary.session}
                      </button>
                    </th>
                    <td data-label="Agent">{summary.agent ?? ''}</td>
                    <td data-label="Status">{summary.ended === true ? 'ended' : summary.claimed === true ? 'live' : 'idle'}</td>
                    <td data-label="Events">{summary.count ?? ''}</td>
                    <td data-label="Last activity">{summary.lastTime ?? ''}</td>
                  </tr>
                ))}
              </tbody>
            </table>
          </div>
          {page.next !== undefined && (
            <button type="button" class="secondary" onClick={() => void load(page.next)}>
              Next page
            </button>
          )}
        </>
      )}
    </section>
  );
}

function Timeline({ session, name, onBack }: { session: ConsoleSession; name: string; onBack: () => void }) {
  const [page, setPage] = useState<Loaded<HistoryLine[]> | undefined>();
  const [selected, setSelected] = useState<HistoryLine | undefined>();
  useEffect(() => void loadHistory(session.client, `/history?session=${encodeURIComponent(name)}`).then(setPage), [session, name]);
  return (
    <section aria-labelledby="timeline-title">
      <div class="row">
        <h2 id="timeline-title">Session {name}</h2>
        <button type="button" class="secondary" onClick={onBack}>
          Back to sessions
        </button>
      </div>
      {page === undefined && <p>Loading…</p>}
      {page?.kind === 'unavailable' && <p class="notice">{UNAVAILABLE}</p>}
      {page?.kind === 'problem' && (
        <p class="problem" role="alert">
          {page.problem.detail}
        </p>
      )}
      {page?.kind === 'ok' && (
        <div class={selected === undefined ? 'split' : 'split with-detail'}>
          <ol class="events timeline">
            {page.value.map((line, index) => (
              <li key={`${String(line.event.id)}-${index}`}>
                <button type="button" class="event-row" onClick={() => setSelected(line)}>
                  <span class="type">{String(line.event.type)}</span>
                  <span class="meta">
                    {line.event.seq === undefined ? 'no seq' : `seq ${String(line.event.seq)}`} · {String(line.event.agent ?? '')}
                  </span>
                  <time>{String(line.event.time ?? '')}</time>
                  {line.senderVerified !== undefined && (
                    <span class="verified" data-testid="sender-verified">
                      verified sender (operator {line.senderVerified.operator})
                    </span>
                  )}
                  {line.sentBy !== undefined && (
                    <span class="sent-by" data-testid="sent-by">
                      by {line.sentBy.name} ({line.sentBy.provider})
                    </span>
                  )}
                </button>
              </li>
            ))}
          </ol>
          {selected !== undefined && <EventDetail raw={selected.raw} onClose={() => setSelected(undefined)} />}
          {page.next !== undefined && (
            <button type="button" class="secondary" onClick={() => void loadHistory(session.client, page.next as string).then(setPage)}>
              Next page
            </button>
          )}
        </div>
      )}
    </section>
  );
}
