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
const RESERVED_V6 = new BlockList();
for (const [network, prefix] of [
  ['::', 128],
  // NAT64 (RFC 6052): the well-known prefix may carry only global IPv4 addresses, and the
  // local-use one may carry anything; no sink needs either.
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
  // An IPv6 form that carries an IPv4 address is judged by that address (so `[::a9fe:a9fe]` is
  // the metadata service's link-local address); one the IPv4 rules allow is still no address a
  // sink needs, and is reserved.
  const embedded = family === 6 ? embeddedIpv4(bare) : undefined;
  const kind = embedded === undefined ? kindOf(bare, family === 4 ? 'ipv4' : 'ipv6') : (kindOf(embedded, 'ipv4') ?? 'reserved');
  return kind === 'loopback' && rule.allowLoopback ? undefined : kind;
}

function kindOf(address: string, type: 'ipv4' | 'ipv6'): DisallowedKind | undefined {
  if (LOOPBACK.check(address, type)) return 'loopback';
  if (LINK_LOCAL.check(address, type)) return 'link-local';
  if (PRIVATE.check(address, type)) return 'private';
  if ((type === 'ipv4' ? RESERVED_V4 : RESERVED_V6).check(address, type)) return 'reserved';
  return undefined;
}

/**
 * The IPv4 address in the last 32 bits of an IPv6 address of a form that carries one:
 * IPv4-compatible `::a.b.c.d` (RFC 4291 §2.5.5.1; `::` and `::1` are not), IPv4-mapped
 * `::ffff:a.b.c.d` (§2.5.5.2) and IPv4-translated `::ffff:0:a.b.c.d` (SIIT, RFC 2765), each
 * written dotted or in hex.
 */
function embeddedIpv4(address: string): string | undefined {
  const [w0, w1, w2, w3, w4, w5, w6, w7] = ipv6Words(address) as [number, number, number, number, number, number, number, number];
  if (w0 !== 0 || w1 !== 0 || w2 !== 0 || w3 !== 0) return undefined;
  const compatible = w4 === 0 && w5 === 0 && (w6 !== 0 || w7 > 1);
  const mapped = w4 === 0 && w5 === 0xffff;
  const translated = w4 === 0xffff && w5 === 0;
  if (!compatible && !mapped && !translated) return undefined;
  return `${w6 >> 8}.${w6 & 0xff}.${w7 >> 8}.${w7 & 0xff}`;
}

/** The eight 16-bit words of an IPv6 literal (one `isIP` accepted). */
function ipv6Words(address: string): number[] {
  let text = address.split('%')[0] as string;
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted !== null) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const words = (part: string | undefined) => (part === undefined || part === '' ? [] : part.split(':').map((word) => Number.parseInt(word, 16)));
  const [head, tail] = text.split('::');
  if (tail === undefined) return words(head);
  const front = words(head);
  const back = words(tail);
  return [...front, ...Array<number>(8 - front.length - back.length).fill(0), ...back];
}
/** True when `host` (a URL's hostname) is an IP literal, bracketed or not. */
export function isAddressLiteral(host: string): boolean {
  const bare = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
  return isIP(bare) !== 0;
}
