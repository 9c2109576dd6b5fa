// Every Pod etcdfn creates, built by the product's own builders from the operator's settings (what
// the functions read from their environment): a member, a restoring seed (its init containers run
// the operator's image), a snapshot Job and a snapshot-delete Job. Each says which etcd ports it
// dials, so the image and NetworkPolicy checks cover the same list.
import type { V1PodTemplateSpec } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { buildMember, buildMemberPod } from '../../shared/builders/index.ts';
import { snapshotDeleteJob, snapshotJob } from '../../shared/builders/snapshot-job.ts';
import { CLIENT_PORT, PEER_PORT } from '../../shared/names.ts';
import type { OperatorSettings } from '../../shared/runtime/context.ts';

export const CLUSTER_NAMESPACE = 'prod';

export const cluster: EtcdCluster = {
  apiVersion: 'etcdfn.io/v1alpha1',
  kind: 'EtcdCluster',
  metadata: { name: 'demo', namespace: CLUSTER_NAMESPACE, uid: 'cluster-uid' },
  spec: { replicas: 3, version: '3.5.16' },
  status: {
    clusterToken: 'prod-demo-cluster-uid',
    observed: { replicas: 3, version: '3.5.16', storage: { size: '1Gi' } },
  },
};

export interface CreatedPod {
  what: string;
  namespace: string;
  template: V1PodTemplateSpec;
  /** The member ports this Pod's programs connect to. */
  dials: number[];
}

const snapshot: EtcdSnapshot = {
  apiVersion: 'etcdfn.io/v1alpha1',
  kind: 'EtcdSnapshot',
  metadata: { name: 'nightly', namespace: CLUSTER_NAMESPACE, uid: '0f1e2d3c-uid' },
  spec: { clusterRef: { name: 'demo' }, destination: { pvc: { claimName: 'backups', subPath: 'etcd' } } },
};

export function createdPods(
  settings: Pick<OperatorSettings, 'operatorImage' | 'etcdImageRepository' | 'etcdImageDigests'>,
): CreatedPod[] {
  const member = (restore: boolean) => {
    const m = buildMember(cluster, { bootstrap: restore });
    m.metadata = { ...m.metadata, name: restore ? 'demo-seed' : 'demo-abcde', uid: 'member-uid' };
    delete m.metadata.generateName;
    m.spec = { ...m.spec, initialCluster: `${m.metadata.name}=http://${m.metadata.name}.demo.prod.svc:2380` };
    if (restore) {
      const s3 = {
        endpoint: 'https://s3.example',
        bucket: 'b',
        key: 'k',
        credentialsSecretRef: { name: 'c' },
      };
      m.spec.restore = { source: { s3, sha256: `sha256:${'ab'.repeat(32)}` } };
    }
    const pod = buildMemberPod(m, {
      namespace: CLUSTER_NAMESPACE,
      clusterFormed: !restore,
      isVoter: true,
      etcdImageRepository: settings.etcdImageRepository,
      ...(settings.etcdImageDigests && { etcdImageDigests: settings.etcdImageDigests }),
      operatorImage: settings.operatorImage,
    });
    return { metadata: pod.metadata, spec: pod.spec };
  };
  const save = snapshotJob(snapshot, {
    operatorImage: settings.operatorImage,
    subPath: 'etcd',
    startTime: '2026-01-01T00:00:00Z',
    sources: [{ member: 'demo-abcde', endpoint: `http://demo-abcde.demo.prod.svc:${CLIENT_PORT}` }],
    activeDeadlineSeconds: 540,
  });
  const remove = snapshotDeleteJob(snapshot, {
    operatorImage: settings.operatorImage,
    sha256: 'ab'.repeat(32),
    activeDeadlineSeconds: 300,
  });
  return [
    {
      what: 'member Pod',
      namespace: CLUSTER_NAMESPACE,
      template: member(false),
      dials: [CLIENT_PORT, PEER_PORT],
    },
    {
      what: 'restoring seed Pod',
      namespace: CLUSTER_NAMESPACE,
      template: member(true),
      dials: [CLIENT_PORT, PEER_PORT],
    },
    {
      what: 'snapshot Job',
      namespace: CLUSTER_NAMESPACE,
      template: save.spec!.template,
      dials: [CLIENT_PORT],
    },
    { what: 'snapshot-delete Job', namespace: CLUSTER_NAMESPACE, template: remove.spec!.template, dials: [] },
  ];
}

/** Every image a Pod's containers and init containers run. */
export const imagesOf = (t: V1PodTemplateSpec): { container: string; image: string }[] =>
  [...(t.spec?.initContainers ?? []), ...(t.spec?.containers ?? [])].map(c => ({
    container: c.name,
    image: c.image ?? '',
  }));
