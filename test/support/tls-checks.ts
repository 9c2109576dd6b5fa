// Checks the three TLS e2e files (tls-byo, tls-auto, tls-certmanager) make the same way: a client
// with a certificate writes and reads, etcd refuses one without a certificate and a plaintext one;
// an EtcdSnapshot of a TLS cluster to S3 ends Complete.
import assert from 'node:assert/strict';
import { Etcd3 } from 'etcd3';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import type { KubeObject, KubeObjects } from '../../shared/k8s/objects.ts';
import { memberClientOptions, type MemberClient } from './converge.ts';
import { waitFor } from './wait.ts';

type Snapshot = EtcdSnapshot & KubeObject;

/**
 * Puts `keys` keys `<prefix>/0000…` (values `v<n>`) through `ip` with the client certificate, reads
 * one back, then shows etcd refuses the same call without a client certificate and in plaintext.
 */
export async function fillAndCheckMutualTls(
  ip: string | undefined,
  withCert: MemberClient,
  withoutCert: MemberClient,
  prefix: string,
  keys: number,
): Promise<void> {
  const client = new Etcd3(memberClientOptions(ip, withCert));
  try {
    await Promise.all(
      Array.from({ length: keys }, (_, n) =>
        client
          .put(`${prefix}/${String(n).padStart(4, '0')}`)
          .value(`v${n}`)
          .exec(),
      ),
    );
    assert.equal(await client.get(`${prefix}/0042`).string(), 'v42');
  } finally {
    client.close();
  }
  for (const [who, options] of [
    ['no client certificate', memberClientOptions(ip, withoutCert)],
    ['plaintext', memberClientOptions(ip)],
  ] as const) {
    const refused = new Etcd3({ ...options, dialTimeout: 3000 });
    try {
      await assert.rejects(refused.get(`${prefix}/0042`).string(), Error, `${who} was served`);
    } finally {
      refused.close();
    }
  }
}

export interface S3Target {
  endpoint: string;
  bucket: string;
  key: string;
  credentialsSecret: string;
}

/** Creates EtcdSnapshot `name` of `cluster` to S3 and waits until it ends; asserts Complete. */
export async function snapshotToS3(
  kube: KubeObjects,
  { namespace, name, cluster }: { namespace: string; name: string; cluster: string },
  to: S3Target,
  describe: () => Promise<string>,
): Promise<Snapshot> {
  const created = await kube.create({
    apiVersion: API_VERSION,
    kind: 'EtcdSnapshot',
    metadata: { name, namespace },
    spec: {
      clusterRef: { name: cluster },
      destination: {
        s3: {
          endpoint: to.endpoint,
          bucket: to.bucket,
          key: to.key,
          credentialsSecretRef: { name: to.credentialsSecret },
        },
      },
    },
  });
  assert.equal(created.kind, 'created');
  const snapshot = await waitFor(
    `EtcdSnapshot ${name} Complete or Failed`,
    async () => {
      const read = await kube.get<Snapshot>({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshot',
        namespace,
        name,
      });
      const phase = read.kind === 'found' ? read.object.status?.phase : undefined;
      return phase === 'Complete' || phase === 'Failed' ? read.kind === 'found' && read.object : false;
    },
    { timeoutMs: 180_000, intervalMs: 500 },
    describe,
  );
  assert.equal(snapshot.status?.phase, 'Complete', JSON.stringify(snapshot.status));
  return snapshot;
}
