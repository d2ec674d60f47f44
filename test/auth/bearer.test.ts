/**
 * Which value of a request is its bearer token (AEP-0003 §8.1): only a `Bearer` value is, and a
 * header that is not one (CloudFront's SigV4 signature on the stream function URL) hides nothing.
 */
import { describe, expect, it } from 'vitest';
import { bearerToken } from '../../src/auth/bearer.ts';

const SIGV4 = 'AWS4-HMAC-SHA256 Credential=ASIAEXAMPLE/20261130/us-east-1/lambda/aws4_request, SignedHeaders=host;x-amz-date, Signature=0a1b';

describe('bearerToken', () => {
  it.each([
    ['a Bearer header', { authorization: 'Bearer aep_h', allowQueryToken: false }, 'aep_h'],
    ['the scheme in any case', { authorization: 'bearer aep_h', allowQueryToken: false }, 'aep_h'],
    ['the forwarded header before the signature', { forwardedAuthorization: 'Bearer aep_f', authorization: SIGV4, allowQueryToken: true, accessTokenQuery: 'aep_q' }, 'aep_f'],
    ['the query when Authorization is a SigV4 signature', { authorization: SIGV4, accessTokenQuery: 'aep_q', allowQueryToken: true }, 'aep_q'],
    ['the query when Authorization is not Bearer', { authorization: 'Basic dXNlcjpwdw==', accessTokenQuery: 'aep_q', allowQueryToken: true }, 'aep_q'],
    ['a header before the query', { authorization: 'Bearer aep_h', accessTokenQuery: 'aep_q', allowQueryToken: true }, 'aep_h'],
  ])('takes %s', (_name, sources, expected) => {
    expect(bearerToken(sources)).toBe(expected);
  });

  it.each([
    ['a SigV4 signature alone', { authorization: SIGV4, allowQueryToken: true }],
    ['a query token where the binding allows none', { authorization: SIGV4, accessTokenQuery: 'aep_q', allowQueryToken: false }],
    ['a Bearer scheme with no token', { authorization: 'Bearer ', allowQueryToken: false }],
    ['an empty query token', { accessTokenQuery: '', allowQueryToken: true }],
  ])('finds no token in %s', (_name, sources) => {
    expect(bearerToken(sources)).toBeUndefined();
  });
});
