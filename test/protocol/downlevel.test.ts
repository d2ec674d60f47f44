import { describe, expect, it } from 'vitest';
import { downlevel, downlevelTarget, effectiveCapture, needsDownlevel } from '../../src/protocol/downlevel.ts';
import type { AepEvent } from '../../src/protocol/event.ts';
import { CAPTURE_LEVELS, captureRank } from '../../src/protocol/levels.ts';
import type { CaptureLevel } from '../../src/protocol/levels.ts';
import { readFixtureJson, readFixtureJsonl, reportCorpus } from '../support/aep-corpus.ts';

interface DownlevelCase {
  name: string;
  ceiling: CaptureLevel;
  event: AepEvent;
  expect_capture: CaptureLevel;
  expect_data: Record<string, unknown> | null;
}

const corpus = readFixtureJson<{ cases: DownlevelCase[] }>('downlevel/cases.json').cases;
const golden = readFixtureJsonl('golden/golden.jsonl') as AepEvent[];

/** A deep, independent copy, so a test can tell whether the input was touched. */
function snapshot<T>(value: T): T {
  return structuredClone(value);
}

function baseEvent(overrides: Partial<AepEvent>): AepEvent {
  return {
    aep: '0.1',
    id: 'E1',
    type: 'tool.completed',
    subject: 'Bash',
    time: '2026-07-03T10:00:00Z',
    source: 'aep://h/agent/a',
    agent: 'a',
    session: 's1',
    seq: 0,
    ...overrides,
  };
}

describe('downlevel over the official corpus', () => {
  it('runs every case', () => {
    reportCorpus('downlevel', corpus.length);
    expect(corpus.length).toBeGreaterThan(0);
  });

  it.each(corpus.map((testCase) => [testCase.name, testCase] as const))('%s', (_name, testCase) => {
    const input = snapshot(testCase.event);
    const result = downlevel(input, testCase.ceiling);

    expect(result.capture).toBe(testCase.expect_capture);
    if (testCase.expect_data === null) {
      expect(Object.hasOwn(result, 'data')).toBe(false);
    } else {
      expect(result.data).toEqual(testCase.expect_data);
    }
    // Every envelope attribute but capture and data rides unchanged.
    const { capture: _c1, data: _d1, ...envelopeIn } = testCase.event;
    const { capture: _c2, data: _d2, ...envelopeOut } = result;
    expect(envelopeOut).toEqual(envelopeIn);
    expect(input).toEqual(testCase.event);
  });
});

