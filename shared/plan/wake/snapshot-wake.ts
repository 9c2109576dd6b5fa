// A snapshot's wake-up (shared/plan/wake/wake.ts): while an EtcdSnapshot is neither Complete nor Failed
// (waiting for its cluster or a ready member, retrying 30 s after a failed attempt, or left Started
// by a crash), its PingSource `etcdfn-wake-<name>` fires every minute for run-snapshot.
import type { EtcdSnapshot } from '../../api/etcd-snapshot.ts';
import type { KubeObject } from '../../k8s/objects.ts';
import { boundedName, type PingSink, type PingSource } from '../../builders/ping-source.ts';
import { isFinished } from '../snapshot/plan.ts';
import { wakePingSource, wokenObject } from './wake.ts';

const DATA_KEY = 'etcdSnapshot';

export const wakeName = (snapshotName: string): string => boundedName('etcdfn-wake-', snapshotName);

/** The PingSource the snapshot should have: one while it is unfinished and not being deleted. */
export function desiredWake(snapshot: EtcdSnapshot & KubeObject, sink: PingSink): PingSource | undefined {
  if (isFinished(snapshot) || snapshot.metadata.deletionTimestamp) return undefined;
  const name = wakeName(snapshot.metadata.name ?? '');
  return wakePingSource(snapshot, name, DATA_KEY, snapshot.spec.clusterRef.name, sink);
}

/** The snapshot a tick's data names, when the tick came from a snapshot's wake-up. */
export const snapshotOfWake = (data: unknown) => wokenObject(data, DATA_KEY);
