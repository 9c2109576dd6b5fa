// Kubernetes resource.Quantity ("1Gi", "500m", "1.5e3"), parsed to an exact rational so that
// comparisons never suffer from floating point ("0.1" + "0.2" is exactly "0.3" here).

/** An exact value num/den, always reduced, with den > 0. */
export interface Quantity {
  readonly num: bigint;
  readonly den: bigint;
}

export class QuantityError extends Error {
  constructor(input: string, why: string) {
    super(`invalid quantity "${input}": ${why}`);
    this.name = 'QuantityError';
  }
}

const BINARY: Record<string, number> = { Ki: 10, Mi: 20, Gi: 30, Ti: 40, Pi: 50, Ei: 60 };
const DECIMAL: Record<string, number> = { n: -9, u: -6, m: -3, '': 0, k: 3, M: 6, G: 9, T: 12, P: 15, E: 18 };
// The grammar of k8s.io/apimachinery's ParseQuantity. "E" alone is exa; "E3" is an exponent.
const GRAMMAR = /^([+-]?)(\d+(?:\.\d*)?|\.\d+)(?:(Ki|Mi|Gi|Ti|Pi|Ei)|[eE]([+-]?\d+)|([numkMGTPE]))?$/;
// Bounds the bigint work for inputs like "1e99999999"; real quantities are nowhere near.
const MAX_EXPONENT = 1000;

export function parseQuantity(input: string): Quantity {
  const m = GRAMMAR.exec(input);
  if (!m)
    throw new QuantityError(
      input,
      'expected a number with an optional suffix such as Ki, Mi, Gi, m, k, M, G or e3',
    );
  const [, sign, number, binary, exponent, decimal] = m as unknown as [
    string,
    string,
    string,
    string?,
    string?,
    string?,
  ];
  const [whole, fraction = ''] = number.split('.');
  let num = BigInt((whole ?? '') + fraction || '0');
  let den = 10n ** BigInt(fraction.length);
  if (sign === '-') num = -num;
  if (binary !== undefined) {
    num *= 1n << BigInt(BINARY[binary] ?? 0);
  } else {
    const exp = exponent !== undefined ? Number(exponent) : (DECIMAL[decimal ?? ''] ?? 0);
    if (Math.abs(exp) > MAX_EXPONENT) throw new QuantityError(input, 'exponent out of range');
    if (exp >= 0) num *= 10n ** BigInt(exp);
    else den *= 10n ** BigInt(-exp);
  }
  return reduce(num, den);
}

export function isQuantity(input: string): boolean {
  try {
    parseQuantity(input);
    return true;
  } catch {
    return false;
  }
}

export function compareQuantities(a: Quantity, b: Quantity): -1 | 0 | 1 {
  const left = a.num * b.den;
  const right = b.num * a.den;
  return left < right ? -1 : left > right ? 1 : 0;
}

export function addQuantities(a: Quantity, b: Quantity): Quantity {
  return reduce(a.num * b.den + b.num * a.den, a.den * b.den);
}

export function subtractQuantities(a: Quantity, b: Quantity): Quantity {
  return reduce(a.num * b.den - b.num * a.den, a.den * b.den);
}

export function quantityFromInteger(value: bigint): Quantity {
  return { num: value, den: 1n };
}

export function quantitySign(q: Quantity): -1 | 0 | 1 {
  return q.num < 0n ? -1 : q.num > 0n ? 1 : 0;
}

export function isIntegerQuantity(q: Quantity): boolean {
  return q.den === 1n;
}

/** The exact integer value; throws when the quantity has a fraction. */
export function quantityToBigInt(q: Quantity): bigint {
  if (q.den !== 1n) throw new Error('quantity is not an integer');
  return q.num;
}

/** A float approximation, for display and for CEL's asApproximateFloat(). */
export function quantityToNumber(q: Quantity): number {
  return Number(q.num) / Number(q.den);
}

/** Bytes as a bigint, rounding a fractional value up (as a volume request would be). */
export function quantityCeil(q: Quantity): bigint {
  const quotient = q.num / q.den;
  return q.num % q.den > 0n ? quotient + 1n : quotient;
}

function reduce(num: bigint, den: bigint): Quantity {
  const divisor = gcd(num < 0n ? -num : num, den);
  return divisor > 1n ? { num: num / divisor, den: den / divisor } : { num, den };
}

function gcd(a: bigint, b: bigint): bigint {
  while (b !== 0n) [a, b] = [b, a % b];
  return a === 0n ? 1n : a;
}
