// The Job that takes a snapshot to a PVC: one Pod that mounts the claim and runs the operator
// image's agent (`snapshot-save`, shared/snapshot-file/save.ts), so no function mounts a volume and
// a long copy is not cut by a function's request limit. One Job per attempt: its name carries the
// attempt's claim time, so a retried invocation finds (not duplicates) the Job of its attempt.
import type { V1Job, V1ResourceRequirements, V1Volume, V1VolumeMount } from '@kubernetes/client-node';
import type { EtcdSnapshot } from '../api/etcd-snapshot.ts';
import { CLIENT_LABEL, CLUSTER_LABEL, ROOT_USER } from '../names.ts';
import {
  DELETE_CONTAINER,
  SAVE_CONTAINER,
  SNAPSHOT_MOUNT,
  snapshotFileName,
} from '../snapshot-file/result.ts';
import { controllerRef } from './owner.ts';
import { containerSecurityContext, podSecurityContext } from './pod.ts';
import { AGENT_COMMAND } from './restore-pod.ts';

/** On the Job and its Pod: the EtcdSnapshot's UID (names may be longer than a label value). */
export const SNAPSHOT_UID_LABEL = 'etcdfn.io/snapshot-uid';
/** A finished Job is kept this long if run-snapshot never gets to delete it. */
export const JOB_TTL_SECONDS = 3600;
const TERMINATION_LOG = '/dev/termination-log';

/** Where the save Job mounts the cluster's CA (ca/) and the operator's client certificate (client/). */
export const AGENT_TLS_DIR = '/etc/etcdfn/etcd-tls';

/** Where the save Job mounts the operator's applied copy of root's password (auth clusters). */
export const AGENT_AUTH_DIR = '/etc/etcdfn/etcd-auth';

/** A Secret volume of only `keys`, readable by the Pod's group alone. */
const secretOnly = (name: string, keys: string[]) => ({
  secretName: name,
  defaultMode: 0o440,
  items: keys.map(key => ({ key, path: key })),
});

/** Only the keys the agent reads, so a server Secret's private key never reaches the Job. */
function tlsVolumes(tls: SnapshotJobOptions['tls']): {
  volumes: V1Volume[];
  volumeMounts: V1VolumeMount[];
} {
  if (!tls) return { volumes: [], volumeMounts: [] };
  const volumes: V1Volume[] = [{ name: 'etcd-ca', secret: secretOnly(tls.serverSecret, ['ca.crt']) }];
  const volumeMounts: V1VolumeMount[] = [
    { name: 'etcd-ca', mountPath: `${AGENT_TLS_DIR}/ca`, readOnly: true },
  ];
  if (tls.operatorClientSecret) {
    volumes.push({
      name: 'etcd-client',
      secret: secretOnly(tls.operatorClientSecret, ['tls.crt', 'tls.key']),
    });
    volumeMounts.push({ name: 'etcd-client', mountPath: `${AGENT_TLS_DIR}/client`, readOnly: true });
  }
  return { volumes, volumeMounts };
}

/**
 * The applied-root Secret's `password` key only (not its username or anything added later), as a
 * file: never an env var or an argument, which `kubectl describe` and process lists show.
 */
function authVolumes(auth: SnapshotJobOptions['auth']): {
  volumes: V1Volume[];
  volumeMounts: V1VolumeMount[];
} {
  if (!auth) return { volumes: [], volumeMounts: [] };
  return {
    volumes: [{ name: 'etcd-root', secret: secretOnly(auth.rootSecret, ['password']) }],
    volumeMounts: [{ name: 'etcd-root', mountPath: AGENT_AUTH_DIR, readOnly: true }],
  };
}

