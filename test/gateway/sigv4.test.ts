/**
 * The management API poster signs PostToConnection itself; the signature must be exactly the
 * one the AWS SDK's own signer computes for the same request (path encoded twice, payload
 * hash signed, session token included).
 */
import { createHash, createHmac } from 'node:crypto';
import { SignatureV4 } from '@smithy/signature-v4';
import { describe, expect, it } from 'vitest';
import { signRequest } from '../../src/gateway/sigv4.ts';

/** The SDK signer's hash interface over node:crypto. */
class NodeHash {
  private readonly hash;
  constructor(secret?: string | ArrayBuffer | ArrayBufferView) {
    this.hash = secret === undefined ? createHash('sha256') : createHmac('sha256', bytes(secret));
  }
  update(data: string | ArrayBuffer | ArrayBufferView): void {
    this.hash.update(bytes(data));
  }
  async digest(): Promise<Uint8Array> {
    return new Uint8Array(this.hash.digest());
  }
}

function bytes(data: string | ArrayBuffer | ArrayBufferView): string | Uint8Array {
  if (typeof data === 'string') return data;
  return ArrayBuffer.isView(data) ? new Uint8Array(data.buffer, data.byteOffset, data.byteLength) : new Uint8Array(data);
}

describe('signRequest', () => {
  const now = new Date('2026-11-30T17:00:00.123Z');
  const host = 'abc123.execute-api.eu-west-1.amazonaws.com';
  it.each([
    ['temporary credentials, an id with characters URI-encoding changes', { accessKeyId: 'ASIAEXAMPLE', secretAccessKey: 'wJalrXUtnFEMI/K7MDENG+bPxRfiCYEXAMPLEKEY', sessionToken: 'FwoGZXIvYXdzEXAMPLE' }, 'Ab1=/+x'],
    ['long-term credentials, a plain id', { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' }, 'L0Ldnc2XoAMCJ1A='],
  ])('matches the SDK signer: %s', async (_label, credentials, connectionId) => {
    const body = Buffer.from('{"aep":"0.1","id":"e1"}');
    const path = `/prod/@connections/${encodeURIComponent(connectionId)}`;
    const reference = new SignatureV4({ service: 'execute-api', region: 'eu-west-1', credentials, sha256: NodeHash, uriEscapePath: true });
    const expected = await reference.sign(
      { method: 'POST', protocol: 'https:', hostname: host, path, headers: { host, 'content-type': 'application/json', 'x-amz-content-sha256': createHash('sha256').update(body).digest('hex') }, body },
      { signingDate: now },
    );
    const headers = signRequest({ method: 'POST', host, path, body, contentType: 'application/json', region: 'eu-west-1', service: 'execute-api', credentials, now });
    expect(headers.authorization).toBe(expected.headers.authorization);
    expect(headers['x-amz-date']).toBe('20261130T170000Z');
  });
});
