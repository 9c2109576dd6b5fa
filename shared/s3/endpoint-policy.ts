// Which S3 endpoints the operator may connect to. Pure, table-tested; the adapter applies it twice:
// before a snapshot starts (so status can say why) and in the connection's DNS lookup (so a name
// that later resolves elsewhere is refused too).
//
// - Never contacted, whatever the allow-list says: link-local addresses (169.254.0.0/16, fe80::/10:
//   cloud metadata services), the other metadata addresses (AWS's IPv6 fd00:ec2::254, Alibaba's
//   100.100.100.200, Azure's WireServer 168.63.129.16) and the unspecified addresses (0.0.0.0/8,
//   ::), which Linux connects to the local host. An IPv6 address that carries an IPv4 address
//   (IPv4-mapped ::ffff:a.b.c.d, IPv4-compatible ::a.b.c.d, NAT64 64:ff9b::a.b.c.d and
//   64:ff9b:1::/48) is judged as that IPv4 address too, by every rule below.
// - Otherwise an endpoint the operator's configuration allow-lists (ETCDFN_S3_ALLOWED_ENDPOINTS) is
//   accepted whatever its scheme and address.
// - Otherwise it must be https://, must not be loopback (127.0.0.0/8, ::1), and must not be inside
//   the cluster's own address ranges when the operator's configuration names them
//   (ETCDFN_S3_DENIED_RANGES: the Pod and Service CIDRs), so a snapshot cannot be pointed at an
//   in-cluster service nobody meant to expose; allow-list the in-cluster store you do mean.
import { BlockList, isIP } from 'node:net';

export const ALLOWED_ENDPOINTS_ENV = 'ETCDFN_S3_ALLOWED_ENDPOINTS';
export const DENIED_RANGES_ENV = 'ETCDFN_S3_DENIED_RANGES';

/** An address range: `10.96.0.0/12`, `fd00::/8`. */
export interface AddressRange {
  address: string;
  prefixLength: number;
}

/** Parses the denied-ranges setting (CIDRs separated by commas or whitespace); bad entries are errors. */
export function parseRanges(value: string | undefined): { ranges: AddressRange[]; errors: string[] } {
  const ranges: AddressRange[] = [];
  const errors: string[] = [];
  for (const text of (value ?? '').split(/[\s,]+/).filter(Boolean)) {
    const [address = '', length = ''] = text.split('/');
    const family = isIP(address);
    const prefixLength = Number(length);
    if (!family || !/^\d+$/.test(length) || prefixLength > (family === 4 ? 32 : 128)) {
      errors.push(`${text}: a range is <address>/<prefix length>, e.g. 10.96.0.0/12`);
      continue;
    }
    ranges.push({ address, prefixLength });
  }
  return { ranges, errors };
}

/**
 * One allow-list entry: `<scheme>://<host>[:<port>]`, where host is a name, an IP address, or an
 * address range written as a path (`http://127.0.0.0/8`, `http://[::1]/128`). No port = any port.
 */
export interface AllowedEndpoint {
  protocol: 'http:' | 'https:';
  host: string;
  port?: string;
  /** Set when the entry is an address range. */
  prefixLength?: number;
}

export type EndpointVerdict =
  | { allowed: true; allowListed: boolean }
  | {
      allowed: false;
      reason:
        | 'EndpointInvalid'
        | 'EndpointLinkLocal'
        | 'EndpointMetadata'
        | 'EndpointUnspecified'
        | 'EndpointInsecure'
        | 'EndpointLoopback'
        | 'EndpointClusterInternal';
      message: string;
    };

