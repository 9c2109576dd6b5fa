import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import {
  addQuantities,
  compareQuantities,
  isIntegerQuantity,
  isQuantity,
  parseQuantity,
  quantityCeil,
  quantitySign,
  quantityToBigInt,
  quantityToNumber,
  subtractQuantities,
} from '../../shared/quantity.ts';

const Ki = 1024n;

// [input, numerator, denominator] of the exact value, reduced.
const VALID: [string, bigint, bigint][] = [
  ['0', 0n, 1n],
  ['1', 1n, 1n],
  ['+7', 7n, 1n],
  ['-3', -3n, 1n],
  ['1Ki', Ki, 1n],
  ['1Mi', Ki ** 2n, 1n],
  ['1Gi', Ki ** 3n, 1n],
  ['2Ti', 2n * Ki ** 4n, 1n],
  ['1Pi', Ki ** 5n, 1n],
  ['1Ei', Ki ** 6n, 1n],
  ['1.5Gi', 1610612736n, 1n],
  ['.5Mi', 524288n, 1n],
  ['5.Ki', 5n * Ki, 1n],
  ['1k', 1000n, 1n],
  ['1M', 10n ** 6n, 1n],
  ['1G', 10n ** 9n, 1n],
  ['1T', 10n ** 12n, 1n],
  ['1P', 10n ** 15n, 1n],
  ['1E', 10n ** 18n, 1n],
  ['100m', 1n, 10n],
  ['1500m', 3n, 2n],
  ['250u', 1n, 4000n],
  ['5n', 1n, 200000000n],
  ['1e3', 1000n, 1n],
  ['1E3', 1000n, 1n],
  ['1e+3', 1000n, 1n],
  ['1e-3', 1n, 1000n],
  ['2.5e2', 250n, 1n],
  ['0.1', 1n, 10n],
  ['-1.5Gi', -1610612736n, 1n],
  ['007', 7n, 1n],
];

const INVALID = [
  '',
  ' ',
  '1 Gi',
  'Gi',
  '1GB',
  '1gi',
  '1K',
  '1KiB',
  '1e',
  '1e1.5',
  '1.2.3',
  '--1',
  '1Gi ',
  'abc',
  '.',
  '1e9999',
];

describe('parseQuantity', () => {
  for (const [input, num, den] of VALID) {
    it(`parses ${JSON.stringify(input)} exactly`, () => {
      assert.deepEqual(parseQuantity(input), { num, den });
      assert.equal(isQuantity(input), true);
    });
  }
  for (const input of INVALID) {
    it(`rejects ${JSON.stringify(input)}`, () => {
      assert.throws(() => parseQuantity(input), /invalid quantity/);
      assert.equal(isQuantity(input), false);
    });
  }
});

describe('comparing and arithmetic', () => {
  const cmp = (a: string, b: string) => compareQuantities(parseQuantity(a), parseQuantity(b));
  const table: [string, string, -1 | 0 | 1][] = [
    ['1Gi', '1G', 1],
    ['1G', '1Gi', -1],
    ['1000m', '1', 0],
    ['1Ki', '1024', 0],
    ['1.5Gi', '1536Mi', 0],
    ['1e3', '1k', 0],
    ['0.1', '100m', 0],
    ['-1', '0', -1],
    ['2Gi', '2147483648', 0],
    ['1Gi', '1073741825', -1],
    ['1n', '0', 1],
  ];
  for (const [a, b, want] of table) {
    it(`${a} vs ${b} is ${want}`, () => assert.equal(cmp(a, b), want));
  }

  it('adds and subtracts exactly', () => {
    assert.deepEqual(addQuantities(parseQuantity('0.1'), parseQuantity('0.2')), parseQuantity('0.3'));
    assert.deepEqual(addQuantities(parseQuantity('1.5Gi'), parseQuantity('512Mi')), parseQuantity('2Gi'));
    assert.deepEqual(subtractQuantities(parseQuantity('1'), parseQuantity('1500m')), parseQuantity('-500m'));
  });

  it('reports sign, integer-ness and conversions', () => {
    assert.equal(quantitySign(parseQuantity('-2')), -1);
    assert.equal(quantitySign(parseQuantity('0Gi')), 0);
    assert.equal(quantitySign(parseQuantity('3m')), 1);
    assert.equal(isIntegerQuantity(parseQuantity('2000m')), true);
    assert.equal(isIntegerQuantity(parseQuantity('1500m')), false);
    assert.equal(quantityToBigInt(parseQuantity('1Gi')), 1073741824n);
    assert.throws(() => quantityToBigInt(parseQuantity('1500m')));
    assert.equal(quantityToNumber(parseQuantity('1500m')), 1.5);
    assert.equal(quantityCeil(parseQuantity('1500m')), 2n);
    assert.equal(quantityCeil(parseQuantity('-1500m')), -1n);
    assert.equal(quantityCeil(parseQuantity('2')), 2n);
  });
});

describe('the CRD quantity pattern', () => {
  // The pattern on int-or-string quantity fields in crds/ must accept exactly what the parser does.
  const pattern = /^(\+|-)?(([0-9]+(\.[0-9]*)?)|(\.[0-9]+))(([KMGTPE]i)|[numkMGTPE]|([eE](\+|-)?[0-9]+))?$/;
  for (const [input] of VALID) it(`accepts ${JSON.stringify(input)}`, () => assert.match(input, pattern));
  for (const input of INVALID.filter(i => i !== '1e9999')) {
    it(`rejects ${JSON.stringify(input)}`, () => assert.doesNotMatch(input, pattern));
  }
});
