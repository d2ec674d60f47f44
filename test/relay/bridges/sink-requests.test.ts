import { describe, expect, it } from 'vitest';
import { EVENTBRIDGE_MAX_ENTRIES, MAX_EVENTS_PER_REQUEST, planSinkRequests } from '../../../src/relay/bridges/sink-requests.ts';
import type { OutboundEvent } from '../../../src/relay/bridges/sink-requests.ts';
import type { SinkSettings } from '../../../src/relay/bridges/sink-settings.ts';
import type { AepEvent } from '../../../src/protocol/event.ts';

function outbound(seq: number, extra: Partial<AepEvent> = {}): OutboundEvent {
  const event: AepEvent = { aep: '0.1', id: `e${seq}`, type: 'tool.failed', subject: 'Bash', time: '2026-07-03T10:15:13.310Z', source: 'aep://h/agent/a', agent: 'a', session: 's', seq, capture: 'redacted', data: { tool: { name: 'Bash', call_id: `t${seq}` }, error: { type: 'ExecError', message: 'SECRET' } }, ...extra };
  return { raw: JSON.stringify(event), event };
}

const sink = (settings: Partial<SinkSettings>): SinkSettings => ({ name: 's', kind: 'cloudevents-webhook', maxCapture: 'metadata', target: 'https://x.example/in', ...settings });

describe('planSinkRequests', () => {
  it('down-levels the CloudEvents webhook copy at the sink ceiling (AEP-0001 §8.2 hop rule)', () => {
    const plan = planSinkRequests(sink({}), [outbound(0)]);
    expect(plan.requests).toHaveLength(1);
    const request = plan.requests[0];
    const [cloudEvent] = JSON.parse(request?.transport === 'http' ? request.body : '[]') as Array<Record<string, unknown>>;
    expect(cloudEvent).toMatchObject({ type: 'dev.aep.tool.failed', aepcapture: 'metadata', data: { tool: { name: 'Bash', call_id: 't0' }, error: { type: 'ExecError' } } });
    expect(JSON.stringify(cloudEvent)).not.toContain('SECRET');
  });

  it('applies the type filter and splits batches at the request limit', () => {
    const events = Array.from({ length: MAX_EVENTS_PER_REQUEST + 5 }, (_, seq) => outbound(seq));
    const plan = planSinkRequests(sink({ kind: 'ocsf-webhook', types: ['tool.*'] }), [...events, outbound(999, { type: 'run.started', data: {} })]);
    expect(plan.requests.map((request) => request.events.length)).toEqual([MAX_EVENTS_PER_REQUEST, 5]);
    const first = plan.requests[0];
    expect(first?.transport === 'http' && first.body.split('\n').filter(Boolean)).toHaveLength(MAX_EVENTS_PER_REQUEST);
  });

  it('puts at most ten CloudEvents-shaped entries per PutEvents call', () => {
    const plan = planSinkRequests(sink({ kind: 'eventbridge', target: 'arn:aws:events:eu-west-1:123456789012:event-bus/b' }), Array.from({ length: 23 }, (_, seq) => outbound(seq)));
    expect(plan.requests.map((request) => request.events.length)).toEqual([EVENTBRIDGE_MAX_ENTRIES, EVENTBRIDGE_MAX_ENTRIES, 3]);
    const first = plan.requests[0];
    expect(first?.transport === 'eventbridge' && first.entries[0]).toMatchObject({ source: 'dev.aep', detailType: 'dev.aep.tool.failed' });
  });

  it('sets an event too large for PutEvents aside instead of sending it', () => {
    const huge = outbound(0, { capture: 'metadata', data: { blob: 'x'.repeat(300_000) } });
    const plan = planSinkRequests(sink({ kind: 'eventbridge', target: 'arn:aws:events:eu-west-1:123456789012:event-bus/b' }), [huge, outbound(1)]);
    expect(plan.unsendable.map((item) => item.event.event.id)).toEqual(['e0']);
    expect(plan.requests.map((request) => request.events.map((item) => item.event.id))).toEqual([['e1']]);
  });
});
