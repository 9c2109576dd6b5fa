// The certManager TLS provider on the sandbox with real etcd 3.5.16. The test is the user: it makes
// a CA, puts it in a Secret and creates a cert-manager CA Issuer for it; the cluster asks that
// Issuer for client (mutual) and peer certificates, and the sandbox's cert-manager stand-in
// (test/sandbox/cert-manager.ts) signs the Certificates the operator creates. It shows: bootstrap to
// 3/3 Ready, a client with a certificate from the Issuer works and one without is refused, scale
// 3 → 5 → 3, a snapshot to S3 and a restore into a new certManager cluster, and a renewal asked the
// way `cmctl renew` does under a writer (one put every 10 ms) that loses no acknowledged put, keeps
// every member Ready, and ends with every member serving the renewed certificates.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi, type V1Secret } from '@kubernetes/client-node';
import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import type { CertManagerCertificate } from '../../shared/builders/cert-manager-certificate.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { createCa, type KeyPairPem } from '../../shared/tls/issue.ts';
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
const CLUSTER = 'cm';
const RESTORED = 'cm-restored';
const ISSUER = 'etcd-ca';
const APP_SECRET = 'app-client-tls';
const BUCKET = 'etcd-backups';
const S3_SECRET = 'backup-s3';
const KEYS = 200;
const DAY = 24 * 3600 * 1000;
type Cluster = EtcdCluster & KubeObject;
type Certificate = CertManagerCertificate & KubeObject;
type Secret = V1Secret & KubeObject;
interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined): string => Buffer.from(s ?? '', 'base64').toString();
const normalSerial = (hex: string): string => hex.toLowerCase().replace(/^0+/, '');
const serialOf = (pem: string): string => normalSerial(new X509Certificate(pem).serialNumber);

