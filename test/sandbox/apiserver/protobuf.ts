// Decoding of the few protobuf bodies kubectl sends from its typed commands (`kubectl create
// namespace|secret|configmap|serviceaccount`): the k8s envelope ("k8s\0" + runtime.Unknown) around
// the object's message from k8s.io/api/core/v1/generated.proto. Answers are JSON, which kubectl takes.

import { unsupportedMediaType } from './errors.ts';

export const PROTOBUF = 'application/vnd.kubernetes.protobuf';

type Field = { no: number; wire: number; value: bigint | Buffer };

class Reader {
  private pos = 0;
  private readonly buf: Buffer;
  constructor(buf: Buffer) {
    this.buf = buf;
  }

  private varint(): bigint {
    let result = 0n;
    let shift = 0n;
    for (;;) {
      if (this.pos >= this.buf.length) throw new Error('truncated varint');
      const b = this.buf[this.pos++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
      shift += 7n;
    }
  }

  fields(): Field[] {
    const out: Field[] = [];
    while (this.pos < this.buf.length) {
      const key = Number(this.varint());
      const no = key >> 3;
      const wire = key & 7;
      if (wire === 0) out.push({ no, wire, value: this.varint() });
      else if (wire === 2) {
        const len = Number(this.varint());
        out.push({ no, wire, value: this.buf.subarray(this.pos, this.pos + len) });
        this.pos += len;
      } else if (wire === 1) {
        out.push({ no, wire, value: this.buf.subarray(this.pos, this.pos + 8) });
        this.pos += 8;
      } else if (wire === 5) {
        out.push({ no, wire, value: this.buf.subarray(this.pos, this.pos + 4) });
        this.pos += 4;
      } else throw new Error(`unsupported wire type ${wire}`);
    }
    return out;
  }
}

const fieldsOf = (buf: Buffer): Field[] => new Reader(buf).fields();
const str = (f: Field): string => (f.value as Buffer).toString('utf8');
const num = (f: Field): number => Number(f.value);

function mapEntry(buf: Buffer, bytes: boolean): [string, string] {
  let key = '';
  let value = '';
  for (const f of fieldsOf(buf)) {
    if (f.no === 1) key = str(f);
    if (f.no === 2) value = bytes ? (f.value as Buffer).toString('base64') : str(f);
  }
  return [key, value];
}

function addEntry(target: Record<string, unknown>, field: string, buf: Buffer, bytes = false): void {
  const [k, v] = mapEntry(buf, bytes);
  ((target[field] ??= {}) as Record<string, string>)[k] = v;
}

function time(buf: Buffer): string {
  let seconds = 0;
  for (const f of fieldsOf(buf)) if (f.no === 1) seconds = num(f);
  return new Date(seconds * 1000).toISOString().replace(/\.\d{3}Z$/, 'Z');
}

function ownerReference(buf: Buffer): Record<string, unknown> {
  const ref: Record<string, unknown> = {};
  const names: Record<number, string> = { 1: 'kind', 3: 'name', 4: 'uid', 5: 'apiVersion' };
  for (const f of fieldsOf(buf)) {
    if (names[f.no]) ref[names[f.no]] = str(f);
    if (f.no === 6) ref.controller = num(f) !== 0;
    if (f.no === 7) ref.blockOwnerDeletion = num(f) !== 0;
  }
  return ref;
}

function objectMeta(buf: Buffer): Record<string, unknown> {
  const meta: Record<string, unknown> = {};
  const strings: Record<number, string> = {
    1: 'name',
    2: 'generateName',
    3: 'namespace',
    5: 'uid',
    6: 'resourceVersion',
  };
  for (const f of fieldsOf(buf)) {
    if (strings[f.no]) meta[strings[f.no]] = str(f);
    else if (f.no === 7) meta.generation = num(f);
    else if (f.no === 8) meta.creationTimestamp = time(f.value as Buffer);
    else if (f.no === 11) addEntry(meta, 'labels', f.value as Buffer);
    else if (f.no === 12) addEntry(meta, 'annotations', f.value as Buffer);
    else if (f.no === 13)
      ((meta.ownerReferences ??= []) as unknown[]).push(ownerReference(f.value as Buffer));
    else if (f.no === 14) ((meta.finalizers ??= []) as string[]).push(str(f));
  }
  if (meta.resourceVersion === '') delete meta.resourceVersion;
  if (meta.uid === '') delete meta.uid;
  return meta;
}

function localObjectReference(buf: Buffer): Record<string, string> {
  const ref: Record<string, string> = {};
  for (const f of fieldsOf(buf)) if (f.no === 1) ref.name = str(f);
  return ref;
}

type Decoder = (fields: Field[], obj: Record<string, unknown>) => void;

const DECODERS: Record<string, Decoder> = {
  Namespace(fields, obj) {
    for (const f of fields) {
      if (f.no === 2) {
        const finalizers = fieldsOf(f.value as Buffer)
          .filter(x => x.no === 1)
          .map(str);
        obj.spec = finalizers.length ? { finalizers } : {};
      }
    }
  },
  Secret(fields, obj) {
    for (const f of fields) {
      if (f.no === 2) addEntry(obj, 'data', f.value as Buffer, true);
      else if (f.no === 3) obj.type = str(f);
      else if (f.no === 4) addEntry(obj, 'stringData', f.value as Buffer);
      else if (f.no === 5) obj.immutable = num(f) !== 0;
    }
  },
  ConfigMap(fields, obj) {
    for (const f of fields) {
      if (f.no === 2) addEntry(obj, 'data', f.value as Buffer);
      else if (f.no === 3) addEntry(obj, 'binaryData', f.value as Buffer, true);
      else if (f.no === 4) obj.immutable = num(f) !== 0;
    }
  },
  ServiceAccount(fields, obj) {
    for (const f of fields) {
      if (f.no === 3)
        ((obj.imagePullSecrets ??= []) as unknown[]).push(localObjectReference(f.value as Buffer));
      else if (f.no === 4) obj.automountServiceAccountToken = num(f) !== 0;
    }
  },
};

/** Decode a protobuf request body into JSON form; 415 for kinds this decoder does not know. */
export function decodeProtobuf(body: Buffer): Record<string, unknown> {
  const refuse = () => unsupportedMediaType(['application/json', 'application/yaml']);
  if (body.length < 4 || body.subarray(0, 4).toString('latin1') !== 'k8s\0') throw refuse();
  let apiVersion = '';
  let kind = '';
  let raw: Buffer | undefined;
  for (const f of fieldsOf(body.subarray(4))) {
    if (f.no === 1) {
      for (const t of fieldsOf(f.value as Buffer)) {
        if (t.no === 1) apiVersion = str(t);
        if (t.no === 2) kind = str(t);
      }
    } else if (f.no === 2) raw = f.value as Buffer;
  }
  const decode = apiVersion === 'v1' ? DECODERS[kind] : undefined;
  if (!decode || !raw) throw refuse();
  const fields = fieldsOf(raw);
  const obj: Record<string, unknown> = { apiVersion, kind, metadata: {} };
  for (const f of fields) if (f.no === 1) obj.metadata = objectMeta(f.value as Buffer);
  decode(fields, obj);
  return obj;
}
