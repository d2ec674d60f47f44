/**
 * Live tail: the tenant's events as they arrive, filtered by a form that becomes an
 * attr-match filter (AEP-0003 §6); pause and resume from where it paused (`from`); a detail
 * pane with the envelope as received.
 */
import { SEVERITIES } from '../../../src/protocol/levels.ts';
import { useEffect, useMemo, useState } from 'preact/hooks';
import type { ConsoleSession } from '../console-session.ts';
import { LiveTail } from '../live-tail.ts';
import type { TailState, TailedEvent } from '../live-tail.ts';
import { EMPTY_TAIL_FILTER, filterOfForm } from '../tail-filter.ts';
import type { TailFilterForm } from '../tail-filter.ts';
import { EventDetail } from './event-detail.tsx';

/** Kept in the page; older rows drop off (the relay's history holds the rest). */
const MAX_ROWS = 500;

const STATE_WORDS: Record<TailState, string> = {
  connecting: 'connecting…',
  live: 'live',
  paused: 'paused',
  reconnecting: 'reconnecting…',
  refused: 'refused',
};

export function TailView({ session }: { session: ConsoleSession }) {
  const [form, setForm] = useState<TailFilterForm>(EMPTY_TAIL_FILTER);
  const [applied, setApplied] = useState('{}');
  const [formProblem, setFormProblem] = useState<{ field: keyof TailFilterForm; reason: string } | undefined>();
  const [rows, setRows] = useState<TailedEvent[]>([]);
  const [state, setState] = useState<{ state: TailState; detail?: string }>({ state: 'connecting' });
  const [notices, setNotices] = useState<string[]>([]);
  const [selected, setSelected] = useState<TailedEvent | undefined>();
  const tail = useMemo(
    () =>
      new LiveTail(session.client, {
        event: (item) => setRows((current) => [item, ...current].slice(0, MAX_ROWS)),
        state: (next, detail) => setState({ state: next, ...(detail === undefined ? {} : { detail }) }),
        notice: (text) => setNotices((current) => [text, ...current].slice(0, 5)),
      }),
    [session],
  );
  useEffect(() => {
    tail.start({});
    return () => tail.stop();
  }, [tail]);

  const apply = (event: Event) => {
    event.preventDefault();
    const result = filterOfForm(form);
    if (!result.ok) return setFormProblem({ field: result.field, reason: result.reason });
    setFormProblem(undefined);
    setRows([]);
    setSelected(undefined);
    setApplied(JSON.stringify(result.filter));
    tail.start(result.filter);
  };
  const field = (name: keyof TailFilterForm, label: string, placeholder: string) => (
    <div class="field">
      <label for={`tail-${name}`}>{label}</label>
      <input
        id={`tail-${name}`}
        value={form[name]}
        placeholder={placeholder}
        onInput={(event) => setForm({ ...form, [name]: (event.target as HTMLInputElement).value })}
        aria-invalid={formProblem?.field === name ? true : undefined}
        aria-describedby={formProblem?.field === name ? 'tail-filter-problem' : undefined}
      />
    </div>
  );
  const paused = state.state === 'paused';
  return (
    <section aria-labelledby="tail-title">
      <h2 id="tail-title">Live tail</h2>
      <form class="filters" onSubmit={apply} aria-label="Filter">
        {field('sessions', 'Sessions', 'any session')}
        {field('agents', 'Agents', 'any agent')}
        {field('types', 'Types', 'e.g. attention.*, tool.denied')}
        <div class="field">
          <label for="tail-minSeverity">Severity at least</label>
          <select id="tail-minSeverity" value={form.minSeverity} onChange={(event) => setForm({ ...form, minSeverity: (event.target as HTMLSelectElement).value })}>
            <option value="">any</option>
            {SEVERITIES.map((level) => (
              <option key={level} value={level}>
                {level}
              </option>
            ))}
          </select>
        </div>
        <button type="submit">Apply filter</button>
        {formProblem !== undefined && (
          <p id="tail-filter-problem" class="problem" role="alert">
            {formProblem.reason}
          </p>
        )}
      </form>
      <div class="row tail-status">
        <p role="status" data-testid="tail-state">
          <span class={`dot ${state.state}`} aria-hidden="true" /> {STATE_WORDS[state.state]}
          {state.detail !== undefined && state.state !== 'live' ? `: ${state.detail}` : ''}
        </p>
        <p class="help">
          Filter: <code data-testid="applied-filter">{applied}</code>
        </p>
        <button type="button" onClick={() => (paused ? tail.resume() : tail.pause())} disabled={state.state === 'refused'}>
          {paused ? 'Resume' : 'Pause'}
        </button>
      </div>
      {notices.length > 0 && (
        <ul class="notices" aria-label="Relay notices">
          {notices.map((text, index) => (
            <li key={index}>{text}</li>
          ))}
        </ul>
      )}
      <div class={selected === undefined ? 'split' : 'split with-detail'}>
        <ol class="events" aria-label="Events, newest first" data-testid="tail-events">
          {rows.length === 0 && (
            // The stream opens without `from`, so it tails what arrives from now on: say so, or a
            // session that holds events looks empty here.
            <li class="empty">
              No events since the tail opened{paused ? ' (paused)' : ''}: it shows what arrives from now on. A session's earlier events are in <a href="#/sessions">Sessions</a>.
            </li>
          )}
          {rows.map((row) => (
            <li key={row.serial}>
              <button type="button" class={`event-row sev-${String(row.event.severity ?? 'info')}`} aria-pressed={selected?.serial === row.serial} onClick={() => setSelected(row)}>
                <span class="type">{String(row.event.type)}</span>
                <span class="meta">
                  {String(row.event.session ?? '—')} · {String(row.event.agent ?? '')} · {String(row.event.severity ?? 'info')}
                </span>
                <time>{String(row.event.time ?? '')}</time>
              </button>
            </li>
          ))}
        </ol>
        {selected !== undefined && <EventDetail raw={selected.raw} onClose={() => setSelected(undefined)} />}
      </div>
    </section>
  );
}
