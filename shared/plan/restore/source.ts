// Restore at first bootstrap, the decisions: what exactly the seed restores (a snapshotRef becomes
// the object and checksum its EtcdSnapshot recorded), whether anything stops it before a member is
// created (a snapshot not Complete, a missing Secret), and the Restored condition a person reads.
// Pure: cluster-observe gathers the facts, cluster-plan and cluster-status use the answers.
import type { RestoreSpec } from '../../api/common.ts';
import type { EtcdCluster } from '../../api/etcd-cluster.ts';
import type { EtcdMember } from '../../api/etcd-member.ts';
import type { EtcdSnapshot } from '../../api/etcd-snapshot.ts';
import type { ConditionInput } from '../../conditions.ts';
import type { RestoreResolution, RestoreFacts } from './types.ts';

export const RESTORED_CONDITION = 'Restored';

/** The S3 credentials Secret a restore needs, once the source is known (undefined: none). */
export function restoreSecretName(cluster: EtcdCluster, snapshot?: EtcdSnapshot | null): string | undefined {
  const source = cluster.spec.bootstrap?.restore?.source;
  if (source?.snapshotRef) return snapshot?.spec.destination.s3?.credentialsSecretRef.name;
  return source?.s3?.credentialsSecretRef.name;
}

export function resolveRestore(cluster: EtcdCluster, facts: RestoreFacts): RestoreResolution | undefined {
  const spec = cluster.spec.bootstrap?.restore;
  if (!spec) return undefined;
  const ns = cluster.metadata.namespace ?? '';
  let restore: RestoreSpec;
  if (spec.source.snapshotRef) {
    const name = spec.source.snapshotRef.name;
    const fromRef = fromSnapshot(name, ns, facts.snapshot, spec.source.sha256);
    if (fromRef.kind === 'blocked') return fromRef;
    restore = fromRef.restore;
  } else {
    restore = structuredClone(spec);
  }
  return (
    secretBlock(restore, ns, facts.secretKeys) ??
    claimBlock(restore, ns, facts.claimFound) ?? {
      kind: 'ready',
      restore,
      sourceName: sourceNameOf(restore),
    }
  );
}

/** Why the S3 source's credentials Secret stops a restore (missing, or lacking a key), if it does. */
export function secretBlock(
  restore: RestoreSpec,
  ns: string,
  keys: string[] | null | undefined,
): Extract<RestoreResolution, { kind: 'blocked' }> | undefined {
  const s3 = restore.source.s3;
  if (!s3) return undefined;
  const secret = s3.credentialsSecretRef.name;
  if (keys === null) {
    return {
      kind: 'blocked',
      reason: 'SecretNotFound',
      message: `the S3 credentials Secret ${ns}/${secret} does not exist; create it with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY (the restore starts once it exists)`,
    };
  }
  const missing = ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY'].filter(k => !keys?.includes(k));
  if (keys && missing.length > 0) {
    return {
      kind: 'blocked',
      reason: 'CredentialsMissing',
      message: `the Secret ${ns}/${secret} lacks ${missing.join(' and ')}; add ${missing.length > 1 ? 'them' : 'it'} (the restore starts once it has both)`,
    };
  }
  return undefined;
}

export function fromSnapshot(
  name: string,
  namespace: string,
  snapshot: EtcdSnapshot | null | undefined,
  userSha256: string | undefined,
): { kind: 'ready'; restore: RestoreSpec } | { kind: 'blocked'; reason: string; message: string } {
  if (!snapshot) {
    return {
      kind: 'blocked',
      reason: 'SnapshotNotFound',
      message: `EtcdSnapshot ${namespace}/${name} (source.snapshotRef) does not exist; name a Complete EtcdSnapshot in this namespace, or recreate the cluster with source.s3 or source.pvc`,
    };
  }
  const phase = snapshot.status?.phase ?? 'Pending';
  const artifact = snapshot.status?.artifact;
  if (phase !== 'Complete' || !artifact?.uri) {
    return {
      kind: 'blocked',
      reason: 'SnapshotNotComplete',
      message: `EtcdSnapshot ${name} is ${phase}, not Complete; the restore waits for it to complete${phase === 'Failed' ? ' (it failed: recreate the cluster from another snapshot)' : ''}`,
    };
  }
  const checksum = (artifact.checksum ?? '').replace(/^sha256:/, '');
  if (userSha256 && checksum && userSha256.toLowerCase() !== checksum.toLowerCase()) {
    return {
      kind: 'blocked',
      reason: 'ChecksumMismatch',
      message: `source.sha256 ${userSha256} differs from the checksum EtcdSnapshot ${name} recorded (${checksum}); remove source.sha256 or fix it`,
    };
  }
  const sha256 = checksum || userSha256;
  const uri = /^(s3|pvc):\/\/([^/]+)\/(.+)$/.exec(artifact.uri);
  const destination = snapshot.spec.destination;
  if (uri?.[1] === 's3' && destination.s3) {
    const s3 = { ...structuredClone(destination.s3), bucket: uri[2], key: uri[3] };
    return { kind: 'ready', restore: { source: { s3, ...(sha256 && { sha256 }) } } };
  }
  if (uri?.[1] === 'pvc') {
    return {
      kind: 'ready',
      restore: { source: { pvc: { claimName: uri[2], subPath: uri[3] }, ...(sha256 && { sha256 }) } },
    };
  }
  return {
    kind: 'blocked',
    reason: 'SnapshotNotFound',
    message: `EtcdSnapshot ${name} recorded ${artifact.uri}, which this operator cannot read back`,
  };
}

