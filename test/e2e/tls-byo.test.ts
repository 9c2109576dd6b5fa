// Bring-your-own TLS on the sandbox with real etcd 3.5.16: the test is the user's PKI. It issues a
// CA and leaves into Secrets in both accepted layouts (kubernetes.io/tls with an added ca.crt, and
// cert-manager's, with its annotations), and creates a cluster with client mTLS and peer TLS. It
// shows: bootstrap to 3/3 Ready, a client with the certificate works and one without is refused,
// scale 3 → 5 → 3, a snapshot to S3 and a restore from it into a new TLS cluster, and a rotation
// of every leaf under a writer (one put every 10 ms) that loses no acknowledged put, keeps every
// member Ready, and ends with every member serving the new certificates.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { certificateShape } from '../../shared/tls/auto-certificates.ts';
import { createCa, issueLeaf, type KeyPairPem } from '../../shared/tls/issue.ts';
import { startWriter } from '../support/acked-writer.ts';
import {
  beforeCreation,
  converged,
  mark,
  memberClientOptions,
  type MemberClient,
} from '../support/converge.ts';
import { fillAndCheckMutualTls, snapshotToS3 } from '../support/tls-checks.ts';
import { s3rverSecret, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const CLUSTER = 'byo';
const RESTORED = 'byo-restored';
const BUCKET = 'etcd-backups';
const S3_SECRET = 'backup-s3';
const KEYS = 200;
type Cluster = EtcdCluster & KubeObject;
interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}
type Layout = 'kubernetes.io/tls' | 'cert-manager';
type Role = 'server' | 'peer' | 'operator-client';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const DAY = 24 * 3600 * 1000;

