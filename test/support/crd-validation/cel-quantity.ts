// Kubernetes' CEL Quantity library (k8s.io/apiserver/pkg/cel/library/quantity.go) for @bufbuild/cel.
// Quantity is an opaque type there. @bufbuild/cel can only give a value its own type through a
// protobuf message, so a Quantity is a tiny message holding its reduced fraction as strings: two
// equal quantities ("1000m" and "1") then hold the same fields, which makes CEL's == exact too.
import { create, createFileRegistry } from '@bufbuild/protobuf';
import type { DescMessage, Registry } from '@bufbuild/protobuf';
import { reflect } from '@bufbuild/protobuf/reflect';
import type { ReflectMessage } from '@bufbuild/protobuf/reflect';
import {
  FieldDescriptorProto_Label,
  FieldDescriptorProto_Type,
  FileDescriptorProtoSchema,
} from '@bufbuild/protobuf/wkt';
import { celFunc, celMethod, CelScalar, objectType } from '@bufbuild/cel';
import type { CelFunc } from '@bufbuild/cel';
import type { Quantity } from '../../../shared/quantity.ts';
import {
  addQuantities,
  compareQuantities,
  isIntegerQuantity,
  isQuantity,
  parseQuantity,
  quantityFromInteger,
  quantitySign,
  quantityToNumber,
  subtractQuantities,
} from '../../../shared/quantity.ts';

const TYPE_NAME = 'kubernetes.Quantity';
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

const field = (name: string, number: number) => ({
  name,
  number,
  jsonName: name,
  type: FieldDescriptorProto_Type.STRING,
  label: FieldDescriptorProto_Label.OPTIONAL,
});

const registry = createFileRegistry(
  create(FileDescriptorProtoSchema, {
    name: 'etcdfn/validation/quantity.proto',
    package: 'kubernetes',
    syntax: 'proto3',
    messageType: [{ name: 'Quantity', field: [field('num', 1), field('den', 2)] }],
  }),
  () => undefined,
);
const desc: DescMessage = registry.getMessage(TYPE_NAME)!;
const Q = objectType(desc);
const { INT, BOOL, STRING, DOUBLE } = CelScalar;

interface QuantityFields {
  num: string;
  den: string;
}

function toCel(q: Quantity): ReflectMessage {
  return reflect(desc, create(desc, { num: q.num.toString(), den: q.den.toString() }));
}

function fromCel(v: ReflectMessage): Quantity {
  const { num, den } = v.message as unknown as QuantityFields;
  return { num: BigInt(num), den: BigInt(den) };
}

function compare(a: ReflectMessage, b: ReflectMessage): -1 | 0 | 1 {
  return compareQuantities(fromCel(a), fromCel(b));
}

const funcs: CelFunc[] = [
  celFunc('quantity', [STRING], Q, s => toCel(parseQuantity(s))),
  celFunc('isQuantity', [STRING], BOOL, s => isQuantity(s)),
  celMethod('isGreaterThan', Q, [Q], BOOL, function (other) {
    return compare(this, other) > 0;
  }),
  celMethod('isLessThan', Q, [Q], BOOL, function (other) {
    return compare(this, other) < 0;
  }),
  celMethod('compareTo', Q, [Q], INT, function (other) {
    return BigInt(compare(this, other));
  }),
  celMethod('add', Q, [Q], Q, function (other) {
    return toCel(addQuantities(fromCel(this), fromCel(other)));
  }),
  celMethod('add', Q, [INT], Q, function (other) {
    return toCel(addQuantities(fromCel(this), quantityFromInteger(other)));
  }),
  celMethod('sub', Q, [Q], Q, function (other) {
    return toCel(subtractQuantities(fromCel(this), fromCel(other)));
  }),
  celMethod('sub', Q, [INT], Q, function (other) {
    return toCel(subtractQuantities(fromCel(this), quantityFromInteger(other)));
  }),
  celMethod('sign', Q, [], INT, function () {
    return BigInt(quantitySign(fromCel(this)));
  }),
  celMethod('isInteger', Q, [], BOOL, function () {
    const q = fromCel(this);
    return isIntegerQuantity(q) && q.num >= INT64_MIN && q.num <= INT64_MAX;
  }),
  celMethod('asInteger', Q, [], INT, function () {
    const q = fromCel(this);
    if (!isIntegerQuantity(q) || q.num < INT64_MIN || q.num > INT64_MAX) {
      throw new Error('cannot convert value to integer: not an integer or out of int64 range');
    }
    return q.num;
  }),
  celMethod('asApproximateFloat', Q, [], DOUBLE, function () {
    return quantityToNumber(fromCel(this));
  }),
];

export const celQuantityFuncs: { typeName: string; registry: Registry; funcs: CelFunc[] } = {
  typeName: TYPE_NAME,
  registry,
  funcs,
};
