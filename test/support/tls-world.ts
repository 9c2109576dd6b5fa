// The set-up the three TLS e2e files (tls-byo, tls-auto, tls-certmanager) share: the full sandbox,
// an s3rver with its credentials Secret, and the readers and writers they all use on it. What is
// particular to a provider (its CA, Issuer, Secrets, spec.tls) stays in its file.
import assert from 'node:assert/strict';
import type { V1Secret } from '@kubernetes/client-node';
import type { EtcdCluster, EtcdClusterTLS } from '../../shared/api/etcd-cluster.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { secretValues } from '../../shared/k8s/secrets.ts';
import { beforeCreation, converged, mark, type Mark, type MemberClient } from './converge.ts';
import { s3rverSecret, startS3rver, type TestS3 } from './s3rver.ts';
import { startFullSandbox, type FullSandbox } from './sandbox.ts';
import type { S3Target } from './tls-checks.ts';

export const NS = 'default';
const BUCKET = 'etcd-backups';
const S3_SECRET = 'backup-s3';

export type Cluster = EtcdCluster & KubeObject;
export type Secret = V1Secret & KubeObject;
interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

export interface TlsWorld {
  sandbox: FullSandbox;
  s3: TestS3;
  kube: KubeObjects;
  /** Where an EtcdSnapshot of this world goes: the s3rver bucket under `key`. */
  s3Target(key: string): S3Target;
  getCluster(name: string): Promise<Cluster | undefined>;
  /** For failure messages: the cluster's status and the end of the sandbox's output. */
  describeCluster(name: string): () => Promise<string>;
  /** The Secret, or undefined while it does not exist. */
  secret(name: string): Promise<Secret | undefined>;
  /** The Secret's decoded values; asserts it exists. */
  secretValues(name: string): Promise<Record<string, string>>;
  /** The Pod IPs of the cluster's Ready members. */
  readyIPs(cluster: string): Promise<string[]>;
  /** Creates an etcd 3.5.16 EtcdCluster with `tls`, restored from `restore` when given. */
  createCluster(name: string, replicas: number, tls: EtcdClusterTLS, restore?: unknown): Promise<void>;
  /** Sets spec.replicas; returns the mark taken just before, for converged(). */
  scale(name: string, replicas: number): Promise<Mark>;
  /**
   * converged() dialling the members with `client`: since `since` (default: a new cluster's mark),
   * within `timeoutMs` (default 300 s), failure messages from describeCluster.
   */
  converged(
    name: string,
    replicas: number,
    client: MemberClient | undefined,
    opts?: { since?: Mark; timeoutMs?: number },
  ): Promise<Cluster>;
  stop(): Promise<void>;
}

/** Starts s3rver and the full sandbox (2 s ticks, `env` added to its environment). */
export async function startTlsWorld(env?: Record<string, string>): Promise<TlsWorld> {
  process.env.ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS = '2';
  // Not 127.0.0.1: a Pod's 127.0.0.1 is the Pod itself on the sandbox (the restore runs in a Pod).
  const s3 = await startS3rver([BUCKET], undefined, '127.0.0.2');
  let sandbox: FullSandbox;
  try {
    sandbox = await startFullSandbox({ tickSeconds: 2, ...(env && { env }) });
  } catch (err) {
    await s3.stop();
    throw err;
  }
  const kube = new KubeObjects(sandbox.kc);
  const getCluster = (name: string) =>
    kube.find<Cluster>({ apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name });
  const secret = (name: string) =>
    kube.find<Secret>({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name });
  const world: TlsWorld = {
    sandbox,
    s3,
    kube,
    s3Target: key => ({ endpoint: s3.endpoint, bucket: BUCKET, key, credentialsSecret: S3_SECRET }),
    getCluster,
    describeCluster: name => async () =>
      `cluster: ${JSON.stringify((await getCluster(name))?.status)}\n${sandbox.output().slice(-4000)}`,
    secret,
    secretValues: async name => {
      const read = await secret(name);
      assert.ok(read, `Secret ${name}`);
      return secretValues(read);
    },
    readyIPs: async cluster => {
      const pods = await kube.list<PodLike>('v1', 'Pod', NS, `etcdfn.io/cluster=${cluster}`);
      return pods
        .filter(p => p.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True'))
        .map(p => p.status?.podIP)
        .filter((ip): ip is string => !!ip);
    },
    createCluster: async (name, replicas, tls, restore) => {
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdCluster',
        metadata: { name, namespace: NS },
        spec: {
          replicas,
          version: '3.5.16',
          tls,
          ...(restore !== undefined && { bootstrap: { restore } }),
        },
      });
      assert.equal(created.kind, 'created', JSON.stringify(created));
    },
    scale: async (name, replicas) => {
      const since = await mark({ kube, namespace: NS, name });
      const patched = await kube.mergePatch(
        { apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name },
        { spec: { replicas } },
      );
      assert.equal(patched.kind, 'written', JSON.stringify(patched));
      return since;
    },
    converged: (name, replicas, client, { since = beforeCreation(), timeoutMs = 300_000 } = {}) =>
      converged(
        { kube, namespace: NS, name },
        { replicas, since, client, timeoutMs, describe: world.describeCluster(name) },
      ),
    stop: async () => {
      await sandbox.stop();
      await s3.stop();
    },
  };
  try {
    assert.equal((await kube.create(s3rverSecret(S3_SECRET, NS))).kind, 'created');
  } catch (err) {
    await world.stop();
    throw err;
  }
  return world;
}