describe('downlevel', () => {
  it('never mutates its input', () => {
    for (const event of [...corpus.map((testCase) => testCase.event), ...golden]) {
      for (const ceiling of CAPTURE_LEVELS) {
        const input = snapshot(event);
        downlevel(input, ceiling);
        expect(input).toEqual(event);
      }
    }
  });

  it('never up-levels: the result capture is at most the source level and at most the ceiling', () => {
    let checked = 0;
    for (const event of [...corpus.map((testCase) => testCase.event), ...golden]) {
      for (const ceiling of CAPTURE_LEVELS) {
        const result = downlevel(event, ceiling);
        const resultRank = captureRank(effectiveCapture(result));
        expect(resultRank).toBeLessThanOrEqual(captureRank(effectiveCapture(event)));
        if (needsDownlevel(event, ceiling)) expect(resultRank).toBeLessThanOrEqual(captureRank(ceiling));
        checked += 1;
      }
    }
    reportCorpus('downlevel never up-levels (events x ceilings)', checked);
  });

  it('returns the event itself when the ceiling is at or above its level', () => {
    const event = baseEvent({ capture: 'redacted', data: { tool: { name: 'Bash' }, result_redacted: 'x' } });
    expect(needsDownlevel(event, 'redacted')).toBe(false);
    expect(needsDownlevel(event, 'full')).toBe(false);
    expect(downlevel(event, 'redacted')).toBe(event);
    expect(downlevel(event, 'full')).toBe(event);
  });

  it('treats an absent capture as metadata', () => {
    const event = baseEvent({ data: { tool: { name: 'Bash' }, status: 'success' } });
    expect(effectiveCapture(event)).toBe('metadata');
    expect(downlevel(event, 'metadata')).toBe(event);
    expect(needsDownlevel(event, 'none')).toBe(true);
  });

  it('keeps extension attributes and every other envelope attribute exactly', () => {
    const event = baseEvent({
      capture: 'full',
      run: 'r1',
      step: 'turn-1',
      epoch: 2,
      cause: 'C0',
      severity: 'notice',
      traceparent: '00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01',
      acmeregion: 'eu-1',
      acmeretries: 3,
      acmedebug: true,
      data: { tool: { name: 'Bash' }, result: 'verbatim' },
    });
    const result = downlevel(event, 'metadata');
    expect(result).toEqual({ ...event, capture: 'metadata', data: { tool: { name: 'Bash' } } });
    expect(result).not.toBe(event);
  });

  it('drops data entirely at a none ceiling and rewrites capture to none', () => {
    const event = baseEvent({ capture: 'metadata', acmeregion: 'eu-1', data: { tool: { name: 'Bash' } } });
    const result = downlevel(event, 'none');
    expect(result.capture).toBe('none');
    expect(Object.hasOwn(result, 'data')).toBe(false);
    expect(result['acmeregion']).toBe('eu-1');
  });

  it('adds capture none to an event that omitted capture', () => {
    const { capture: _omitted, ...event } = baseEvent({ data: { tool: { name: 'Bash' } } });
    const result = downlevel(event, 'none');
    expect(result.capture).toBe('none');
    expect(Object.hasOwn(result, 'data')).toBe(false);
  });

  it('drops a redacted field at a metadata ceiling and keeps metadata fields', () => {
    const event = baseEvent({ type: 'run.cancelled', capture: 'redacted', data: { by: 'user', reason: 'text', duration_ms: 5 } });
    expect(downlevel(event, 'metadata').data).toEqual({ by: 'user', duration_ms: 5 });
  });

  it('keeps vendor members a registered type does not name, at any depth', () => {
    const event = baseEvent({
      capture: 'full',
      data: { tool: { name: 'Bash', acme_shell: 'zsh' }, result: 'x', acme_exit: 0 },
    });
    expect(downlevel(event, 'metadata').data).toEqual({ tool: { name: 'Bash', acme_shell: 'zsh' }, acme_exit: 0 });
  });

  it('drops the payload of an unregistered type whenever it down-levels', () => {
    const vendor = baseEvent({ type: 'x.acme.session.blob', capture: 'redacted', data: { note: 'text' } });
    const reserved = baseEvent({ type: 'message.user.submitted', capture: 'full', data: { text: 'hi' } });
    expect(Object.hasOwn(downlevel(vendor, 'metadata'), 'data')).toBe(false);
    expect(Object.hasOwn(downlevel(reserved, 'metadata'), 'data')).toBe(false);
    // No down-leveling, no loss.
    expect(downlevel(vendor, 'redacted').data).toEqual({ note: 'text' });
  });

  it('lands a full event on metadata at a redacted ceiling, and a redacted event stays redacted', () => {
    expect(downlevelTarget('full', 'redacted')).toBe('metadata');
    expect(downlevelTarget('redacted', 'redacted')).toBe('redacted');
    expect(downlevelTarget('full', 'metadata')).toBe('metadata');
    expect(downlevelTarget('full', 'none')).toBe('none');
    expect(downlevelTarget('metadata', 'full')).toBe('metadata');
  });

  it('synthesizes the prompt without a subject when the event has none', () => {
    const { subject: _omitted, ...event } = baseEvent({
      type: 'attention.requested',
      capture: 'redacted',
      data: { kind: 'input', prompt: 'What is the secret?' },
    });
    expect(downlevel(event, 'metadata').data).toEqual({ kind: 'input', prompt: 'a requests input' });
  });

  it('drops a degradable label whose sibling id is not a string', () => {
    const event = baseEvent({
      type: 'attention.requested',
      capture: 'redacted',
      data: { kind: 'permission', prompt: 'p', options: [{ id: 7, label: 'Secret label' }, { id: 'ok', label: 'Fine' }] },
    });
    expect(downlevel(event, 'metadata').data).toEqual({
      kind: 'permission',
      prompt: 'a requests permission: Bash',
      options: [{ id: 7 }, { id: 'ok', label: 'ok' }],
    });
  });

  it('drops members whose value has the wrong shape to prune', () => {
    const event = baseEvent({
      type: 'attention.answered',
      capture: 'redacted',
      data: { answer: 'SECRET as a bare string', via: 'control' },
    });
    expect(downlevel(event, 'metadata').data).toEqual({ via: 'control' });
    const values = baseEvent({
      type: 'attention.answered',
      capture: 'redacted',
      data: { answer: { values: 'SECRET' } },
    });
    expect(downlevel(values, 'metadata').data).toEqual({ answer: {} });
  });

  it('keeps a member named __proto__ as plain data', () => {
    const data = JSON.parse('{"tool":{"name":"Bash"},"result":"x","__proto__":{"polluted":true}}') as AepEvent['data'];
    const event = baseEvent({ capture: 'full', data });
    const result = downlevel(event, 'metadata');
    expect(Object.hasOwn(result.data ?? {}, '__proto__')).toBe(true);
    expect(Object.getPrototypeOf(result.data)).toBe(Object.prototype);
    expect(Object.hasOwn(result.data ?? {}, 'result')).toBe(false);
  });

  it('treats an unrecognised capture value as full', () => {
    const event = baseEvent({ capture: 'bogus', data: { tool: { name: 'Bash' }, result: 'x' } });
    expect(effectiveCapture(event)).toBe('full');
    expect(downlevel(event, 'redacted')).toEqual({ ...event, capture: 'metadata', data: { tool: { name: 'Bash' } } });
  });
});
