// Which snapshot a quorum-loss recovery by restore would use (spec.recovery.policy
// RestoreLatestSnapshot; shared/plan/recovery/restore-latest.ts decides when): the newest EtcdSnapshot
// of this cluster (same namespace, spec.clusterRef this cluster, created after it, Complete and
// Verified True), by completion time: revisions restart their meaning after an earlier restore, times
// do not. Resolved as an in-place request's snapshot is (the object and checksum it recorded, its
// Secret or claim present). Pure: shared/reconcile/cluster-observe-recovery.ts gathers the facts.
import type { EtcdCluster } from '../../api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../../api/etcd-snapshot.ts';
import { isDeleting } from '../cluster/members.ts';
import { claimBlock, fromSnapshot, secretBlock, sourceNameOf } from '../restore/source.ts';
import { isVerified } from '../schedule/plan.ts';
import type { RecoveryCandidate, RecoverySnapshot, RecoveryFacts } from './types.ts';

export const RESTORE_POLICY = 'RestoreLatestSnapshot';
/** Quorum lost because too many members lost their data: it cannot come back on its own. */
export const GRACE_DATA_LOST_MS = 30_000;
/** Quorum lost with members down but their data kept: they may still come back. */
export const GRACE_MEMBERS_DOWN_MS = 300_000;

export const restorePolicyOn = (cluster: EtcdCluster): boolean =>
  cluster.spec.recovery?.policy === RESTORE_POLICY;

const timeOf = (t: unknown): number => (t ? new Date(t as string).getTime() : NaN);

/** The cluster's own snapshots (by clusterRef, created after the cluster), verified only. */
function snapshotsOf(cluster: EtcdCluster, snapshots: readonly EtcdSnapshot[]): EtcdSnapshot[] {
  const born = timeOf(cluster.metadata.creationTimestamp);
  return snapshots.filter(
    s =>
      s.metadata.namespace === cluster.metadata.namespace &&
      s.spec.clusterRef.name === cluster.metadata.name &&
      !(timeOf(s.metadata.creationTimestamp) < born),
  );
}

/** The newest verified snapshot of this cluster, by completion time (then revision, then name). */
export function latestVerifiedSnapshot(
  cluster: EtcdCluster,
  snapshots: readonly EtcdSnapshot[],
): EtcdSnapshot | undefined {
  const verified = snapshotsOf(cluster, snapshots).filter(s => isVerified(s) && !isDeleting(s));
  const key = (s: EtcdSnapshot) => timeOf(s.status?.completionTime) || 0;
  return verified.sort(
    (a, b) =>
      key(b) - key(a) ||
      (b.status?.artifact?.revision ?? 0) - (a.status?.artifact?.revision ?? 0) ||
      (b.metadata.name ?? '').localeCompare(a.metadata.name ?? ''),
  )[0];
}

export function resolveRecovery(cluster: EtcdCluster, facts: RecoveryFacts): RecoverySnapshot {
  const chosen = latestVerifiedSnapshot(cluster, facts.snapshots);
  if (!chosen) return { kind: 'none', considered: snapshotsOf(cluster, facts.snapshots).length };
  const ns = cluster.metadata.namespace ?? '';
  const name = chosen.metadata.name ?? '';
  const artifact = chosen.status?.artifact;
  const snapshot: RecoveryCandidate = {
    name,
    ...(artifact?.revision !== undefined && { revision: artifact.revision }),
    ...(chosen.status?.completionTime && { takenAt: chosen.status.completionTime }),
  };
  const resolved = fromSnapshot(name, ns, chosen, undefined);
  if (resolved.kind === 'blocked')
    return { kind: 'blocked', snapshot, reason: resolved.reason, message: resolved.message };
  const blocked =
    secretBlock(resolved.restore, ns, facts.secretKeys) ?? claimBlock(resolved.restore, ns, facts.claimFound);
  if (blocked) return { kind: 'blocked', snapshot, reason: blocked.reason, message: blocked.message };
  return {
    kind: 'ready',
    snapshot,
    restore: resolved.restore,
    sourceName: `EtcdSnapshot ${name} (${sourceNameOf(resolved.restore)})`,
  };
}
