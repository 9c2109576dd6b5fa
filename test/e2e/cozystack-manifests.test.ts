// The EtcdCluster examples of the cozystack etcd-operator's own docs (the system etcdfn's API
// follows), each with only its apiVersion changed, on the sandbox's real control plane: a plain
// cluster, a Memory-medium one, bring-your-own TLS from Secrets as those docs make them, and a
// restore from S3 of a snapshot etcdfn made.
//
// Every manifest names etcd 3.6.11. The real API server accepts it as written (checked first, by a
// server-side dry run); the sandbox then runs it as 3.6.16, because etcd 3.6.11 cannot be built
// here: the Go module proxy does not serve go.etcd.io/etcd/etcdutl/v3@v3.6.11 (sum.golang.org
// lookup: 404 Not Found), and the sandbox runs an etcd image only with the binary of exactly its
// version. The version is the one field changed besides apiVersion, and the test says so.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { parse } from 'yaml';
import { API_VERSION } from '../../shared/api/group.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { certificateShape } from '../../shared/tls/auto-certificates.ts';
import { createCa, issueLeaf, type KeyPairPem } from '../../shared/tls/issue.ts';
import { rawRequest } from '../sandbox/control-plane/apply.ts';
import { memberClientOptions, type MemberClient } from '../support/converge.ts';
import { s3rverSecret } from '../support/s3rver.ts';
import { snapshotToS3 } from '../support/tls-checks.ts';
import { NS, startTlsWorld, type TlsWorld } from '../support/tls-world.ts';
import { waitFor } from '../support/wait.ts';

const COZYSTACK_API = 'etcd-operator.cozystack.io/v1alpha2';
const DOCS_VERSION = '3.6.11';
const RUN_VERSION = '3.6.16';
const DAY = 24 * 3600 * 1000;

// From the cozystack docs (README "Create a cluster", operations "Memory-backed clusters",
// "Bring your own TLS", "Restore from S3"), as published; <ns> is the namespace the reader picks.
const PLAIN = `
apiVersion: etcd-operator.cozystack.io/v1alpha2
kind: EtcdCluster
metadata:
  name: my-etcd
  namespace: default
spec:
  replicas: 3
  version: 3.6.11
  storage:
    size: 1Gi
`;
const MEMORY = `
apiVersion: etcd-operator.cozystack.io/v1alpha2
kind: EtcdCluster
metadata:
  name: my-mem-etcd
  namespace: default
spec:
  replicas: 3
  version: 3.6.11
  storage:
    size: 256Mi
    medium: Memory
`;
const BYO_TLS = `
apiVersion: etcd-operator.cozystack.io/v1alpha2
kind: EtcdCluster
metadata:
  name: my-cluster
spec:
  replicas: 3
  version: 3.6.11
  storage:
    size: 1Gi
  tls:
    client:
      serverSecretRef:
        name: my-cluster-server-tls
      operatorClientSecretRef:
        name: my-cluster-operator-client-tls
    peer:
      secretRef:
        name: my-cluster-peer-tls
`;
const RESTORE = `
apiVersion: etcd-operator.cozystack.io/v1alpha2
kind: EtcdCluster
metadata:
  name: my-etcd          # may reuse the old name once the old cluster is gone
  namespace: <ns>
spec:
  replicas: 3
  version: 3.6.11          # must match the operator's etcdutl minor (3.6.x) — see warning above
  storage:
    size: 1Gi
  bootstrap:
    restore:
      source:
        s3:
          endpoint: https://s3.example.com
          bucket: etcd-snapshots
          key: my-etcd/my-etcd-2026-06-02.db   # EXACT object key (not a prefix)
          region: us-east-1
          forcePathStyle: true
          credentialsSecretRef:
            name: s3-creds
`;

type Manifest = {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string };
  spec: Record<string, unknown> & { version: string };
};

/** The docs' manifest with only its apiVersion changed (and <ns> filled in). */
function asEtcdfn(text: string): Manifest {
  const doc = parse(text.replace('<ns>', NS)) as Manifest;
  assert.equal(doc.apiVersion, COZYSTACK_API);
  assert.equal(doc.spec.version, DOCS_VERSION);
  return { ...doc, apiVersion: API_VERSION, metadata: { namespace: NS, ...doc.metadata } };
}

const clusters = `/apis/etcdfn.io/v1alpha1/namespaces/${NS}/etcdclusters`;
type PodWithVolumes = KubeObject & { spec: { volumes?: { name: string; emptyDir?: unknown }[] } };