/**
 * Once the seed member exists, what it restores is what was resolved when it was created (its
 * spec.restore: the exact object and checksum): the source is not looked up again, so a
 * snapshotRef deleted afterwards neither blocks nor misreports a restore already under way (the
 * seed's own fetch then says whether the object is still there).
 */
export function seedResolution(members: readonly EtcdMember[]): RestoreResolution | undefined {
  const seed = members.find(
    m => m.spec.bootstrap === true && m.spec.restore && !m.metadata.deletionTimestamp,
  );
  const restore = seed?.spec.restore;
  return restore ? { kind: 'ready', restore, sourceName: sourceNameOf(restore) } : undefined;
}

export function sourceNameOf(restore: RestoreSpec): string {
  const { s3, pvc, snapshotRef } = restore.source;
  if (s3) return `s3://${s3.bucket}/${s3.key ?? ''}`;
  if (pvc) return `pvc://${pvc.claimName}/${pvc.subPath ?? ''}`;
  return snapshotRef ? `EtcdSnapshot ${snapshotRef.name}` : '';
}

export interface RestoreConditionInput {
  cluster: EtcdCluster;
  clusterID?: string;
  resolution?: RestoreResolution;
  /** the seed Pod's last failed restore step, parsed (see shared/restore/layout.ts) */
  seedFailure?: { reason: string; message: string };
  /** How many initial members restore (more than one in a static restore from S3); 1 if absent. */
  restoringMembers?: number;
  /** the member whose Pod failed, in a static restore */
  failedMember?: string;
  /** the Restored condition as it stands */
  current?: { status: string };
}

/** The Restored condition; undefined for a cluster that does not restore. */
export function restoreCondition(input: RestoreConditionInput): ConditionInput | undefined {
  const spec = input.cluster.spec.bootstrap?.restore;
  if (!spec) return undefined;
  const what = input.resolution?.kind === 'ready' ? input.resolution.sourceName : sourceNameOf(spec);
  if (input.clusterID || input.current?.status === 'True') {
    return {
      type: RESTORED_CONDITION,
      status: 'True',
      reason: 'Restored',
      message: `the cluster was restored from ${what}`,
    };
  }
  if (input.resolution?.kind === 'blocked') {
    return {
      type: RESTORED_CONDITION,
      status: 'False',
      reason: input.resolution.reason,
      message: input.resolution.message,
    };
  }
  const several = (input.restoringMembers ?? 1) > 1;
  if (input.seedFailure) {
    const pod = several && input.failedMember ? `the Pod of ${input.failedMember}` : 'the seed Pod';
    const startOver =
      input.seedFailure.reason === 'RestoreFailed'
        ? `; after a failure of the etcd restore step itself, delete ${pod} to start over`
        : '';
    return {
      type: RESTORED_CONDITION,
      status: 'False',
      reason: input.seedFailure.reason,
      message: `restoring ${what} failed: ${input.seedFailure.message}; no member runs until it succeeds (it is retried with back-off${startOver})`,
    };
  }
  return {
    type: RESTORED_CONDITION,
    status: 'Unknown',
    reason: 'Restoring',
    message: several
      ? `restoring ${what} into each of the ${input.restoringMembers} initial members`
      : `restoring ${what} into the seed member`,
  };
}

/** The claim a PVC source reads from, once the source is known (undefined: not a PVC source). */
export function restoreClaimName(
  source: RestoreSpec['source'] | undefined,
  snapshot?: EtcdSnapshot | null,
): string | undefined {
  if (source?.snapshotRef) return snapshot?.spec.destination.pvc?.claimName;
  return source?.pvc?.claimName;
}

/**
 * Why a PVC source stops a restore: its claim does not exist. Known before any member is created
 * (or, in place, before the running members are stopped), rather than a seed Pod that never starts.
 */
export function claimBlock(
  restore: RestoreSpec,
  ns: string,
  claimFound: boolean | undefined,
): Extract<RestoreResolution, { kind: 'blocked' }> | undefined {
  const pvc = restore.source.pvc;
  if (!pvc || claimFound !== false) return undefined;
  return {
    kind: 'blocked',
    reason: 'ClaimNotFound',
    message: `the PersistentVolumeClaim ${ns}/${pvc.claimName} holding ${sourceNameOf(restore)} does not exist; create it (or fix the claim name) and the restore starts at the next reconcile`,
  };
}
