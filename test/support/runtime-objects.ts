// The objects etcdfn's functions create at run time in Knative's and cert-manager's kinds, built by
// the functions' own code: a snapshot schedule's PingSource (with and without a sink audience and
// CA), a cluster's wake-up PingSource, and the cert-manager Certificates of a cluster whose TLS is
// certManager. The tests apply them to the real schemas and to Knative's webhook.
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdSnapshotSchedule } from '../../shared/api/etcd-snapshot-schedule.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { certManagerCertificates } from '../../shared/builders/cert-manager-certificate.ts';
import { desiredPingSource } from '../../shared/plan/schedule/ping.ts';
import { wakePingSource } from '../../shared/plan/wake/wake.ts';
import type { Obj } from './helm.ts';

/** In namespace team-a; `caPem` is the CA the sink's CACerts carry (Knative's webhook parses it). */
export function runtimeObjects(caPem: string): Obj[] {
  const namespace = 'team-a';
  const sink = {
    uri: 'https://broker-ingress.knative-eventing.svc.cluster.local/etcdfn-system/etcdfn',
    audience: 'eventing.knative.dev/broker/etcdfn-system/etcdfn',
    CACerts: caPem,
  };
  const schedule = {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdSnapshotSchedule',
    metadata: { name: 'nightly', namespace, uid: '00000000-0000-0000-0000-000000000001' },
    spec: {
      clusterRef: { name: 'demo' },
      schedule: '0 3 * * *',
      timeZone: 'Europe/Paris',
      destination: {
        s3: { endpoint: 'https://s3.example', bucket: 'b', credentialsSecretRef: { name: 's' } },
      },
    },
  } as EtcdSnapshotSchedule & KubeObject;
  const cluster = {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name: 'demo', namespace, uid: '00000000-0000-0000-0000-000000000002' },
    spec: {
      replicas: 3,
      tls: {
        client: {
          certManager: {
            serverIssuerRef: { name: 'ca' },
            operatorClientIssuerRef: { name: 'ca', kind: 'ClusterIssuer' },
          },
        },
        peer: { certManager: { issuerRef: { name: 'ca' } } },
      },
    },
  } as unknown as EtcdCluster & KubeObject;
  const objects: Obj[] = [
    desiredPingSource(schedule, sink)!,
    desiredPingSource(schedule, { uri: sink.uri })!,
    wakePingSource(cluster, 'etcdfn-wake-demo', 'etcdCluster', 'demo', sink),
    ...certManagerCertificates(cluster),
  ];
  objects[1].metadata.name += '-plain';
  return objects;
}