describe(
  'bring-your-own TLS: client mTLS and peer TLS from Secrets (etcd 3.5.16 on the sandbox)',
  { timeout: 900_000 },
  () => {
    let sandbox: FullSandbox;
    let s3: TestS3;
    let kube: KubeObjects;
    let ca: KeyPairPem;
    /** The test's own client certificate (an application's), signed by the same CA. */
    let app: KeyPairPem;

    const leaf = async (role: Role, cluster: string): Promise<KeyPairPem> => {
      const shape = certificateShape(role, cluster, NS);
      const now = Date.now();
      return issueLeaf(ca, {
        ...shape,
        notBefore: new Date(now - 60_000),
        notAfter: new Date(now + 30 * DAY),
      });
    };

    /** Writes (creates or replaces) one certificate Secret in the given layout; returns the leaf. */
    const putSecret = async (
      name: string,
      role: Role,
      cluster: string,
      layout: Layout,
    ): Promise<KeyPairPem> => {
      const pair = await leaf(role, cluster);
      const shape = certificateShape(role, cluster, NS);
      const body = {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/tls',
        metadata: {
          name,
          namespace: NS,
          ...(layout === 'cert-manager' && {
            annotations: {
              'cert-manager.io/certificate-name': name,
              'cert-manager.io/issuer-name': 'user-ca',
              'cert-manager.io/issuer-kind': 'Issuer',
              'cert-manager.io/issuer-group': 'cert-manager.io',
              'cert-manager.io/common-name': shape.commonName,
              'cert-manager.io/alt-names': shape.dnsNames.join(','),
              'cert-manager.io/ip-sans': shape.ipAddresses.join(','),
            },
          }),
        },
        data: { 'tls.crt': b64(pair.cert), 'tls.key': b64(pair.key), 'ca.crt': b64(ca.cert) },
      };
      const read = await kube.get<KubeObject>({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name });
      const written =
        read.kind === 'found'
          ? await kube.replace({
              ...body,
              metadata: { ...body.metadata, resourceVersion: read.object.metadata.resourceVersion },
            })
          : await kube.create(body);
      assert.ok(['created', 'written'].includes(written.kind), JSON.stringify(written));
      return pair;
    };

    const clientOf = (cluster: string, withCert = true): MemberClient => ({
      ca: Buffer.from(ca.cert),
      ...(withCert && { cert: Buffer.from(app.cert), key: Buffer.from(app.key) }),
      serverName: `${cluster}-client.${NS}.svc`,
    });

    const getCluster = async (name: string) => {
      const read = await kube.get<Cluster>({
        apiVersion: API_VERSION,
        kind: 'EtcdCluster',
        namespace: NS,
        name,
      });
      return read.kind === 'found' ? read.object : undefined;
    };
    const world = (name: string) => async () =>
      `cluster: ${JSON.stringify((await getCluster(name))?.status)}\n${sandbox.output().slice(-4000)}`;

    const readyIPs = async (cluster: string): Promise<string[]> => {
      const pods = await kube.list<PodLike>('v1', 'Pod', NS, `etcdfn.io/cluster=${cluster}`);
      return pods
        .filter(p => p.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True'))
        .map(p => p.status?.podIP)
        .filter((ip): ip is string => !!ip);
    };

    async function createCluster(name: string, replicas: number, restore?: unknown): Promise<void> {
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdCluster',
        metadata: { name, namespace: NS },
        spec: {
          replicas,
          version: '3.5.16',
          tls: {
            client: {
              serverSecretRef: { name: `${name}-server` },
              operatorClientSecretRef: { name: `${name}-operator` },
            },
            peer: { secretRef: { name: `${name}-peer` } },
          },
          ...(restore !== undefined && { bootstrap: { restore } }),
        },
      });
      assert.equal(created.kind, 'created', JSON.stringify(created));
    }

    /** The serial number of the certificate a member serves on `port` (hex, as node prints it). */
    const servedSerial = (ip: string, port: number, serverName: string): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = connect({
          host: ip,
          port,
          servername: serverName,
          ca: ca.cert,
          cert: app.cert,
          key: app.key,
          checkServerIdentity: () => undefined,
        });
        socket.once('secureConnect', () => {
          const serial = socket.getPeerCertificate().serialNumber;
          socket.end();
          resolve(normalSerial(serial));
        });
        socket.once('error', reject);
        socket.setTimeout(5000, () =>
          socket.destroy(new Error(`TLS handshake with ${ip}:${port} timed out`)),
        );
      });
    const normalSerial = (hex: string): string => hex.toLowerCase().replace(/^0+/, '');
    const serialOf = (pem: string): string => normalSerial(new X509Certificate(pem).serialNumber);

    before(async () => {
      process.env.ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS = '2';
      // Not 127.0.0.1: a Pod's 127.0.0.1 is the Pod itself on the sandbox (the restore runs in a Pod).
      s3 = await startS3rver([BUCKET], undefined, '127.0.0.2');
      sandbox = await startFullSandbox({ tickSeconds: 2 });
      kube = new KubeObjects(sandbox.kc);
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
      assert.equal((await kube.create(s3rverSecret(S3_SECRET, NS))).kind, 'created');
    });
    after(async () => {
      await sandbox?.stop();
      await s3?.stop();
    });

    it('bootstraps to 3/3 Ready with client mTLS and peer TLS; a client without a certificate is refused', async () => {
      await putSecret(`${CLUSTER}-server`, 'server', CLUSTER, 'kubernetes.io/tls');
      await putSecret(`${CLUSTER}-operator`, 'operator-client', CLUSTER, 'kubernetes.io/tls');
      await putSecret(`${CLUSTER}-peer`, 'peer', CLUSTER, 'cert-manager');
      await createCluster(CLUSTER, 3);
      await converged(
        { kube, namespace: NS, name: CLUSTER },
        {
          replicas: 3,
          since: beforeCreation(),
          client: clientOf(CLUSTER),
          timeoutMs: 300_000,
          describe: world(CLUSTER),
        },
      );
      const ips = await readyIPs(CLUSTER);
      await fillAndCheckMutualTls(ips[0], clientOf(CLUSTER), clientOf(CLUSTER, false), 'byo', KEYS);
    });

    it('scales 3 → 5 → 3 over peer TLS', async () => {
      for (const replicas of [5, 3]) {
        const since = await mark({ kube, namespace: NS, name: CLUSTER });
        const patched = await kube.mergePatch(
          { apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: CLUSTER },
          { spec: { replicas } },
        );
        assert.equal(patched.kind, 'written', JSON.stringify(patched));
        await converged(
          { kube, namespace: NS, name: CLUSTER },
          { replicas, since, client: clientOf(CLUSTER), timeoutMs: 300_000, describe: world(CLUSTER) },
        );
      }
    });

    it('an EtcdSnapshot to S3 completes through client mTLS and restores into a new TLS cluster', async () => {
      const snapshot = await snapshotToS3(
        kube,
        { namespace: NS, name: 'byo-snap', cluster: CLUSTER },
        { endpoint: s3.endpoint, bucket: BUCKET, key: 'byo/', credentialsSecret: S3_SECRET },
        world(CLUSTER),
      );
      assert.ok((snapshot.status?.artifact?.revision ?? 0) > KEYS);

      // The other layout for each role this time.
      await putSecret(`${RESTORED}-server`, 'server', RESTORED, 'cert-manager');
      await putSecret(`${RESTORED}-operator`, 'operator-client', RESTORED, 'cert-manager');
      await putSecret(`${RESTORED}-peer`, 'peer', RESTORED, 'kubernetes.io/tls');
      await createCluster(RESTORED, 1, { source: { snapshotRef: { name: 'byo-snap' } } });
      await converged(
        { kube, namespace: NS, name: RESTORED },
        {
          replicas: 1,
          since: beforeCreation(),
          client: clientOf(RESTORED),
          timeoutMs: 300_000,
          describe: world(RESTORED),
        },
      );
      const [ip] = await readyIPs(RESTORED);
      const client = new Etcd3(memberClientOptions(ip, clientOf(RESTORED)));
      try {
        assert.equal(await client.getAll().prefix('byo/').count(), KEYS);
        assert.equal(await client.get('byo/0123').string(), 'v123');
      } finally {
        client.close();
      }
      await kube.delete({ apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: RESTORED });
    });

    it('rotating every leaf under a writer loses no acknowledged put, keeps 3/3 Ready, and members serve the new certificates', async t => {
      const ips = await readyIPs(CLUSTER);
      assert.equal(ips.length, 3);
      const dial = clientOf(CLUSTER);
      const writer = startWriter(
        ips.map(ip => `https://${ip}:2379`),
        'rotation/',
        undefined,
        undefined,
        memberClientOptions(undefined, dial),
      );
      // Readiness sampled all along the rotation: every sample must be 3/3 with every Pod Ready.
      const samples: string[] = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const cluster = await getCluster(CLUSTER);
          samples.push(`${cluster?.status?.ready} ${(await readyIPs(CLUSTER)).length}`);
          await new Promise(r => setTimeout(r, 250));
        }
      })();
      try {
        await writer.acked(100);
        const server = await putSecret(`${CLUSTER}-server`, 'server', CLUSTER, 'kubernetes.io/tls');
        const peer = await putSecret(`${CLUSTER}-peer`, 'peer', CLUSTER, 'cert-manager');
        await putSecret(`${CLUSTER}-operator`, 'operator-client', CLUSTER, 'kubernetes.io/tls');
        const want = { client: serialOf(server.cert), peer: serialOf(peer.cert) };
        await waitFor(
          'every member to serve the new client and peer certificates',
          async () => {
            for (const ip of ips) {
              if ((await servedSerial(ip, 2379, dial.serverName)) !== want.client) return false;
              if ((await servedSerial(ip, 2380, dial.serverName)) !== want.peer) return false;
            }
            return true;
          },
          { timeoutMs: 120_000, intervalMs: 500 },
          world(CLUSTER),
        );
        const acked = writer.acknowledged.length;
        await writer.acked(acked + 100);
      } finally {
        await writer.stop();
        sampling = false;
        await sampler;
      }
      assert.ok(writer.acknowledged.length > 200, `${writer.acknowledged.length} puts acknowledged`);
      const bad = samples.filter(s => s !== '3/3 3');
      assert.deepEqual(bad, [], `readiness during the rotation (${samples.length} samples)`);

      // The operator still reaches the cluster with the new certificates: a fresh converge.
      await converged(
        { kube, namespace: NS, name: CLUSTER },
        { replicas: 3, since: beforeCreation(), client: dial, timeoutMs: 120_000, describe: world(CLUSTER) },
      );
      const reader = new Etcd3(memberClientOptions(ips[0], dial));
      try {
        const stored = new Set(await reader.getAll().prefix('rotation/').keys());
        const lost = writer.acknowledged.filter(k => !stored.has(k));
        assert.deepEqual(lost, [], `${lost.length} of ${writer.acknowledged.length} acknowledged puts lost`);
        t.diagnostic(
          `rotation: ${writer.acknowledged.length} puts acknowledged, ${lost.length} lost, ${writer.failed()} failed ` +
            `(not acknowledged), ${samples.length} readiness samples all 3/3`,
        );
      } finally {
        reader.close();
      }
    });
  },
);
