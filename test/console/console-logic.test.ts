/**
 * The console's pure logic, in Node: the tail form to attr-match filter, resume positions,
 * the attention fold (AEP-0002 §7) and command outcomes (AEP-0004 §3, §4.2).
 */
import { describe, expect, it } from 'vitest';
import { AttentionBook } from '../../console/src/attention.ts';
import { CommandBook, describeOutcome } from '../../console/src/commands.ts';
import { PositionBook } from '../../console/src/positions.ts';
import { EMPTY_TAIL_FILTER, filterOfForm } from '../../console/src/tail-filter.ts';

describe('tail filter form', () => {
  it('is empty for an empty form, a scalar for one value, an any-of list for several, and a severity floor', () => {
    expect(filterOfForm(EMPTY_TAIL_FILTER)).toEqual({ ok: true, filter: {} });
    expect(filterOfForm({ sessions: 's1', agents: 'a1, a2 a1', types: 'attention.*', minSeverity: 'warning' })).toEqual({
      ok: true,
      filter: { session: 's1', agent: ['a1', 'a2'], type: 'attention.*', severity: { gte: 'warning' } },
    });
  });

  it('refuses what the relay would refuse, naming the field', () => {
    const bare = filterOfForm({ ...EMPTY_TAIL_FILTER, types: '*' });
    expect(bare).toMatchObject({ ok: false, field: 'types' });
    expect(filterOfForm({ ...EMPTY_TAIL_FILTER, minSeverity: 'loud' })).toMatchObject({ ok: false, field: 'minSeverity' });
  });
});

describe('resume positions', () => {
  it('keeps the highest (epoch, seq) per session, skips seq-less events, and caps from at the newest sessions', () => {
    const book = new PositionBook();
    book.note({ session: 'a', seq: 3 });
    book.note({ session: 'a', seq: 1 });
    book.note({ session: 'b', seq: 0, epoch: 2 });
    book.note({ session: 'c', type: 'control.cancel' });
    book.note({ session: 'a', seq: 4 });
    expect(book.fromParameter(10)).toEqual([
      { session: 'b', epoch: 2, seq: 0 },
      { session: 'a', epoch: 0, seq: 4 },
    ]);
    expect(book.fromParameter(1)).toEqual([{ session: 'a', epoch: 0, seq: 4 }]);
  });
});

describe('attention fold', () => {
  const requested = (id: string, time: string, data: Record<string, unknown> = {}) => ({
    type: 'attention.requested',
    id,
    time,
    session: 's',
    agent: 'x',
    data: { kind: 'permission', prompt: `q ${id}`, options: [{ id: 'allow', label: 'Allow' }], ...data },
  });

  it('lists open requests newest first and closes them on resolved or timeout, even when the terminal arrives first', () => {
    const book = new AttentionBook();
    book.apply(requested('r1', '2026-01-01T10:00:00Z'));
    book.apply(requested('r2', '2026-01-01T11:00:00+02:00'));
    book.apply(requested('r3', '2026-01-01T10:30:00Z'));
    expect(book.open().map((request) => request.id)).toEqual(['r3', 'r1', 'r2']);
    book.apply({ type: 'attention.answered', subject: 'r3', data: { answer: { option: 'allow' } } });
    expect(book.open().map((request) => request.id)).toEqual(['r3', 'r1', 'r2']);
    book.apply({ type: 'attention.resolved', subject: 'r3', data: { resolution: 'answered' } });
    book.apply({ type: 'attention.timeout', subject: 'r2', data: {} });
    book.apply({ type: 'attention.resolved', subject: 'r4', data: { resolution: 'dismissed' } });
    book.apply(requested('r4', '2026-01-01T12:00:00Z'));
    expect(book.open().map((request) => request.id)).toEqual(['r1']);
    expect(book.closed().map((request) => request.id)).toEqual(['r4', 'r3', 'r2']);
    // A replayed request does not reopen or duplicate.
    expect(book.apply(requested('r3', '2026-01-01T10:30:00Z'))).toBe(false);
  });

  it('reads form fields (AEP-0006) and respond_via without control as answered elsewhere', () => {
    const book = new AttentionBook();
    book.apply(requested('f', '2026-01-01T10:00:00Z', { kind: 'form', fields: [{ id: 'n', type: 'number', label: 'How many', required: true, min: 1 }, { id: 'bad', type: 'date' }] }));
    book.apply(requested('o', '2026-01-01T10:00:00Z', { respond_via: ['oob'] }));
    expect(book.get('f')?.fields).toEqual([{ id: 'n', type: 'number', label: 'How many', required: true, multi: false, choices: [], min: 1 }]);
    expect(book.get('o')?.answerableByControl).toBe(false);
    expect(book.get('f')?.answerableByControl).toBe(true);
  });
});

describe('command outcomes', () => {
  it('settles on the first ack or cause-matched refusal, and puts codes into words', () => {
    const book = new CommandBook();
    book.sent({ id: 'c1', type: 'control.attention.respond', session: 's' });
    book.sent({ id: 'c2', type: 'control.cancel', session: 's' });
    book.sent({ id: 'c3', type: 'control.pause', session: 's' });
    expect(book.apply({ type: 'control.accepted', cause: 'c1' })?.state).toBe('accepted');
    expect(book.apply({ type: 'control.rejected', cause: 'c1', data: { reason: 'busy' } })).toBeUndefined();
    const refused = book.apply({ type: 'error', cause: 'c2', code: 'no-route', detail: 'nobody' });
    expect(refused).toMatchObject({ state: 'refused', code: 'no-route', detail: 'nobody' });
    expect(describeOutcome(refused!)).toContain('no agent is connected');
    book.timedOut('c3');
    expect(describeOutcome(book.get('c3')!)).toContain('timeout');
    // A late ack still settles a timed-out command: the window is the sender's patience, not the truth.
    expect(book.apply({ type: 'control.rejected', cause: 'c3', data: { reason: 'refused' } })?.state).toBe('rejected');
    expect(describeOutcome(book.get('c3')!)).toBe('the agent declined it');
    expect(book.apply({ type: 'control.accepted', cause: 'unknown' })).toBeUndefined();
  });
});
