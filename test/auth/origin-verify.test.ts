import { describe, expect, it } from 'vitest';
import { ORIGIN_VERIFY_HEADER, carriesOriginSecret } from '../../src/auth/origin-verify.ts';

describe('carriesOriginSecret', () => {
  it('accepts the secret under any header case, and any of the values a rotation accepts', () => {
    expect(carriesOriginSecret({ [ORIGIN_VERIFY_HEADER]: 'current' }, ['current'])).toBe(true);
    expect(carriesOriginSecret({ 'X-Aep-Origin-Verify': 'current' }, ['current'])).toBe(true);
    expect(carriesOriginSecret({ [ORIGIN_VERIFY_HEADER]: 'previous' }, ['current', 'previous'])).toBe(true);
  });

  it('refuses no header, another value, a prefix of the secret, and an empty list of secrets', () => {
    expect(carriesOriginSecret({}, ['current'])).toBe(false);
    expect(carriesOriginSecret(undefined, ['current'])).toBe(false);
    expect(carriesOriginSecret({ [ORIGIN_VERIFY_HEADER]: 'other' }, ['current'])).toBe(false);
    expect(carriesOriginSecret({ [ORIGIN_VERIFY_HEADER]: 'curren' }, ['current'])).toBe(false);
    expect(carriesOriginSecret({ [ORIGIN_VERIFY_HEADER]: 'current' }, [])).toBe(false);
  });
});
