// Streaming a snapshot of one member's backend. The bytes are passed on verbatim: the stream ends
// with etcd's integrity hash, which `etcdutl snapshot restore` checks.
import { Readable } from 'node:stream';
import type { Etcd3, ISnapshotResponse } from 'etcd3';
import { classifyEtcdError } from './errors.ts';
import type { CallFailure } from './errors.ts';
import { DEFAULT_TIMEOUT_MS, callFailure, createClient, withTimeout } from './connection.ts';
import type { EtcdConnectionOptions } from './connection.ts';

export type SnapshotResult =
  | {
      kind: 'ok';
      endpoint: string;
      stream: Readable;
      /**
       * The member's revision just before the snapshot was opened. etcd 3.5 sends no header with
       * snapshot chunks; the snapshot holds every change up to at least this revision.
       */
      revision: number;
    }
  | CallFailure;

/**
 * Opens a snapshot stream from the member behind `endpoint` (prefer a healthy follower: it spares
 * the leader). Resolves once the first chunk has arrived, so a member that cannot serve it (down,
 * a learner) is a typed failure rather than a stream error. The stream then yields Buffers; it
 * errors if etcd fails mid-way or sends nothing for `timeoutMs`. Consume it to the end or destroy
 * it: either closes the connection.
 */
export async function snapshot(
  endpoint: string,
  options: EtcdConnectionOptions = {},
): Promise<SnapshotResult> {
  const idleMs = options.timeoutMs ?? DEFAULT_TIMEOUT_MS;
  const client = createClient(endpoint, options);
  let source: AsyncIterator<ISnapshotResponse>;
  let cancel: () => void;
  let first: IteratorResult<ISnapshotResponse>;
  let revision: number;
  try {
    const status = await withTimeout(client.maintenance.status(), idleMs, endpoint);
    revision = Number(status.header.revision);
    const grpcStream = await withTimeout(openSnapshotStream(client), idleMs, endpoint);
    const readable = grpcStream as AsyncIterable<ISnapshotResponse> & { cancel?: () => void };
    cancel = () => readable.cancel?.();
    source = readable[Symbol.asyncIterator]();
    first = await withTimeout(source.next(), idleMs, endpoint);
  } catch (err) {
    client.close();
    return callFailure(classifyEtcdError(err));
  }
  async function* chunks(): AsyncGenerator<Buffer> {
    let next = first;
    try {
      while (!next.done) {
        yield next.value.blob;
        next = await withTimeout(source.next(), idleMs, endpoint);
      }
    } catch (err) {
      throw new Error(`snapshot from ${endpoint} failed: ${classifyEtcdError(err).message}`, { cause: err });
    } finally {
      if (!next.done) cancel();
      client.close();
    }
  }
  return { kind: 'ok', endpoint, stream: Readable.from(chunks(), { objectMode: false }), revision };
}

interface PoolWithConnection {
  withConnection<T>(
    service: 'Maintenance',
    fn: (args: {
      client: { snapshot(req: object, metadata: unknown, options: object): T };
      metadata: unknown;
    }) => T,
  ): Promise<T>;
}

/**
 * etcd3's `maintenance.snapshot()` hands grpc-js its arguments one place off (metadata where the
 * request goes), so the auth token never reaches etcd and a cluster with auth on answers "user
 * name is empty". This opens the same stream through etcd3's pool with the arguments in order.
 */
function openSnapshotStream(client: Etcd3): Promise<unknown> {
  const pool = (client as unknown as { pool: PoolWithConnection }).pool;
  return pool.withConnection('Maintenance', ({ client: service, metadata }) =>
    service.snapshot({}, metadata, {}),
  );
}
