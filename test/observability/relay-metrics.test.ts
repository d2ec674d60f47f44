import { afterEach, describe, expect, it, vi } from 'vitest';
import { EmfRelayMetrics } from '../../src/observability/relay-metrics.ts';

/** The EMF lines a flush prints on stdout, parsed. */
function captureFlush(metrics: EmfRelayMetrics): Array<Record<string, unknown>> {
  const lines: string[] = [];
  const write = vi.spyOn(process.stdout, 'write').mockImplementation((chunk: string | Uint8Array) => {
    lines.push(String(chunk));
    return true;
  });
  try {
    metrics.flush();
  } finally {
    write.mockRestore();
  }
  return lines.join('').split('\n').filter((line) => line.trim() !== '').map((line) => JSON.parse(line) as Record<string, unknown>);
}

interface EmfDirective {
  Namespace: string;
  Dimensions: string[][];
  Metrics: Array<{ Name: string; Unit: string }>;
}

const directiveOf = (line: Record<string, unknown>) => (line._aws as { CloudWatchMetrics: EmfDirective[] }).CloudWatchMetrics[0] as EmfDirective;

describe('EmfRelayMetrics', () => {
  afterEach(() => vi.restoreAllMocks());

  it('prints one EMF line per tenant and refusal code, summing the counts, under the AepRelay namespace', () => {
    const metrics = new EmfRelayMetrics({ service: 'test' });
    metrics.count('EventsAdmitted', 'acme', 3);
    metrics.count('EventsAdmitted', 'acme');
    metrics.count('Deliveries', 'acme', 2);
    metrics.count('EventsRefused', 'acme', 1, { code: 'invalid-event' });
    metrics.count('EventsRefused', 'acme', 1, { code: 'invalid-event' });
    metrics.count('SocketsOpened', 'globex');
    const lines = captureFlush(metrics);
    expect(lines).toHaveLength(3);

    const plain = lines.find((line) => line.tenant === 'acme' && line.code === undefined) as Record<string, unknown>;
    expect(plain).toMatchObject({ tenant: 'acme', EventsAdmitted: 4, Deliveries: 2 });
    const directive = directiveOf(plain);
    expect(directive.Namespace).toBe('AepRelay');
    // Exactly the tenant: no default service dimension multiplies the series.
    expect(directive.Dimensions).toEqual([['tenant']]);
    expect(directive.Metrics).toEqual(expect.arrayContaining([{ Name: 'EventsAdmitted', Unit: 'Count' }, { Name: 'Deliveries', Unit: 'Count' }]));
    expect(typeof (plain._aws as { Timestamp: unknown }).Timestamp).toBe('number');

    const refused = lines.find((line) => line.code === 'invalid-event') as Record<string, unknown>;
    expect(refused).toMatchObject({ tenant: 'acme', code: 'invalid-event', EventsRefused: 2 });
    expect(directiveOf(refused).Dimensions).toEqual([['tenant', 'code']]);
    expect(refused).not.toHaveProperty('EventsAdmitted');

    expect(lines.find((line) => line.tenant === 'globex')).toMatchObject({ SocketsOpened: 1 });
  });

  it('publishes a refusal code outside the closed set as other', () => {
    const metrics = new EmfRelayMetrics({ service: 'test' });
    metrics.count('CommandsRefused', 'acme', 1, { code: 'no-route' });
    metrics.count('CommandsRefused', 'acme', 1, { code: 'made-up-by-a-caller' });
    const lines = captureFlush(metrics);
    expect(lines.map((line) => line.code).sort()).toEqual(['no-route', 'other']);
  });

  it('prints nothing when nothing was counted, and each count once', () => {
    const metrics = new EmfRelayMetrics({ service: 'test' });
    expect(captureFlush(metrics)).toEqual([]);
    metrics.count('CommandsRouted', 'acme');
    expect(captureFlush(metrics)).toHaveLength(1);
    expect(captureFlush(metrics)).toEqual([]);
  });
});
