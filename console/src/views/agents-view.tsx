/**
 * Live agents: the roster snapshot (AEP-0003 §4.1), one row per live claim, with what each
 * accepts; pause, resume and cancel are offered only where the claim declared them in
 * `control.accepts` (AEP-0004 §4.2), and their outcome is shown like an answer's.
 */
import { useEffect, useState } from 'preact/hooks';
import type { ConsoleSession } from '../console-session.ts';
import type { RosterEntry } from '../live-socket.ts';
import { useSessionVersion } from '../use-session.ts';
import { CommandOutcomeLine } from './command-outcome.tsx';

const ACTIONS = [
  { type: 'control.pause', label: 'Pause', data: {} },
  { type: 'control.resume', label: 'Resume', data: {} },
  { type: 'control.cancel', label: 'Cancel', data: { scope: 'session' } },
] as const;

export function AgentsView({ session }: { session: ConsoleSession }) {
  useSessionVersion(session);
  const [roster, setRoster] = useState<RosterEntry[] | string | undefined>();
  const [sent, setSent] = useState<Record<string, string>>({});
  const refresh = async () => setRoster(await session.socket.roster());
  useEffect(() => {
    if (session.socketState === 'open') void refresh();
  }, [session, session.socketState]);
  return (
    <section aria-labelledby="agents-title">
      <div class="row">
        <h2 id="agents-title">Live agents</h2>
        <button type="button" class="secondary" onClick={() => void refresh()}>
          Refresh
        </button>
      </div>
      <p class="help">A snapshot of the sessions an agent is connected for right now, and the commands each accepts.</p>
      {roster === undefined && <p>Loading…</p>}
      {typeof roster === 'string' && (
        <p class="problem" role="alert">
          {roster}
        </p>
      )}
      {Array.isArray(roster) && roster.length === 0 && <p class="empty">No agent is connected.</p>}
      {Array.isArray(roster) && roster.length > 0 && (
        <ul class="cards" data-testid="roster">
          {roster.map((entry, index) => {
            const accepts = Array.isArray(entry.control?.accepts) ? (entry.control.accepts as unknown[]).filter((type): type is string => typeof type === 'string') : [];
            const key = `${entry.session}#${index}`;
            return (
              <li key={key}>
                <article class="card" aria-label={`${entry.agent ?? 'agent'} in session ${entry.session}`}>
                  <h3>{entry.agent ?? '(agent not named)'}</h3>
                  {/* Unverified names are asserted (AEP-0003 §8.2): only the relay's verified member is shown as proof. */}
                  <p class="meta" data-testid="identity">
                    {typeof entry.verified?.operator === 'string' ? <>verified by {entry.verified.operator}{typeof entry.verified.valid_until === 'string' && <> until {entry.verified.valid_until}</>}</> : 'unverified (asserted name)'}
                  </p>
                  <p class="meta">
                    session {entry.session}
                    {entry.instance !== undefined && <> · instance {entry.instance}</>}
                  </p>
                  <p>
                    Accepts: {accepts.length === 0 ? 'no commands' : accepts.join(', ')}
                  </p>
                  <div class="options" role="group" aria-label="Commands">
                    {ACTIONS.filter((action) => accepts.includes(action.type)).map((action) => (
                      <button
                        type="button"
                        key={action.type}
                        class={action.type === 'control.cancel' ? 'danger' : ''}
                        onClick={() => {
                          const id = session.sendCommand(action.type, entry.session, { data: action.data });
                          if (id !== undefined) setSent({ ...sent, [key]: id });
                        }}
                      >
                        {action.label}
                      </button>
                    ))}
                  </div>
                  {sent[key] !== undefined && <CommandOutcomeLine session={session} commandId={sent[key] as string} />}
                </article>
              </li>
            );
          })}
        </ul>
      )}
    </section>
  );
}
