import { describe, expect, it } from 'vitest';
import { validateEnvelope } from '../../../src/protocol/envelope.ts';
import { StreamChecker } from '../../../src/protocol/conformance/stream-rules.ts';
import { validateEvent } from '../../../src/protocol/conformance/validate.ts';
import type { Violation } from '../../../src/protocol/violation.ts';
import { readFixtureJson, reportCorpus } from '../../support/aep-corpus.ts';

interface InvalidCase {
  name: string;
  rule: string;
  event?: unknown;
  events?: unknown[];
}

/** One cited section: the document and its section path, e.g. AEP-0001 + ['5', '1', '#11']. */
interface SpecRef {
  document: string;
  section: string[];
}

/**
 * The (document, section) references in a rule text. A bare `§x` reuses the last document
 * named; a `#n` right after a section refines it; documents cited without a section
 * (e.g. "(AEP-0006)") and free prose are ignored.
 */
function specRefs(text: string): SpecRef[] {
  const refs: SpecRef[] = [];
  let document: string | undefined;
  for (const match of text.matchAll(/(AEP-\d{4})|§(\d+(?:\.\d+)*)(?:\s*#(\d+))?/g)) {
    if (match[1] !== undefined) {
      document = match[1];
      continue;
    }
    if (document === undefined || match[2] === undefined) continue;
    const section = match[2].split('.');
    if (match[3] !== undefined) section.push(`#${match[3]}`);
    refs.push({ document, section });
  }
  return refs;
}

function show(ref: SpecRef): string {
  return `${ref.document} §${ref.section.filter((part) => !part.startsWith('#')).join('.')}${ref.section
    .filter((part) => part.startsWith('#'))
    .map((part) => ` ${part}`)
    .join('')}`;
}

/** A case citing §5.2 is satisfied by a violation citing §5.2 or any enclosing section (§5). */
function cites(caseRef: SpecRef, violationRef: SpecRef): boolean {
  return (
    caseRef.document === violationRef.document &&
    violationRef.section.length <= caseRef.section.length &&
    violationRef.section.every((part, index) => caseRef.section[index] === part)
  );
}

/** Every violation the case's events raise: each event alone, then all of them as one stream. */
function violationsOf(testCase: InvalidCase): Violation[] {
  if (testCase.events === undefined) {
    const result = validateEvent(testCase.event);
    return result.ok ? [] : result.violations;
  }
  const found: Violation[] = [];
  const checker = new StreamChecker();
  for (const event of testCase.events) {
    const full = validateEvent(event);
    if (!full.ok) found.push(...full.violations);
    // Stream rules presume a valid envelope; a payload fault does not stop them.
    const envelope = validateEnvelope(event);
    if (envelope.ok) found.push(...checker.check(envelope.event));
  }
  return found;
}

describe('rule citations', () => {
  it.each([
    ['AEP-0001 §5.2', ['AEP-0001 §5.2']],
    ['AEP-0001 §5.2 / AEP-0002 §7.3', ['AEP-0001 §5.2', 'AEP-0002 §7.3']],
    ['AEP-0002 §4.2/§5 payload schema (state enum: online|offline|busy)', ['AEP-0002 §4.2', 'AEP-0002 §5']],
    ['AEP-0001 §5.1 #11', ['AEP-0001 §5.1 #11']],
    ['AEP-0001 §5.1 #2 / §7.4 (id unique per emitter)', ['AEP-0001 §5.1 #2', 'AEP-0001 §7.4']],
    ['AEP-0002 §5.3 attention.answered values rule (AEP-0006): free text', ['AEP-0002 §5.3']],
    ['AEP-0001 §6 (x.{vendor}.{category}.{rest})', ['AEP-0001 §6']],
    ['no reference at all', []],
  ] as Array<[string, string[]]>)('reads %j', (text, expected) => {
    expect(specRefs(text).map(show)).toEqual(expected);
  });

  it('matches a sub-section to its enclosing section, never the reverse', () => {
    const [caseRef] = specRefs('AEP-0002 §5.2');
    const [parent] = specRefs('AEP-0002 §5');
    const [sibling] = specRefs('AEP-0002 §5.3');
    const [otherDoc] = specRefs('AEP-0001 §5.2');
    expect(caseRef && parent && cites(caseRef, parent)).toBe(true);
    expect(caseRef && sibling && cites(caseRef, sibling)).toBe(false);
    expect(caseRef && otherDoc && cites(caseRef, otherDoc)).toBe(false);
    expect(parent && caseRef && cites(parent, caseRef)).toBe(false);
  });
});

describe('invalid corpus', () => {
  const { cases } = readFixtureJson<{ cases: InvalidCase[] }>('invalid/cases.json');

  it('is not empty, and every case names a rule', () => {
    expect(cases.length).toBeGreaterThan(0);
    for (const testCase of cases) expect(specRefs(testCase.rule), testCase.name).not.toEqual([]);
    reportCorpus('invalid', cases.length);
  });

  it.each(cases.map((testCase): [string, InvalidCase] => [testCase.name, testCase]))('%s fails for the named reason', (_name, testCase) => {
    expect(testCase.event !== undefined || testCase.events !== undefined).toBe(true);
    const found = violationsOf(testCase);
    expect(found.length, 'the case must fail').toBeGreaterThan(0);
    const expected = specRefs(testCase.rule);
    const matching = found.filter((item) => specRefs(item.rule).some((cited) => expected.some((ref) => cites(ref, cited))));
    expect(matching, `expected a violation citing ${expected.map(show).join(' or ')}; got ${found.map((item) => item.rule).join(', ')}`).not.toEqual([]);
  });
});
