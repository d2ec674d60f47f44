/**
 * The local CloudFront (local/gateway/edge.ts) runs the deployed viewer-request functions and
 * signs `/stream` like origin access control: what each origin receives, for viewer requests
 * built the way Node's HTTP server hands them over.
 */
import type { IncomingMessage } from 'node:http';
import { Socket } from 'node:net';
import { describe, expect, it } from 'vitest';
import { behaviourFor } from '../../infra/constructs/edge-behaviours.ts';
import { createLocalEdge } from '../../local/gateway/edge.ts';

const edge = createLocalEdge({ stageName: 'local', region: 'us-east-1' });

function viewerRequest(path: string, headers: Record<string, string> = {}): { request: IncomingMessage; url: URL } {
  const rawHeaders = ['Host', 'relay.example', ...Object.entries(headers).flat()];
  const request = {
    method: 'GET',
    url: path,
    rawHeaders,
    headers: Object.fromEntries([['host', 'relay.example'], ...Object.entries(headers).map(([name, value]) => [name.toLowerCase(), value])]),
    socket: new Socket(),
  } as unknown as IncomingMessage;
  return { request, url: new URL(path, 'http://relay.example') };
}

function routed(path: string, headers: Record<string, string> = {}) {
  const { request, url } = viewerRequest(path, headers);
  const decision = edge.route(request, url);
  if ('response' in decision) throw new Error('the edge answered by itself');
  return { ...decision, headers: request.headers, rawHeaders: request.rawHeaders };
}

describe('local edge', () => {
  it('routes by the distribution behaviours: HTTP API paths, the stream, and the socket with or without a trailing slash', () => {
    expect(['/events', '/.well-known/aep', '/healthz', '/admin/tenants', '/anything'].map((path) => behaviourFor(path).origin)).toEqual(['http', 'http', 'http', 'http', 'http']);
    expect(behaviourFor('/stream').origin).toBe('stream');
    expect(behaviourFor('/socket').origin).toBe('socket');
    expect(behaviourFor('/socket/').origin).toBe('socket');
    expect(behaviourFor('/socketx').origin).toBe('http');
  });

  it('rewrites /socket and /socket/ to the stage path, keeping the access_token query', () => {
    for (const path of ['/socket?access_token=aep_q%2Bx', '/socket/?access_token=aep_q%2Bx']) {
      const result = routed(path);
      expect(result.origin).toBe('socket');
      expect(result.url.pathname).toBe('/local');
      expect(result.url.searchParams.get('access_token')).toBe('aep_q+x');
    }
  });

  it('hands the stream a SigV4 Authorization and the viewer header as x-aep-authorization', () => {
    const result = routed('/stream?live=0', { Authorization: 'Bearer aep_viewer' });
    expect(result.origin).toBe('stream');
    expect(result.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 Credential=[A-Z0-9]+\/\d{8}\/us-east-1\/lambda\/aws4_request, SignedHeaders=[a-z0-9;-]+, Signature=[0-9a-f]{64}$/);
    expect(result.headers['x-aep-authorization']).toBe('Bearer aep_viewer');
    expect(result.headers['x-amz-date']).toMatch(/^\d{8}T\d{6}Z$/);
    // Node's raw view agrees, so every reader of the request sees the same headers.
    const raw = new Map<string, string>();
    for (let index = 0; index < result.rawHeaders.length; index += 2) raw.set(result.rawHeaders[index]!.toLowerCase(), result.rawHeaders[index + 1]!);
    expect(raw.get('authorization')).toBe(result.headers.authorization);
    expect(raw.get('x-aep-authorization')).toBe('Bearer aep_viewer');
  });

  it('drops an x-aep-authorization the viewer sent without Authorization, and overwrites one sent with it', () => {
    const alone = routed('/stream', { 'X-Aep-Authorization': 'Bearer aep_forged' });
    expect(alone.headers['x-aep-authorization']).toBeUndefined();
    expect(alone.headers.authorization).toMatch(/^AWS4-HMAC-SHA256 /);
    const both = routed('/stream', { 'X-Aep-Authorization': 'Bearer aep_forged', Authorization: 'Bearer aep_viewer' });
    expect(both.headers['x-aep-authorization']).toBe('Bearer aep_viewer');
  });

  it('leaves requests to the HTTP API as the viewer sent them', () => {
    const result = routed('/events?access_token=t', { Authorization: 'Bearer aep_viewer' });
    expect(result.origin).toBe('http');
    expect(result.headers.authorization).toBe('Bearer aep_viewer');
    expect(result.url.search).toBe('?access_token=t');
  });
});