describe(
  'certManager TLS: client mTLS and peer TLS from a cert-manager CA Issuer (etcd 3.5.16 on the sandbox)',
  { timeout: 900_000 },
  () => {
    let sandbox: FullSandbox;
    let s3: TestS3;
    let kube: KubeObjects;
    let custom: CustomObjectsApi;
    let ca: KeyPairPem;
    /** An application's client certificate, from a Certificate the test asks the Issuer for. */
    let app: { cert: string; key: string };

    const secret = (name: string) =>
      kube.find<Secret>({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name });
    const certificate = (name: string) =>
      kube.find<Certificate>({ apiVersion: 'cert-manager.io/v1', kind: 'Certificate', namespace: NS, name });

    const clientOf = (cluster: string, withCert = true): MemberClient => ({
      ca: Buffer.from(ca.cert),
      ...(withCert && { cert: Buffer.from(app.cert), key: Buffer.from(app.key) }),
      serverName: `${cluster}-client.${NS}.svc`,
    });

    const getCluster = async (name: string) =>
      kube.find<Cluster>({ apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name });
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
      const issuerRef = { name: ISSUER };
      const created = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdCluster',
        metadata: { name, namespace: NS },
        spec: {
          replicas,
          version: '3.5.16',
          tls: {
            client: { certManager: { serverIssuerRef: issuerRef, operatorClientIssuerRef: issuerRef } },
            peer: { certManager: { issuerRef } },
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

    /** Asks for a renewal as `cmctl renew` does: the Issuing condition set True, ManuallyTriggered. */
    const renew = async (name: string): Promise<void> => {
      const cert = await certificate(name);
      assert.ok(cert, `Certificate ${name}`);
      const conditions = (cert.status?.conditions ?? []).filter(c => c.type !== 'Issuing');
      await custom.replaceNamespacedCustomObjectStatus({
        group: 'cert-manager.io',
        version: 'v1',
        namespace: NS,
        plural: 'certificates',
        name,
        body: {
          ...cert,
          status: {
            ...cert.status,
            conditions: [
              ...conditions,
              { type: 'Issuing', status: 'True', reason: 'ManuallyTriggered', message: 'renewal asked' },
            ],
          },
        },
      });
    };

    /** The leaf in a Secret once it differs from `previous` (the stand-in has signed again). */
    const signedLeaf = async (name: string, previous?: string): Promise<string> =>
      waitFor(
        `Secret ${name} signed${previous ? ' again' : ''}`,
        async () => {
          const leaf = unb64((await secret(name))?.data?.['tls.crt']);
          return leaf && leaf !== previous ? leaf : false;
        },
        { timeoutMs: 60_000, intervalMs: 250 },
        async () => `Certificate: ${JSON.stringify((await certificate(name))?.status)}`,
      );

    before(async () => {
      process.env.ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS = '2';
      // Not 127.0.0.1: a Pod's 127.0.0.1 is the Pod itself on the sandbox (as on a real node).
      s3 = await startS3rver([BUCKET], undefined, '127.0.0.2');
      sandbox = await startFullSandbox({ tickSeconds: 2 });
      kube = new KubeObjects(sandbox.kc);
      custom = sandbox.kc.makeApiClient(CustomObjectsApi);
      const now = Date.now();
      ca = await createCa('user-etcd-ca', new Date(now - 60_000), new Date(now + 365 * DAY));
      // A cert-manager CA Issuer: its CA key pair in a kubernetes.io/tls Secret.
      const caSecret = {
        apiVersion: 'v1',
        kind: 'Secret',
        type: 'kubernetes.io/tls',
        metadata: { name: 'etcd-ca-key-pair', namespace: NS },
        data: { 'tls.crt': b64(ca.cert), 'tls.key': b64(ca.key) },
      };
      assert.equal((await kube.create(caSecret)).kind, 'created');
      const issuer = {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Issuer',
        metadata: { name: ISSUER, namespace: NS },
        spec: { ca: { secretName: 'etcd-ca-key-pair' } },
      };
      assert.equal((await kube.create(issuer)).kind, 'created');
      // The application's own client certificate, asked of the same Issuer.
      const appCert = {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: 'app-client', namespace: NS },
        spec: {
          secretName: APP_SECRET,
          commonName: 'app',
          usages: ['digital signature', 'key encipherment', 'client auth'],
          issuerRef: { name: ISSUER, kind: 'Issuer', group: 'cert-manager.io' },
        },
      };
      assert.equal((await kube.create(appCert)).kind, 'created');
      await signedLeaf(APP_SECRET);
      const s = await secret(APP_SECRET);
      app = { cert: unb64(s?.data?.['tls.crt']), key: unb64(s?.data?.['tls.key']) };
      assert.ok(new X509Certificate(app.cert).verify(new X509Certificate(ca.cert).publicKey));
      assert.equal((await kube.create(s3rverSecret(S3_SECRET, NS))).kind, 'created');
    });
    after(async () => {
      await sandbox?.stop();
      await s3?.stop();
    });

    it('bootstraps to 3/3 Ready on certificates from the Issuer; a client without a certificate is refused', async () => {
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
      // The operator asked cert-manager for them; they are the cluster's, and signed by the user's CA.
      const cluster = await getCluster(CLUSTER);
      for (const name of [`${CLUSTER}-server-tls`, `${CLUSTER}-operator-client-tls`, `${CLUSTER}-peer-tls`]) {
        const cert = await certificate(name);
        assert.equal(cert?.metadata.ownerReferences?.[0]?.uid, cluster?.metadata.uid, name);
        assert.equal(cert?.spec.issuerRef.name, ISSUER, name);
        assert.equal(cert?.status?.conditions?.find(c => c.type === 'Ready')?.status, 'True', name);
        const s = await secret(name);
        assert.equal(s?.type, 'kubernetes.io/tls', name);
        assert.equal(unb64(s?.data?.['ca.crt']), ca.cert, name);
      }
      const ips = await readyIPs(CLUSTER);
      await fillAndCheckMutualTls(ips[0], clientOf(CLUSTER), clientOf(CLUSTER, false), 'cm', KEYS);
    });

    it('scales 3 → 5 → 3; the new members serve certificates covering their names', async () => {
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
        if (replicas !== 5) continue;
        // Each member's own name (as peers dial it) is covered by what it serves on both ports.
        const pods = await kube.list<PodLike>('v1', 'Pod', NS, `etcdfn.io/cluster=${CLUSTER}`);
        assert.equal(pods.length, 5);
        for (const pod of pods) {
          const name = `${pod.metadata.name}.${CLUSTER}.${NS}.svc`;
          for (const port of [2379, 2380]) {
            const pem = await servedCert(pod.status?.podIP ?? '', port, name);
            // checkHost answers with the SAN that matched (the wildcard), undefined when none does.
            assert.ok(new X509Certificate(pem).checkHost(name), `${name}:${port} covered`);
          }
        }
      }
    });

    it('an EtcdSnapshot to S3 completes through client mTLS and restores into a new certManager cluster', async () => {
      const snapshot = await snapshotToS3(
        kube,
        { namespace: NS, name: 'cm-snap', cluster: CLUSTER },
        { endpoint: s3.endpoint, bucket: BUCKET, key: 'cm/', credentialsSecret: S3_SECRET },
        world(CLUSTER),
      );
      assert.ok((snapshot.status?.artifact?.revision ?? 0) > KEYS);

      await createCluster(RESTORED, 1, { source: { snapshotRef: { name: 'cm-snap' } } });
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
        assert.equal(await client.getAll().prefix('cm/').count(), KEYS);
        assert.equal(await client.get('cm/0123').string(), 'v123');
      } finally {
        client.close();
      }
      await kube.delete({ apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: RESTORED });
    });

    it('a renewal asked as `cmctl renew` does, under a writer, loses no acknowledged put, keeps 3/3 Ready, and members serve the renewed certificates', async t => {
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
      // Readiness sampled all along the renewal: every sample must be 3/3 with every Pod Ready.
      const samples: string[] = [];
      let sampling = true;
      const sampler = (async () => {
        while (sampling) {
          const cluster = await getCluster(CLUSTER);
          samples.push(`${cluster?.status?.ready} ${(await readyIPs(CLUSTER)).length}`);
          await new Promise(r => setTimeout(r, 250));
        }
      })();
      const names = [`${CLUSTER}-server-tls`, `${CLUSTER}-peer-tls`, `${CLUSTER}-operator-client-tls`];
      try {
        await writer.acked(100);
        const before = await Promise.all(names.map(async n => unb64((await secret(n))?.data?.['tls.crt'])));
        for (const name of names) await renew(name);
        const [server, peer] = await Promise.all(names.map((n, i) => signedLeaf(n, before[i])));
        const want = { client: serialOf(server), peer: serialOf(peer) };
        await waitFor(
          'every member to serve the renewed client and peer certificates',
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
      t.diagnostic(`${writer.acknowledged.length} puts acknowledged, ${samples.length} readiness samples`);
      const bad = samples.filter(s => s !== '3/3 3');
      assert.deepEqual(bad, [], `readiness during the renewal (${samples.length} samples)`);
      for (const name of names) {
        const conditions = (await certificate(name))?.status?.conditions ?? [];
        assert.equal(conditions.find(c => c.type === 'Ready')?.status, 'True', name);
      }

      // The operator still reaches the cluster with its renewed client certificate: a fresh converge.
      await converged(
        { kube, namespace: NS, name: CLUSTER },
        { replicas: 3, since: beforeCreation(), client: dial, timeoutMs: 120_000, describe: world(CLUSTER) },
      );
      const reader = new Etcd3(memberClientOptions(ips[0], dial));
      try {
        const stored = new Set(await reader.getAll().prefix('rotation/').keys());
        const lost = writer.acknowledged.filter(k => !stored.has(k));
        assert.deepEqual(lost, [], `${lost.length} of ${writer.acknowledged.length} acknowledged puts lost`);
      } finally {
        reader.close();
      }
    });

    /** The PEM of the certificate a member serves on `port`. */
    const servedCert = (ip: string, port: number, serverName: string): Promise<string> =>
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
          const raw = socket.getPeerCertificate().raw;
          socket.end();
          resolve(new X509Certificate(raw).toString());
        });
        socket.once('error', reject);
        socket.setTimeout(5000, () =>
          socket.destroy(new Error(`TLS handshake with ${ip}:${port} timed out`)),
        );
      });
  },
);
