// etcd member IDs are uint64s. etcd3 hands them over as decimal strings (its proto loader uses
// `longs: String`); etcdctl and etcd's logs print hex. The adapter speaks one form only: 16 lowercase
// hex digits, zero-padded (the `%016x` of etcd's own types.ID), so IDs compare as plain strings and
// look the same in status, Events and logs. Never go through Number: a uint64 does not fit.

const MAX_UINT64 = (1n << 64n) - 1n;
const DECIMAL = /^[0-9]{1,20}$/;
const HEX = /^[0-9a-fA-F]{1,16}$/;
const CANONICAL_HEX = /^[0-9a-f]{16}$/;

/** Decimal member ID (as etcd3 returns it) or bigint → 16-digit lowercase hex. Throws on anything else. */
export function toHexId(id: string | bigint): string {
  let value: bigint;
  if (typeof id === 'bigint') value = id;
  else if (DECIMAL.test(id)) value = BigInt(id);
  else throw new Error(`not a decimal etcd member ID: ${JSON.stringify(id)}`);
  if (value < 0n || value > MAX_UINT64) throw new Error(`etcd member ID out of uint64 range: ${id}`);
  return value.toString(16).padStart(16, '0');
}

/**
 * Hex member ID (padded or not, any case, as etcdctl prints it or as `toHexId` returns it) →
 * decimal string, the form etcd3 requests take. Throws on anything else.
 */
export function toDecimalId(hex: string): string {
  if (!HEX.test(hex)) throw new Error(`not a hex etcd member ID: ${JSON.stringify(hex)}`);
  return BigInt(`0x${hex}`).toString(10);
}

/** Hex ID in the adapter's canonical form (16 digits, lowercase), e.g. to compare with etcdctl output. */
export function normalizeHexId(hex: string): string {
  return toHexId(BigInt(toDecimalId(hex)));
}

/** True for an ID in the canonical form the adapter returns. */
export function isHexId(value: string): boolean {
  return CANONICAL_HEX.test(value);
}
