/** The per-process cache of fetched operator key sets: one fetch in flight per URL, least recently used evicted first. */
import { exportJWK, generateKeyPair } from 'jose';
import { describe, expect, it } from 'vitest';
import { publicJwksOf } from '../../../bin/card/make-card.ts';
import { MAX_KEY_SET_URLS, OperatorKeyCache } from '../../../src/relay/identity/operator-keys.ts';
import type { JwksFetch } from '../../../src/relay/ports/operators.ts';

const NOW = Date.parse('2030-01-01T00:00:00Z');
const operatorAt = (url: string) => ({ name: 'acme', jwksUrl: url, updatedAtMs: 0 });

async function keySetText(): Promise<string> {
  const { privateKey } = await generateKeyPair('ES256', { extractable: true });
  return JSON.stringify(publicJwksOf({ ...(await exportJWK(privateKey)), alg: 'ES256', kid: 'k1' }));
}

/** A fetcher that counts fetches per URL and answers each when the test releases it. */
function heldFetcher(body: string) {
  const fetches = new Map<string, number>();
  const held: Array<() => void> = [];
  const fetcher = (url: string) => {
    fetches.set(url, (fetches.get(url) ?? 0) + 1);
    return new Promise<JwksFetch>((resolve) => held.push(() => resolve({ ok: true, body, maxAgeSeconds: 300 })));
  };
  return { fetcher, fetches, release: () => held.splice(0).forEach((answer) => answer()) };
}

describe('operator key cache', () => {
  it('fetches a cold URL once for 50 concurrent hellos, and gives each the same keys', async () => {
    const source = heldFetcher(await keySetText());
    const cache = new OperatorKeyCache(source.fetcher, () => NOW);
    const url = 'https://keys.example/jwks.json';
    const pending = Array.from({ length: 50 }, () => cache.keysOf(operatorAt(url)));
    source.release();
    const answers = await Promise.all(pending);
    expect(answers.every((keys) => keys.ok)).toBe(true);
    expect(source.fetches.get(url)).toBe(1);
    // Settled and cached: the next hello fetches nothing either.
    expect((await cache.keysOf(operatorAt(url))).ok).toBe(true);
    expect(source.fetches.get(url)).toBe(1);
  });

  it('evicts the least recently used URL when full, not every URL at once', async () => {
    const body = await keySetText();
    const fetches = new Map<string, number>();
    const cache = new OperatorKeyCache(async (url) => {
      fetches.set(url, (fetches.get(url) ?? 0) + 1);
      return { ok: true, body, maxAgeSeconds: 3600 };
    }, () => NOW);
    const urls = Array.from({ length: MAX_KEY_SET_URLS }, (_, index) => `https://keys${index}.example/jwks.json`);
    for (const url of urls) await cache.keysOf(operatorAt(url));
    // The first URL is used again, so the second is now the least recently used.
    await cache.keysOf(operatorAt(urls[0] as string));
    await cache.keysOf(operatorAt('https://one-more.example/jwks.json'));
    await cache.keysOf(operatorAt(urls[0] as string));
    await cache.keysOf(operatorAt(urls[2] as string));
    await cache.keysOf(operatorAt(urls.at(-1) as string));
    expect([urls[0], urls[2], urls.at(-1)].map((url) => fetches.get(url as string))).toEqual([1, 1, 1]);
    await cache.keysOf(operatorAt(urls[1] as string));
    expect(fetches.get(urls[1] as string)).toBe(2);
  });
});