/** The Job of the attempt claimed at `startTime`: `<name>-<uid8>-<claim time, base 36>`. */
export function snapshotJobName(snapshot: Pick<EtcdSnapshot, 'metadata'>, startTime: string): string {
  const uid8 = (snapshot.metadata.uid ?? '').slice(0, 8);
  const seconds = Math.floor(new Date(startTime).getTime() / 1000);
  const stamp = Number.isFinite(seconds) ? seconds.toString(36) : '0';
  const base = (snapshot.metadata.name ?? '').slice(0, 63 - uid8.length - stamp.length - 2);
  return `${base.replace(/[.-]+$/, '')}-${uid8}-${stamp}`;
}

export interface SnapshotJobOptions {
  operatorImage: string;
  /** The claim's path of the directory the file goes to ('' = the claim's root). */
  subPath: string;
  /** The attempt's claim time (status.startTime). */
  startTime: string;
  /** Members to stream from, in order of preference. */
  sources: { member: string; endpoint: string }[];
  /** The cluster's client TLS Secrets (shared/tls/secret-names.ts): the agent dials with them. */
  tls?: { serverSecret: string; operatorClientSecret?: string };
  /** Auth on: the Secret with the password etcd has for root (shared/etcd/root-access.ts). */
  auth?: { rootSecret: string };
  /** The Job fails (DeadlineExceeded) after this long. */
  activeDeadlineSeconds: number;
}

export function snapshotJob(snapshot: EtcdSnapshot, opts: SnapshotJobOptions): V1Job {
  const owner = { name: snapshot.metadata.name ?? '', uid: snapshot.metadata.uid ?? '' };
  const dir = opts.subPath ? `${SNAPSHOT_MOUNT}/${opts.subPath}` : SNAPSHOT_MOUNT;
  const file = snapshotFileName(owner);
  const tls = tlsVolumes(opts.tls);
  const auth = authVolumes(opts.auth);
  return agentJob(snapshot, {
    name: snapshotJobName(snapshot, opts.startTime),
    container: SAVE_CONTAINER,
    operatorImage: opts.operatorImage,
    activeDeadlineSeconds: opts.activeDeadlineSeconds,
    args: [
      'snapshot-save',
      `--mount=${SNAPSHOT_MOUNT}`,
      `--dir=${dir}`,
      `--file=${file}`,
      `--recorded-path=${opts.subPath ? `${opts.subPath}/${file}` : file}`,
      `--owner-uid=${owner.uid}`,
      // Named, not defaulted, so a runtime that maps the path (the sandbox) sees it.
      `--termination-log=${TERMINATION_LOG}`,
      ...opts.sources.map(s => `--source=${s.member}=${s.endpoint}`),
      ...(opts.tls ? [`--tls-ca=${AGENT_TLS_DIR}/ca/ca.crt`] : []),
      ...(opts.tls?.operatorClientSecret
        ? [`--tls-cert=${AGENT_TLS_DIR}/client/tls.crt`, `--tls-key=${AGENT_TLS_DIR}/client/tls.key`]
        : []),
      ...(opts.auth ? [`--auth-user=${ROOT_USER}`, `--auth-password-file=${AGENT_AUTH_DIR}/password`] : []),
    ],
    volumes: [...tls.volumes, ...auth.volumes],
    volumeMounts: [...tls.volumeMounts, ...auth.volumeMounts],
    resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '256Mi' } },
    // It dials the members' client port: the cluster's NetworkPolicy admits the cluster's clients.
    podLabels: { [CLIENT_LABEL]: snapshot.spec.clusterRef.name },
  });
}

/**
 * A Job of the snapshot's that runs one agent step in one Pod mounting its claim at SNAPSHOT_MOUNT:
 * owned by the snapshot, labelled with its cluster and UID, one attempt (run-snapshot decides about
 * retries), gone an hour after it finished, non-root, no API token, its report in the termination
 * message.
 */
