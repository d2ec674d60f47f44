import { describe, expect, it } from 'vitest';
import { mintWebhookSecret, signatureHeader, verifySignature } from '../../../src/relay/bridges/webhook-signature.ts';

describe('webhook signatures', () => {
  const secret = mintWebhookSecret();
  const body = '[{"specversion":"1.0"}]';
  const now = 1_783_073_704_221;

  it('verifies a fresh signature of the exact body', () => {
    expect(verifySignature(secret, body, signatureHeader(secret, body, now), now + 1000)).toBe(true);
  });

  it('refuses another body, another secret and a stale timestamp', () => {
    const header = signatureHeader(secret, body, now);
    expect(verifySignature(secret, `${body} `, header, now)).toBe(false);
    expect(verifySignature(mintWebhookSecret(), body, header, now)).toBe(false);
    expect(verifySignature(secret, body, header, now + 301_000)).toBe(false);
    expect(verifySignature(secret, body, 'garbage', now)).toBe(false);
  });
});
