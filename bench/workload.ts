/** What the bench sends (a tool-call / progress mix) and who listens (the cost grid's subscriber mixes). */
import { compileFilter, validateFilter } from '../src/protocol/attr-match.ts';
import type { EventMatcher } from '../src/protocol/attr-match.ts';
import { mintId, uniqueName } from './clients.ts';

export const BENCH_AGENT = 'bench-agent';

/** Event `seq` of `session`: even seqs are `tool.requested`, odd ones `progress.status`. */
export function benchEvent(session: string, seq: number, agent = BENCH_AGENT): Record<string, unknown> {
  const base = {
    aep: '0.1',
    id: mintId(),
    time: new Date().toISOString(),
    source: `aep://bench-host/agent/${agent}/session/${session}`,
    agent,
    session,
    run: 'r_bench',
    seq,
    epoch: 0,
    severity: 'info',
    capture: 'metadata',
  };
  if (seq % 2 === 0) {
    return {
      ...base,
      type: 'tool.requested',
      subject: 'Bash',
      step: `turn-${seq}`,
      data: { tool: { name: 'Bash', call_id: `t_${seq}` }, args_digest: 'a3f9c2d1e8b7a6f5a3f9c2d1e8b7a6f5' },
    };
  }
  return { ...base, type: 'progress.status', step: `turn-${seq - 1}`, data: { phase: 'working', percent: seq % 100 } };
}

export function benchEvents(session: string, count: number, firstSeq = 0): Array<Record<string, unknown>> {
  return Array.from({ length: count }, (_, index) => benchEvent(session, firstSeq + index));
}

/**
 * Type patterns the type-filtered half cycles through, the kind a dashboard or an automation
 * asks for: `tool.*` and `progress.*` match half the events each, the rest never match.
 */
export const TYPE_FILTERS = ['tool.*', 'attention.*', 'run.*', 'session.*', 'error.*', 'progress.*', 'attention.requested', 'control.*', 'delegation.*', 'agent.*'] as const;

export interface SubscriberSpec {
  kind: 'session-match' | 'session-other' | 'type';
  filter: Record<string, unknown>;
}

/**
 * `count` subscribers, half session-filtered (the first on the events' session, so there are
 * deliveries; the rest on sessions that never receive an event), half type-filtered.
 */
export function subscriberMix(count: number, eventSession: string): SubscriberSpec[] {
  const sessionFiltered = Math.ceil(count / 2);
  const specs: SubscriberSpec[] = [];
  for (let index = 0; index < sessionFiltered; index += 1) {
    specs.push(index === 0 ? { kind: 'session-match', filter: { session: eventSession } } : { kind: 'session-other', filter: { session: uniqueName('elsewhere') } });
  }
  for (let index = 0; index < count - sessionFiltered; index += 1) {
    specs.push({ kind: 'type', filter: { type: TYPE_FILTERS[index % TYPE_FILTERS.length] as string } });
  }
  return specs;
}

export function matcherOf(filter: Record<string, unknown>): EventMatcher {
  const validation = validateFilter(filter);
  if (!validation.ok) throw new Error(`bench filter invalid: ${validation.reason}`);
  return compileFilter(validation.filter);
}

/** How many of `events` each subscriber should receive. */
export function expectedDeliveries(specs: readonly SubscriberSpec[], events: ReadonlyArray<Record<string, unknown>>): number[] {
  return specs.map((spec) => {
    const matches = matcherOf(spec.filter);
    return events.filter((event) => matches(event as never)).length;
  });
}
