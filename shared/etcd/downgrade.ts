// etcd's own downgrade procedure (etcd 3.6+ docs, "Downgrading etcd clusters"): `downgrade validate`
// and `downgrade enable <target>` through the Maintenance API; etcd then sets the cluster version
// to the target minor and each member rewrites its storage in the target's format (its storage
// version), after which members can run the older release one at a time. When every member runs
// it, etcd ends the downgrade by itself.
//
// etcd3 for Node decodes StatusResponse with a proto older than 3.6 (no storageVersion, no
// downgradeInfo), so the storage state is read from the raw reply: StatusResponse field 11
// (storageVersion) and field 13 (DowngradeInfo: 1 enabled, 2 targetVersion), as etcd's rpc.proto
// numbers them (checked against etcd 3.7.3's `etcdctl endpoint status -w json`), and the member's
// ID from the header (field 1, ResponseHeader field 2).
import type { Etcd3 } from 'etcd3';
import { callEndpoint, callFailure, callFirstAvailable, type EtcdConnectionOptions } from './connection.ts';
import type { CallFailure } from './errors.ts';

export interface StorageState {
  /** The answering member's etcd ID (hex), from the reply's header. */
  memberId: string;
  /** e.g. "3.7.0"; empty before etcd 3.6 (no storage version) or before etcd records one. */
  storageVersion: string;
  downgradeEnabled: boolean;
  /** e.g. "3.6.0" while a downgrade is enabled. */
  downgradeTarget: string;
}

export type StorageStateResult = { kind: 'ok'; state: StorageState } | CallFailure;
export type EnableDowngradeResult = { kind: 'ok'; alreadyEnabled: boolean } | CallFailure;

/** The storage version and downgrade state of the member behind one endpoint. */
export async function storageState(
  endpoint: string,
  options: EtcdConnectionOptions = {},
): Promise<StorageStateResult> {
  const result = await callEndpoint(endpoint, options, rawStatus);
  if (result.kind !== 'ok') return callFailure(result);
  return { kind: 'ok', state: decodeStorageState(result.value) };
}

/**
 * `downgrade validate` then `downgrade enable` to `version` (MAJOR.MINOR.PATCH; etcd uses its
 * minor). Safe to repeat: a downgrade already enabled answers "cluster has a downgrade job in
 * progress", taken as done.
 */
export async function enableDowngrade(
  endpoints: readonly string[],
  version: string,
  options: EtcdConnectionOptions = {},
): Promise<EnableDowngradeResult> {
  const target = version.split('.').slice(0, 2).join('.');
  const call = (action: 'Validate' | 'Enable') =>
    callFirstAvailable(endpoints, options, client =>
      client.maintenance.downgrade({ action, version: target }),
    );
  for (const action of ['Validate', 'Enable'] as const) {
    const result = await call(action);
    if (result.kind === 'ok') continue;
    if (/downgrade job in progress/.test(result.message)) return { kind: 'ok', alreadyEnabled: true };
    return callFailure(result);
  }
  return { kind: 'ok', alreadyEnabled: false };
}

interface RawClient {
  makeUnaryRequest(
    method: string,
    serialize: (req: unknown) => Buffer,
    deserialize: (bytes: Buffer) => Buffer,
    argument: unknown,
    metadata: unknown,
    options: object,
    callback: (err: Error | null, value?: Buffer) => void,
  ): unknown;
}

interface PoolWithConnection {
  withConnection<T>(
    service: 'Maintenance',
    fn: (args: { client: RawClient; metadata: unknown }) => Promise<T>,
  ): Promise<T>;
}

/** Maintenance.Status, its reply left undecoded (through etcd3's pool: its TLS and auth token). */
function rawStatus(client: Etcd3): Promise<Buffer> {
  const pool = (client as unknown as { pool: PoolWithConnection }).pool;
  return pool.withConnection('Maintenance', ({ client: service, metadata }) => {
    return new Promise<Buffer>((resolve, reject) => {
      service.makeUnaryRequest(
        '/etcdserverpb.Maintenance/Status',
        () => Buffer.alloc(0),
        bytes => bytes,
        {},
        metadata,
        {},
        (err, value) => (err ? reject(err) : resolve(value ?? Buffer.alloc(0))),
      );
    });
  });
}

/** StatusResponse fields 11 and 13 from its wire bytes; other fields are skipped. */
export function decodeStorageState(bytes: Buffer): StorageState {
  const state: StorageState = {
    memberId: '',
    storageVersion: '',
    downgradeEnabled: false,
    downgradeTarget: '',
  };
  for (const { field, value } of fields(bytes)) {
    if (field === 1 && Buffer.isBuffer(value)) {
      for (const inner of fields(value)) {
        if (inner.field === 2 && typeof inner.value === 'bigint')
          state.memberId = inner.value.toString(16).padStart(16, '0');
      }
    }
    if (field === 11 && Buffer.isBuffer(value)) state.storageVersion = value.toString('utf8');
    if (field === 13 && Buffer.isBuffer(value)) {
      for (const inner of fields(value)) {
        if (inner.field === 1 && typeof inner.value === 'bigint') state.downgradeEnabled = inner.value !== 0n;
        if (inner.field === 2 && Buffer.isBuffer(inner.value))
          state.downgradeTarget = inner.value.toString('utf8');
      }
    }
  }
  return state;
}

/** Protobuf wire format: varints (type 0), length-delimited (type 2), fixed 64/32 (types 1, 5). */
function* fields(bytes: Buffer): Generator<{ field: number; value: bigint | Buffer }> {
  let at = 0;
  const varint = (): bigint => {
    let result = 0n;
    for (let shift = 0n; ; shift += 7n) {
      if (at >= bytes.length) throw new Error('truncated protobuf varint');
      const b = bytes[at++];
      result |= BigInt(b & 0x7f) << shift;
      if ((b & 0x80) === 0) return result;
    }
  };
  while (at < bytes.length) {
    const key = varint();
    const field = Number(key >> 3n);
    const type = Number(key & 7n);
    if (type === 0) yield { field, value: varint() };
    else if (type === 2) {
      const length = Number(varint());
      yield { field, value: bytes.subarray(at, at + length) };
      at += length;
    } else if (type === 1) at += 8;
    else if (type === 5) at += 4;
    else throw new Error(`unsupported protobuf wire type ${type}`);
  }
}