describe(
  'the cozystack docs’ EtcdCluster examples, apiVersion changed, on the real control plane',
  { timeout: 1_500_000 },
  () => {
    let w: TlsWorld;
    let ca: KeyPairPem;
    let app: KeyPairPem;

    /** Accepted as written by the real API server (dry run), then created with the version it can run. */
    async function apply(manifest: Manifest): Promise<void> {
      const kc = w.sandbox.kc;
      const dry = await rawRequest(kc, 'POST', `${clusters}?dryRun=All&fieldValidation=Strict`, manifest);
      assert.equal(dry.status, 201, `the API server refused the docs' manifest as written: ${dry.body}`);
      const run = { ...manifest, spec: { ...manifest.spec, version: RUN_VERSION } };
      const created = await rawRequest(kc, 'POST', `${clusters}?fieldValidation=Strict`, run);
      assert.equal(created.status, 201, created.body);
    }

    async function putGet(name: string, client?: MemberClient): Promise<void> {
      const [ip] = await w.readyIPs(name);
      const etcd = new Etcd3(memberClientOptions(ip, client));
      try {
        await etcd.put(`cozystack/${name}`).value('kept');
        assert.equal(await etcd.get(`cozystack/${name}`).string(), 'kept');
        const status = await etcd.maintenance.status();
        assert.equal(status.version, RUN_VERSION, 'the members run the version asked for');
      } finally {
        etcd.close();
      }
    }

    before(async () => {
      w = await startTlsWorld();
      const now = Date.now();
      ca = await createCa('user-ca', new Date(now - 60_000), new Date(now + 365 * DAY));
      app = await issueLeaf(ca, {
        commonName: 'app',
        dnsNames: [],
        ipAddresses: [],
        usages: ['client'],
        notBefore: new Date(now - 60_000),
        notAfter: new Date(now + 30 * DAY),
      });
    });
    after(async () => {
      await w?.stop();
    });

    it('the plain cluster reaches Ready 3/3 and serves reads and writes', async () => {
      await apply(asEtcdfn(PLAIN));
      await w.converged('my-etcd', 3, undefined);
      await putGet('my-etcd');
    });

    it('the Memory-medium cluster reaches Ready 3/3 with tmpfs data volumes of 256Mi', async () => {
      await apply(asEtcdfn(MEMORY));
      await w.converged('my-mem-etcd', 3, undefined);
      const pods = await w.kube.list<PodWithVolumes>('v1', 'Pod', NS, 'etcdfn.io/cluster=my-mem-etcd');
      assert.equal(pods.length, 3);
      for (const pod of pods) {
        // client-node gives typed objects: compare the fields, not the class.
        const data = pod.spec.volumes?.find(v => v.name === 'data')?.emptyDir as
          { medium?: string; sizeLimit?: string } | undefined;
        assert.equal(data?.medium, 'Memory', JSON.stringify(pod.spec.volumes));
        assert.equal(data?.sizeLimit, '256Mi', JSON.stringify(pod.spec.volumes));
      }
      await putGet('my-mem-etcd');
    });

    it('bring-your-own TLS from generic Secrets with tls.crt, tls.key and ca.crt reaches Ready 3/3 over mTLS', async () => {
      const cluster = 'my-cluster';
      const secrets: [string, 'server' | 'operator-client' | 'peer'][] = [
        ['my-cluster-server-tls', 'server'],
        ['my-cluster-operator-client-tls', 'operator-client'],
        ['my-cluster-peer-tls', 'peer'],
      ];
      for (const [name, role] of secrets) {
        const now = Date.now();
        const leaf = await issueLeaf(ca, {
          ...certificateShape(role, cluster, NS),
          notBefore: new Date(now - 60_000),
          notAfter: new Date(now + 30 * DAY),
        });
        // `kubectl create secret generic ... --from-file=tls.crt --from-file=tls.key --from-file=ca.crt`
        const created = await w.kube.create({
          apiVersion: 'v1',
          kind: 'Secret',
          metadata: { name, namespace: NS },
          stringData: { 'tls.crt': leaf.cert, 'tls.key': leaf.key, 'ca.crt': ca.cert },
        });
        assert.equal(created.kind, 'created', JSON.stringify(created));
      }
      const client: MemberClient = {
        ca: Buffer.from(ca.cert),
        cert: Buffer.from(app.cert),
        key: Buffer.from(app.key),
        serverName: `${cluster}-client.${NS}.svc`,
      };
      await apply(asEtcdfn(BYO_TLS));
      await w.converged(cluster, 3, client);
      await putGet(cluster, client);
    });

    it('restore from S3: a snapshot of my-etcd, the old cluster gone, my-etcd again from it with the key', async () => {
      const snapshot = await snapshotToS3(
        w.kube,
        { namespace: NS, name: 'my-etcd-snap', cluster: 'my-etcd' },
        w.s3Target('my-etcd/'),
        w.describeCluster('my-etcd'),
      );
      const uri = snapshot.status?.artifact?.uri ?? '';
      const [, bucket, key] = /^s3:\/\/([^/]+)\/(.+)$/.exec(uri) ?? [];
      assert.ok(bucket && key, `artifact uri ${uri}`);
      const ref = { apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: 'my-etcd' };
      await w.kube.delete(ref);
      await waitFor('the old my-etcd gone', async () => (await w.getCluster('my-etcd')) === undefined, {
        timeoutMs: 180_000,
        intervalMs: 500,
      });
      assert.equal((await w.kube.create(s3rverSecret('s3-creds', NS))).kind, 'created');
      const manifest = asEtcdfn(RESTORE);
      const restore = manifest.spec.bootstrap as { restore: { source: { s3: Record<string, unknown> } } };
      // Where the snapshot is: the reader's own endpoint, bucket and key replace the docs' placeholders.
      Object.assign(restore.restore.source.s3, { endpoint: w.s3.endpoint, bucket, key });
      await apply(manifest);
      await w.converged('my-etcd', 3, undefined);
      const [ip] = await w.readyIPs('my-etcd');
      const etcd = new Etcd3(memberClientOptions(ip));
      try {
        assert.equal(
          await etcd.get('cozystack/my-etcd').string(),
          'kept',
          'the key written before the snapshot',
        );
      } finally {
        etcd.close();
      }
    });
  },
);
