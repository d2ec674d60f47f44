/**
 * Which network addresses a sink may reach. A sink is a URL a tenant chose, fetched by the
 * relay from inside its network: without this rule a tenant could aim it at loopback (in
 * Lambda, the Runtime API), the instance metadata service (169.254.169.254, fd00:ec2::254) or
 * private ranges and read the answers back as failure reasons. A deployed stack refuses them
 * all, on the literal address when a sink is set and on every resolved address when a request
 * connects (so a name that resolves, or is re-pointed, to such an address is refused too);
 * the local stack may allow loopback, where its test receivers listen.
 */
import { BlockList, isIP } from 'node:net';

export interface AddressRule {
  /** Loopback (127.0.0.0/8, ::1) allowed: the local stack only. */
  allowLoopback: boolean;
}

/** What kind of disallowed address, for the refusal's reason. */
export type DisallowedKind = 'loopback' | 'private' | 'link-local' | 'reserved';

const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet('169.254.0.0', 16, 'ipv4');
LINK_LOCAL.addSubnet('fe80::', 10, 'ipv6');

const PRIVATE = new BlockList();
for (const [network, prefix] of [
  ['10.0.0.0', 8],
  ['172.16.0.0', 12],
  ['192.168.0.0', 16],
  // Carrier-grade NAT (RFC 6598): private in practice, and used inside cloud networks.
  ['100.64.0.0', 10],
] as const) {
  PRIVATE.addSubnet(network, prefix, 'ipv4');
}
// Unique local (RFC 4193), which holds the EC2 metadata service's IPv6 address, and the deprecated site-local.
PRIVATE.addSubnet('fc00::', 7, 'ipv6');
PRIVATE.addSubnet('fec0::', 10, 'ipv6');

const RESERVED_V4 = new BlockList();
for (const [network, prefix] of [
  // "This network": 0.0.0.0 reaches the local host on Linux.
  ['0.0.0.0', 8],
  ['192.0.0.0', 24],
  ['192.0.2.0', 24],
  ['198.18.0.0', 15],
  ['198.51.100.0', 24],
  ['203.0.113.0', 24],
  // Multicast, reserved and broadcast.
  ['224.0.0.0', 4],
  ['240.0.0.0', 4],
] as const) {
  RESERVED_V4.addSubnet(network, prefix, 'ipv4');
}
// Checked on IPv6 addresses only: BlockList matches an IPv4 address against ::ffff:0:0/96 too.
const RESERVED_V6 = new BlockList();
for (const [network, prefix] of [
  ['::', 128],
  // IPv4-mapped and IPv4-translated forms would carry any IPv4 address past the IPv4 rules.
  ['::ffff:0:0', 96],
  ['64:ff9b::', 96],
  ['64:ff9b:1::', 48],
  ['2002::', 16],
  ['100::', 64],
  ['2001:db8::', 32],
  ['ff00::', 8],
] as const) {
  RESERVED_V6.addSubnet(network, prefix, 'ipv6');
}

/** Why `address` (an IP literal) is refused under `rule`, or undefined when it is allowed. */
export function disallowedAddress(address: string, rule: AddressRule): DisallowedKind | undefined {
  const bare = address.startsWith('[') && address.endsWith(']') ? address.slice(1, -1) : address;
  const family = isIP(bare);
  if (family === 0) return undefined;
  const type = family === 4 ? 'ipv4' : 'ipv6';
  if (LOOPBACK.check(bare, type)) return rule.allowLoopback ? undefined : 'loopback';
  if (LINK_LOCAL.check(bare, type)) return 'link-local';
  if (PRIVATE.check(bare, type)) return 'private';
  if (family === 4 ? RESERVED_V4.check(bare, 'ipv4') : RESERVED_V4.check(bare, 'ipv6') || RESERVED_V6.check(bare, 'ipv6')) return 'reserved';
  return undefined;
}

/** True when `host` (a URL's hostname) is an IP literal, bracketed or not. */
export function isAddressLiteral(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return isIP(bare) !== 0;
}
