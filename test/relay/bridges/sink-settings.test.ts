import { describe, expect, it } from 'vitest';
import { parseSinkSet } from '../../../src/relay/bridges/sink-settings.ts';

const BUS = 'arn:aws:events:eu-west-1:123456789012:event-bus/agents';
/** The local stack's rules (its receivers listen on loopback) and a deployed stack's. */
const LOCAL = { allowedEventBuses: [BUS], addresses: { allowLoopback: true } };
const DEPLOYED = { allowedEventBuses: [BUS], addresses: { allowLoopback: false } };

describe('parseSinkSet', () => {
  it('parses one sink of each kind with the metadata ceiling by default', () => {
    const parsed = parseSinkSet(
      {
        sinks: [
          { name: 'bus', kind: 'eventbridge', busArn: BUS, types: ['tool.*'] },
          { name: 'otel', kind: 'otlp', endpoint: 'https://otlp.example.com/v1/logs', headers: { 'X-Api-Key': 'k' }, maxCapture: 'redacted' },
          { name: 'hook', kind: 'cloudevents-webhook', url: 'http://127.0.0.1:9999/hook' },
          { name: 'siem', kind: 'ocsf-webhook', url: 'https://siem.example.com/ingest', rotateSecret: true },
        ],
      },
      LOCAL,
    );
    expect(parsed).toEqual({
      ok: true,
      sinks: [
        { settings: { name: 'bus', kind: 'eventbridge', maxCapture: 'metadata', types: ['tool.*'], target: BUS }, rotateSecret: false },
        { settings: { name: 'otel', kind: 'otlp', maxCapture: 'redacted', target: 'https://otlp.example.com/v1/logs', headerNames: ['x-api-key'] }, headers: { 'x-api-key': 'k' }, rotateSecret: false },
        { settings: { name: 'hook', kind: 'cloudevents-webhook', maxCapture: 'metadata', target: 'http://127.0.0.1:9999/hook' }, rotateSecret: false },
        { settings: { name: 'siem', kind: 'ocsf-webhook', maxCapture: 'metadata', target: 'https://siem.example.com/ingest' }, rotateSecret: true },
      ],
    });
  });

  it.each([
    ['a body without sinks', {}, 'the body is a JSON object'],
    ['an unknown kind', { sinks: [{ name: 'a', kind: 'kafka' }] }, '"kind" is one of'],
    ['a bad name', { sinks: [{ name: 'A B', kind: 'ocsf-webhook', url: 'https://x.example' }] }, '"name"'],
    ['a duplicate name', { sinks: [{ name: 'a', kind: 'ocsf-webhook', url: 'https://x.example' }, { name: 'a', kind: 'ocsf-webhook', url: 'https://y.example' }] }, 'used twice'],
    ['plain http to another host', { sinks: [{ name: 'a', kind: 'ocsf-webhook', url: 'http://x.example/in' }] }, 'must use https'],
    ['credentials in a URL', { sinks: [{ name: 'a', kind: 'otlp', endpoint: 'https://u:p@x.example/v1/logs' }] }, 'must not carry credentials'],
    ['a bus the deployment may not use', { sinks: [{ name: 'a', kind: 'eventbridge', busArn: 'arn:aws:events:eu-west-1:999999999999:event-bus/other' }] }, 'not one this deployment may put events on; add it to the stack\'s bridge event buses (-c bridgeEventBuses deployed, AEP_BRIDGE_EVENT_BUSES on npm start)'],
    ['a malformed bus ARN', { sinks: [{ name: 'a', kind: 'eventbridge', busArn: 'agents' }] }, '"busArn"'],
    ['an unknown ceiling', { sinks: [{ name: 'a', kind: 'ocsf-webhook', url: 'https://x.example', maxCapture: 'all' }] }, '"maxCapture"'],
    ['an invalid type pattern', { sinks: [{ name: 'a', kind: 'ocsf-webhook', url: 'https://x.example', types: ['tool*'] }] }, '"types"'],
    ['a setting of another kind', { sinks: [{ name: 'a', kind: 'ocsf-webhook', url: 'https://x.example', headers: {} }] }, 'unknown setting "headers"'],
    ['a header the transport sets', { sinks: [{ name: 'a', kind: 'otlp', endpoint: 'https://x.example', headers: { 'Content-Type': 'text/plain' } }] }, 'not a header this sink may set'],
    ['a header value with a line break', { sinks: [{ name: 'a', kind: 'otlp', endpoint: 'https://x.example', headers: { authorization: 'a\r\nb' } }] }, 'single-line'],
  ])('refuses %s', (_label, body, reason) => {
    const parsed = parseSinkSet(body, LOCAL);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.reason).toContain(reason);
  });

  it.each([
    ['http://127.0.0.1:9999/hook', 'loopback'],
    ['https://127.0.0.1/hook', 'loopback'],
    ['https://[::1]:8443/hook', 'loopback'],
    ['https://2130706433/hook', 'loopback'],
    ['https://169.254.169.254/latest/meta-data/', 'link-local'],
    ['https://[fe80::1]/hook', 'link-local'],
    ['https://10.0.0.5/hook', 'private'],
    ['https://172.16.1.1/hook', 'private'],
    ['https://192.168.1.1/hook', 'private'],
    ['https://100.64.0.1/hook', 'private'],
    ['https://[fd00:ec2::254]/hook', 'private'],
    ['https://0.0.0.0/hook', 'reserved'],
    ['https://[::ffff:10.0.0.1]/hook', 'private'],
    ['https://[::ffff:127.0.0.1]/hook', 'loopback'],
  ])('refuses a sink at %s in a deployed stack (%s)', (url, kind) => {
    const parsed = parseSinkSet({ sinks: [{ name: 'a', kind: 'cloudevents-webhook', url }] }, DEPLOYED);
    expect(parsed.ok).toBe(false);
    expect(!parsed.ok && parsed.reason).toContain(`names a ${kind} address`);
  });

  it('refuses plain http in a deployed stack and takes an https name (its addresses are checked at connect time)', () => {
    const plain = parseSinkSet({ sinks: [{ name: 'a', kind: 'cloudevents-webhook', url: 'http://localhost:9999/hook' }] }, DEPLOYED);
    expect(!plain.ok && plain.reason).toContain('must use https');
    expect(parseSinkSet({ sinks: [{ name: 'a', kind: 'otlp', endpoint: 'https://otlp.example.com/v1/logs' }] }, DEPLOYED).ok).toBe(true);
  });
});
