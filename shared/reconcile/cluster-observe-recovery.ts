// The I/O of the recovery by restore (shared/plan/recovery/restore-latest-snapshot.ts decides): while a cluster with
// spec.recovery.policy RestoreLatestSnapshot looks as if it lost quorum, list its namespace's
// EtcdSnapshots and, for the newest verified one of this cluster, read whether its S3 Secret or claim
// is there. Nothing is read for any other cluster, nor while quorum holds.
import type { V1Secret } from '@kubernetes/client-node';
import type { EtcdSnapshot } from '../api/etcd-snapshot.ts';
import { API_VERSION, ETCD_SNAPSHOT } from '../api/group.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { secretValues } from '../k8s/secrets.ts';
import { quorumLoss } from '../plan/recovery/quorum-loss.ts';
import type { ClusterState } from '../plan/cluster/types.ts';
import {
  latestVerifiedSnapshot,
  resolveRecovery,
  restorePolicyOn,
} from '../plan/recovery/restore-latest-snapshot.ts';
import type { Context } from '../runtime/context.ts';
import type { RecoveryFacts, RecoverySnapshot } from '../plan/recovery/types.ts';

export async function observeRecoverySnapshot(
  ctx: Context,
  state: ClusterState,
): Promise<RecoverySnapshot | undefined> {
  const cluster = state.cluster;
  if (!restorePolicyOn(cluster) || !quorumLoss(state)) return undefined;
  const namespace = cluster.metadata.namespace ?? '';
  const snapshots = await ctx.kube.list<EtcdSnapshot & KubeObject>(
    API_VERSION,
    ETCD_SNAPSHOT.kind,
    namespace,
  );
  const facts: RecoveryFacts = { snapshots };
  const chosen = latestVerifiedSnapshot(cluster, snapshots);
  const secretName = chosen?.spec.destination.s3?.credentialsSecretRef.name;
  if (secretName) {
    const secret = await ctx.kube.find<V1Secret & KubeObject>({
      apiVersion: 'v1',
      kind: 'Secret',
      namespace,
      name: secretName,
    });
    facts.secretKeys = secret ? Object.keys(secretValues(secret)) : null;
  }
  const claimName = chosen?.spec.destination.pvc?.claimName;
  if (claimName) {
    const claim = await ctx.kube.find<KubeObject>({
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      namespace,
      name: claimName,
    });
    facts.claimFound = claim !== undefined;
  }
  return resolveRecovery(cluster, facts);
}