/** Parses the allow-list setting (entries separated by commas or whitespace); bad entries are errors. */
export function parseAllowList(value: string | undefined): { entries: AllowedEndpoint[]; errors: string[] } {
  const entries: AllowedEndpoint[] = [];
  const errors: string[] = [];
  for (const text of (value ?? '').split(/[\s,]+/).filter(Boolean)) {
    let url: URL;
    try {
      url = new URL(text);
    } catch {
      errors.push(`${text}: not a URL`);
      continue;
    }
    if (url.protocol !== 'http:' && url.protocol !== 'https:') {
      errors.push(`${text}: only http:// and https:// endpoints`);
      continue;
    }
    const host = bare(url.hostname);
    const path = url.pathname.replace(/^\//, '');
    const entry: AllowedEndpoint = { protocol: url.protocol, host, ...(url.port && { port: url.port }) };
    if (path) {
      const family = isIP(host);
      const length = Number(path);
      if (!family || !/^\d+$/.test(path) || length > (family === 4 ? 32 : 128)) {
        errors.push(`${text}: a range is <address>/<prefix length>, e.g. http://127.0.0.0/8`);
        continue;
      }
      entry.prefixLength = length;
    }
    entries.push(entry);
  }
  return { entries, errors };
}

const LINK_LOCAL = new BlockList();
LINK_LOCAL.addSubnet('169.254.0.0', 16, 'ipv4');
LINK_LOCAL.addSubnet('fe80::', 10, 'ipv6');
const LOOPBACK = new BlockList();
LOOPBACK.addSubnet('127.0.0.0', 8, 'ipv4');
LOOPBACK.addAddress('::1', 'ipv6');

const METADATA = new BlockList();
METADATA.addAddress('fd00:ec2::254', 'ipv6'); // AWS instance metadata over IPv6
METADATA.addAddress('100.100.100.200', 'ipv4'); // Alibaba Cloud metadata
METADATA.addAddress('168.63.129.16', 'ipv4'); // Azure WireServer
const UNSPECIFIED = new BlockList();
UNSPECIFIED.addSubnet('0.0.0.0', 8, 'ipv4');
UNSPECIFIED.addAddress('::', 'ipv6');

export function isLinkLocal(address: string): boolean {
  return inList(LINK_LOCAL, address);
}

/** A cloud metadata address outside the link-local ranges. */
export function isMetadataAddress(address: string): boolean {
  return inList(METADATA, address);
}

/** 0.0.0.0/8 and ::, which Linux connects to the local host. */
export function isUnspecified(address: string): boolean {
  return inList(UNSPECIFIED, address);
}

/** The eight 16-bit groups of an IPv6 address (a trailing dotted quad allowed); undefined otherwise. */
function ipv6Groups(address: string): number[] | undefined {
  if (isIP(address) !== 6) return undefined;
  let text = address.split('%')[0] ?? '';
  const dotted = /(\d+)\.(\d+)\.(\d+)\.(\d+)$/.exec(text);
  if (dotted) {
    const [a, b, c, d] = dotted.slice(1).map(Number) as [number, number, number, number];
    text = `${text.slice(0, dotted.index)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head = '', tail] = text.split('::');
  const h = head ? head.split(':') : [];
  const t = tail ? tail.split(':') : [];
  const fill = tail === undefined ? [] : Array<string>(8 - h.length - t.length).fill('0');
  return [...h, ...fill, ...t].map(x => parseInt(x, 16));
}

/**
 * The IPv4 address an IPv6 address carries, when it is one of the forms that reach it: IPv4-mapped
 * (::ffff:0:0/96), IPv4-compatible (::/96 but :: and ::1), NAT64 (64:ff9b::/96, 64:ff9b:1::/48).
 */
export function embeddedIPv4(address: string): string | undefined {
  const g = ipv6Groups(address);
  if (!g || g.length !== 8) return undefined;
  const zero = (from: number, to: number) => g.slice(from, to).every(x => x === 0);
  const [g6 = 0, g7 = 0] = [g[6], g[7]];
  const v4 = `${g6 >> 8}.${g6 & 255}.${g7 >> 8}.${g7 & 255}`;
  if (zero(0, 5) && g[5] === 0xffff) return v4;
  if (zero(0, 6) && !(g6 === 0 && g7 <= 1)) return v4;
  if (g[0] === 0x64 && g[1] === 0xff9b && (zero(2, 6) || g[2] === 1)) return v4;
  return undefined;
}

export function isLoopback(address: string): boolean {
  return inList(LOOPBACK, address);
}

/**
 * The verdict on `endpoint`. `addresses` are what its host resolves to (the literal address when it
 * is one; empty when unknown): every one of them must pass.
 */
export function checkEndpoint(
  endpoint: string,
  allowList: readonly AllowedEndpoint[],
  addresses: readonly string[] = [],
  denied: readonly AddressRange[] = [],
): EndpointVerdict {
  // Over 80 lines: the endpoint rules in the order their refusals are reported to the user.
  let url: URL;
  try {
    url = new URL(endpoint);
  } catch {
    return {
      allowed: false,
      reason: 'EndpointInvalid',
      message: `destination.s3.endpoint ${endpoint} is not a URL`,
    };
  }
  if (url.protocol !== 'http:' && url.protocol !== 'https:') {
    return {
      allowed: false,
      reason: 'EndpointInvalid',
      message: `destination.s3.endpoint ${url.origin} must start with https://`,
    };
  }
  const host = bare(url.hostname);
  const given = [...new Set([...(isIP(host) ? [host] : []), ...addresses.map(bare)])];
  // Every address, and the IPv4 address an IPv6 one carries: each rule sees both.
  const all = [...new Set(given.flatMap(a => [a, embeddedIPv4(a) ?? []].flat()))];
  const shown = `${url.protocol}//${url.host}`;
  const resolved = isIP(host) || given.length === 0 ? '' : ` (${host} resolves to ${given.join(', ')})`;
  const linkLocal = all.find(isLinkLocal);
  if (linkLocal !== undefined) {
    return {
      allowed: false,
      reason: 'EndpointLinkLocal',
      message: `destination.s3.endpoint ${shown}${resolved} is a link-local address, which is never contacted (cloud metadata services live there); point it at your object store`,
    };
  }
  const metadata = all.find(isMetadataAddress);
  if (metadata !== undefined) {
    return {
      allowed: false,
      reason: 'EndpointMetadata',
      message: `destination.s3.endpoint ${shown}${resolved} is a cloud metadata address (${metadata}), which is never contacted; point it at your object store`,
    };
  }
  const unspecified = all.find(isUnspecified);
  if (unspecified !== undefined) {
    return {
      allowed: false,
      reason: 'EndpointUnspecified',
      message: `destination.s3.endpoint ${shown}${resolved} is an unspecified address (${unspecified}), which connects to the local host; it is never contacted: point it at your object store`,
    };
  }
  if (allowList.some(entry => matches(entry, url, host, all))) return { allowed: true, allowListed: true };
  if (url.protocol !== 'https:') {
    return {
      allowed: false,
      reason: 'EndpointInsecure',
      message: `destination.s3.endpoint ${shown} uses plain http, which would send the snapshot and the request signatures unencrypted; use https://, or have the operator's administrator allow-list it in ${ALLOWED_ENDPOINTS_ENV}`,
    };
  }
  const loopback = all.find(isLoopback) ?? (host === 'localhost' ? host : undefined);
  if (loopback !== undefined) {
    return {
      allowed: false,
      reason: 'EndpointLoopback',
      message: `destination.s3.endpoint ${shown}${resolved} is a loopback address (the operator's own host); have the operator's administrator allow-list it in ${ALLOWED_ENDPOINTS_ENV} if that is intended`,
    };
  }
  for (const range of denied) {
    const list = new BlockList();
    list.addSubnet(range.address, range.prefixLength, isIP(range.address) === 4 ? 'ipv4' : 'ipv6');
    const inside = all.find(a => inList(list, a));
    if (inside === undefined) continue;
    return {
      allowed: false,
      reason: 'EndpointClusterInternal',
      message: `destination.s3.endpoint ${shown}${resolved} is inside the cluster's own address range ${range.address}/${range.prefixLength} (${DENIED_RANGES_ENV}): in-cluster services are not contacted unless the operator's administrator allow-lists the endpoint in ${ALLOWED_ENDPOINTS_ENV}`,
    };
  }
  return { allowed: true, allowListed: false };
}

function matches(entry: AllowedEndpoint, url: URL, host: string, addresses: readonly string[]): boolean {
  if (entry.protocol !== url.protocol) return false;
  if (entry.port !== undefined && entry.port !== (url.port || (url.protocol === 'https:' ? '443' : '80'))) {
    return false;
  }
  if (entry.prefixLength === undefined) return entry.host.toLowerCase() === host.toLowerCase();
  if (addresses.length === 0) return false;
  const range = new BlockList();
  const family = isIP(entry.host) === 4 ? 'ipv4' : 'ipv6';
  range.addSubnet(entry.host, entry.prefixLength, family);
  return addresses.every(a => inList(range, a));
}

function inList(list: BlockList, address: string): boolean {
  const a = bare(address);
  const family = isIP(a);
  if (family === 0) return false;
  // Node's BlockList checks IPv4-mapped IPv6 addresses (::ffff:a9fe:a9fe) against IPv4 rules.
  return list.check(a, family === 6 ? 'ipv6' : 'ipv4');
}

/** A hostname without the brackets URL keeps around IPv6 literals. */
function bare(host: string): string {
  return host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
}
