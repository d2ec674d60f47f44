/** The address rule of bridge sinks: every class a deployed stack refuses, and loopback only where allowed. */
import { describe, expect, it } from 'vitest';
import { disallowedAddress } from '../../../src/relay/domain/outbound-address.ts';

const DEPLOYED = { allowLoopback: false };
const LOCAL = { allowLoopback: true };

describe('sink address rule', () => {
  it.each([
    ['127.0.0.1', 'loopback'],
    ['127.255.0.9', 'loopback'],
    ['::1', 'loopback'],
    ['[::1]', 'loopback'],
    ['::ffff:127.0.0.1', 'loopback'],
    ['169.254.169.254', 'link-local'],
    ['169.254.170.2', 'link-local'],
    ['fe80::1', 'link-local'],
    ['10.0.0.1', 'private'],
    ['10.255.255.255', 'private'],
    ['172.16.0.1', 'private'],
    ['172.31.255.254', 'private'],
    ['192.168.0.1', 'private'],
    ['100.64.0.1', 'private'],
    ['100.127.255.254', 'private'],
    ['fc00::1', 'private'],
    ['fd00:ec2::254', 'private'],
    ['::ffff:192.168.1.1', 'private'],
    ['0.0.0.0', 'reserved'],
    ['0.1.2.3', 'reserved'],
    ['::', 'reserved'],
    ['::ffff:8.8.8.8', 'reserved'],
    ['64:ff9b::a00:1', 'reserved'],
    ['224.0.0.1', 'reserved'],
    ['255.255.255.255', 'reserved'],
    ['192.0.2.1', 'reserved'],
  ])('refuses %s in a deployed stack as %s', (address, kind) => {
    expect(disallowedAddress(address, DEPLOYED)).toBe(kind);
  });

  it.each(['8.8.8.8', '1.1.1.1', '172.32.0.1', '100.128.0.1', '11.0.0.1', '2606:4700:4700::1111', '2a00:1450:4001::200e'])('allows the public address %s', (address) => {
    expect(disallowedAddress(address, DEPLOYED)).toBeUndefined();
  });

  it('allows loopback only when the rule does (the local stack), and nothing else with it', () => {
    for (const address of ['127.0.0.1', '::1', '[::1]']) expect(disallowedAddress(address, LOCAL)).toBeUndefined();
    expect(disallowedAddress('169.254.169.254', LOCAL)).toBe('link-local');
    expect(disallowedAddress('10.0.0.1', LOCAL)).toBe('private');
  });

  it.each([
    // IPv4-compatible (::a.b.c.d, RFC 4291 §2.5.5.1), dotted and hex, and as a URL writes it.
    ['::169.254.169.254', 'link-local'],
    ['::a9fe:a9fe', 'link-local'],
    ['[::a9fe:a9fe]', 'link-local'],
    ['::127.0.0.1', 'loopback'],
    ['::a00:1', 'private'],
    ['::c0a8:101', 'private'],
    ['::8.8.8.8', 'reserved'],
    // IPv4-translated (SIIT, ::ffff:0:a.b.c.d, RFC 2765), dotted and hex.
    ['::ffff:0:169.254.169.254', 'link-local'],
    ['::ffff:0:a9fe:a9fe', 'link-local'],
    ['[::ffff:0:7f00:1]', 'loopback'],
    ['::ffff:0:10.1.2.3', 'private'],
    ['::ffff:0:8.8.8.8', 'reserved'],
    // The IPv4-mapped hex form too.
    ['::ffff:a9fe:a9fe', 'link-local'],
  ])('judges %s by the IPv4 address it embeds: %s', (address, kind) => {
    expect(disallowedAddress(address, DEPLOYED)).toBe(kind);
  });

  it('allows an embedded loopback only where loopback is allowed, and nothing else embedded', () => {
    expect(disallowedAddress('::7f00:1', LOCAL)).toBeUndefined();
    expect(disallowedAddress('::ffff:0:a9fe:a9fe', LOCAL)).toBe('link-local');
    expect(disallowedAddress('::a00:1', LOCAL)).toBe('private');
  });

  it('leaves names to the connect-time check', () => {
    expect(disallowedAddress('localhost', DEPLOYED)).toBeUndefined();
  });
});