function agentJob(
  snapshot: EtcdSnapshot,
  o: {
    name: string;
    container: string;
    operatorImage: string;
    activeDeadlineSeconds: number;
    args: string[];
    resources: V1ResourceRequirements;
    volumes?: V1Volume[];
    volumeMounts?: V1VolumeMount[];
    /** More labels on the Job's Pod. */
    podLabels?: Record<string, string>;
  },
): V1Job {
  const pvc = snapshot.spec.destination.pvc;
  if (!pvc) throw new Error(`EtcdSnapshot ${snapshot.metadata.name} has no destination.pvc`);
  const labels = {
    [CLUSTER_LABEL]: snapshot.spec.clusterRef.name,
    [SNAPSHOT_UID_LABEL]: snapshot.metadata.uid ?? '',
  };
  return {
    apiVersion: 'batch/v1',
    kind: 'Job',
    metadata: {
      name: o.name,
      namespace: snapshot.metadata.namespace,
      labels,
      ownerReferences: [controllerRef(snapshot)],
    },
    spec: {
      backoffLimit: 0,
      activeDeadlineSeconds: o.activeDeadlineSeconds,
      ttlSecondsAfterFinished: JOB_TTL_SECONDS,
      template: {
        metadata: { labels: { ...labels, ...o.podLabels } },
        spec: {
          restartPolicy: 'Never',
          automountServiceAccountToken: false,
          securityContext: podSecurityContext(),
          containers: [
            {
              name: o.container,
              image: o.operatorImage,
              command: [AGENT_COMMAND],
              args: o.args,
              volumeMounts: [{ name: 'snapshots', mountPath: SNAPSHOT_MOUNT }, ...(o.volumeMounts ?? [])],
              terminationMessagePath: TERMINATION_LOG,
              terminationMessagePolicy: 'FallbackToLogsOnError',
              securityContext: containerSecurityContext(),
              resources: o.resources,
            },
          ],
          volumes: [
            { name: 'snapshots', persistentVolumeClaim: { claimName: pvc.claimName } },
            ...(o.volumes ?? []),
          ],
        },
      },
    },
  };
}

/** The Job that removes a snapshot's file for retention: `<name>-<uid8>-rm`, one per snapshot. */
export function snapshotDeleteJobName(snapshot: Pick<EtcdSnapshot, 'metadata'>): string {
  const uid8 = (snapshot.metadata.uid ?? '').slice(0, 8);
  const base = (snapshot.metadata.name ?? '').slice(0, 63 - uid8.length - 4);
  return `${base.replace(/[.-]+$/, '')}-${uid8}-rm`;
}

/**
 * The Job that removes a snapshot's file (`snapshot-delete`, shared/snapshot-file/delete.ts): only
 * the file whose owner file names this snapshot and whose SHA-256 is `sha256`. Owned by the
 * EtcdSnapshot, so it goes when the snapshot does.
 */
export function snapshotDeleteJob(
  snapshot: EtcdSnapshot,
  opts: { operatorImage: string; sha256: string; activeDeadlineSeconds: number },
): V1Job {
  const owner = { name: snapshot.metadata.name ?? '', uid: snapshot.metadata.uid ?? '' };
  const subPath = (snapshot.spec.destination.pvc?.subPath ?? '').replace(/\/+$/, '');
  const file = snapshotFileName(owner);
  return agentJob(snapshot, {
    name: snapshotDeleteJobName(snapshot),
    container: DELETE_CONTAINER,
    operatorImage: opts.operatorImage,
    activeDeadlineSeconds: opts.activeDeadlineSeconds,
    args: [
      'snapshot-delete',
      `--mount=${SNAPSHOT_MOUNT}`,
      `--dir=${subPath ? `${SNAPSHOT_MOUNT}/${subPath}` : SNAPSHOT_MOUNT}`,
      `--file=${file}`,
      `--recorded-path=${subPath ? `${subPath}/${file}` : file}`,
      `--owner-uid=${owner.uid}`,
      `--sha256=${opts.sha256}`,
      `--termination-log=${TERMINATION_LOG}`,
    ],
    resources: { requests: { cpu: '10m', memory: '32Mi' }, limits: { memory: '128Mi' } },
  });
}
