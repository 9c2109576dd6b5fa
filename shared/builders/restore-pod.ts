// The init containers and volumes that build a restoring seed's data directory before etcd starts
// (member.spec.restore, resolved by the cluster controller to an exact S3 object or PVC file):
//   1. restore-fetch  (the operator's image): fetch + verify the snapshot into the data volume;
//   2. restore        (the member's own etcd image): `etcdutl snapshot restore` (3.5+) or
//                     `etcdctl snapshot restore` (3.4) under the new cluster's token;
//   3. restore-commit (the operator's image): move the data into place, write the marker last.
// The marker (shared/restore/layout.ts) makes a restarted or recreated Pod restore nothing again.
import { ALLOWED_ENDPOINTS_ENV, DENIED_RANGES_ENV } from '../s3/endpoint-policy.ts';
import type { V1Container, V1EnvVar, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { EtcdMember } from '../api/etcd-member.ts';
import {
  COMMIT_CONTAINER,
  FETCH_CONTAINER,
  POD_RESTORE_PATHS,
  RESTORE_CONTAINER,
  RESTORE_SOURCE_MOUNT,
} from '../restore/layout.ts';
import { ACCESS_KEY_ID, s3Uri, SECRET_ACCESS_KEY } from '../s3/location.ts';
import { etcdMinor } from './etcd-flags.ts';
import { DATA_DIR } from '../names.ts';

export const DEFAULT_OPERATOR_IMAGE = 'ghcr.io/etcdfn/etcdfn:0.1.0';
/** The agent's entry point in the operator's image. */
export const AGENT_COMMAND = 'etcdfn-agent';
const SOURCE_VOLUME = 'restore-source';

export interface RestoreContainerOptions {
  operatorImage: string;
  etcdImage: string;
  /** --initial-advertise-peer-urls of the member (the restore writes it into the new membership) */
  peerURL: string;
  securityContext: V1Container['securityContext'];
  resources: V1Container['resources'];
  /** The operator's S3 endpoint allow-list setting, so the fetch step follows the same policy. */
  s3AllowedEndpoints?: string;
  /** The operator's denied address ranges (the Pod and Service CIDRs), for the same policy. */
  s3DeniedRanges?: string;
}

/** Where the snapshot comes from, as the user reads it (s3://bucket/key or pvc://claim/path). */
export function restoreSourceName(member: EtcdMember): string {
  const source = member.spec.restore?.source;
  if (source?.s3) return s3Uri(source.s3.bucket, source.s3.key ?? '');
  if (source?.pvc) return `pvc://${source.pvc.claimName}/${source.pvc.subPath ?? ''}`;
  return '';
}

export function restoreInitContainers(member: EtcdMember, opts: RestoreContainerOptions): V1Container[] {
  // Over 80 lines: mostly the init containers' spec, written out as the Pod will carry it.
  const restore = member.spec.restore;
  if (!restore) return [];
  const source = restore.source;
  if (!source.s3 && !source.pvc) {
    throw new Error(
      `EtcdMember ${member.metadata.name}: spec.restore.source names no S3 object or PVC file (a snapshotRef is resolved by the cluster controller before the member is created)`,
    );
  }
  const name = member.metadata.name ?? '';
  const sourceName = restoreSourceName(member);
  const data: V1VolumeMount = { name: 'data', mountPath: DATA_DIR };
  const common = {
    resources: opts.resources,
    securityContext: opts.securityContext,
    terminationMessagePolicy: 'FallbackToLogsOnError',
  };
  const fetchArgs = [
    'restore-fetch',
    `--data-dir=${DATA_DIR}`,
    `--etcd-version=${member.spec.version}`,
    `--source-name=${sourceName}`,
    ...(source.sha256 ? [`--sha256=${source.sha256.replace(/^sha256:/, '')}`] : []),
  ];
  const env: V1EnvVar[] = [];
  const mounts = [data];
  if (source.s3) {
    const s3 = source.s3;
    if (opts.s3AllowedEndpoints) env.push({ name: ALLOWED_ENDPOINTS_ENV, value: opts.s3AllowedEndpoints });
    if (opts.s3DeniedRanges) env.push({ name: DENIED_RANGES_ENV, value: opts.s3DeniedRanges });
    fetchArgs.push(
      `--s3-endpoint=${s3.endpoint}`,
      `--s3-bucket=${s3.bucket}`,
      `--s3-key=${s3.key ?? ''}`,
      `--s3-secret=${s3.credentialsSecretRef.name}`,
      ...(s3.region ? [`--s3-region=${s3.region}`] : []),
      ...(s3.forcePathStyle !== undefined ? [`--s3-path-style=${String(s3.forcePathStyle)}`] : []),
    );
    // Optional: a missing Secret is reported by the agent as a restore failure with its fix,
    // instead of a Pod stuck in CreateContainerConfigError.
    for (const key of [ACCESS_KEY_ID, SECRET_ACCESS_KEY]) {
      env.push({
        name: key,
        valueFrom: { secretKeyRef: { name: s3.credentialsSecretRef.name, key, optional: true } },
      });
    }
  } else if (source.pvc) {
    fetchArgs.push(
      `--source-mount=${RESTORE_SOURCE_MOUNT}`,
      `--source-file=${RESTORE_SOURCE_MOUNT}/${source.pvc.subPath ?? ''}`,
    );
    mounts.push({ name: SOURCE_VOLUME, mountPath: RESTORE_SOURCE_MOUNT, readOnly: true });
  }
  const minor = etcdMinor(member.spec.version);
  const tool = minor === '3.4' ? 'etcdctl' : 'etcdutl';
  return [
    {
      name: FETCH_CONTAINER,
      image: opts.operatorImage,
      command: [AGENT_COMMAND],
      args: fetchArgs,
      ...(env.length > 0 && { env }),
      volumeMounts: mounts,
      ...common,
    },
    {
      name: RESTORE_CONTAINER,
      image: opts.etcdImage,
      command: [
        tool,
        'snapshot',
        'restore',
        POD_RESTORE_PATHS.snapshotFile,
        `--data-dir=${POD_RESTORE_PATHS.restoredDir}`,
        `--name=${name}`,
        `--initial-cluster=${member.spec.initialCluster}`,
        `--initial-cluster-token=${member.spec.clusterToken}`,
        `--initial-advertise-peer-urls=${opts.peerURL}`,
      ],
      ...(minor === '3.4' && { env: [{ name: 'ETCDCTL_API', value: '3' }] }),
      volumeMounts: [data],
      ...common,
    },
    {
      name: COMMIT_CONTAINER,
      image: opts.operatorImage,
      command: [AGENT_COMMAND],
      args: ['restore-commit', `--data-dir=${DATA_DIR}`, `--source-name=${sourceName}`],
      volumeMounts: [data],
      ...common,
    },
  ];
}

/** The PVC a restore reads its file from (read-only), if the source is a PVC. */
export function restoreVolumes(member: EtcdMember): V1Volume[] {
  const pvc = member.spec.restore?.source.pvc;
  if (!pvc) return [];
  return [{ name: SOURCE_VOLUME, persistentVolumeClaim: { claimName: pvc.claimName, readOnly: true } }];
}
