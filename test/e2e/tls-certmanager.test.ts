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
import { after, before, describe, it } from 'node:test';
import { CustomObjectsApi } from '@kubernetes/client-node';
import type { EtcdClusterTLS } from '../../shared/api/etcd-cluster.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import type { CertManagerCertificate } from '../../shared/builders/cert-manager-certificate.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { createCa, type KeyPairPem } from '../../shared/tls/issue.ts';
import type { MemberClient } from '../support/converge.ts';
import {
  checkNoAckedPutLost,
  checkRestoredKeys,
  fillAndCheckMutualTls,
  rotateUnderWriter,
  serialOf,
  servedCertificate,
  snapshotToS3,
} from '../support/tls-checks.ts';
import { NS, startTlsWorld, type TlsWorld } from '../support/tls-world.ts';
import { waitFor } from '../support/wait.ts';

const CLUSTER = 'cm';
const RESTORED = 'cm-restored';
const ISSUER = 'etcd-ca';
const APP_SECRET = 'app-client-tls';
const KEYS = 200;
const DAY = 24 * 3600 * 1000;
type Certificate = CertManagerCertificate & KubeObject;

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const unb64 = (s: string | undefined): string => Buffer.from(s ?? '', 'base64').toString();
const ISSUER_REF = { name: ISSUER };
const CERT_MANAGER_TLS: EtcdClusterTLS = {
  client: { certManager: { serverIssuerRef: ISSUER_REF, operatorClientIssuerRef: ISSUER_REF } },
  peer: { certManager: { issuerRef: ISSUER_REF } },
};

describe(
  'certManager TLS: client mTLS and peer TLS from a cert-manager CA Issuer (etcd 3.5.16 on the sandbox)',
  { timeout: 900_000 },
  () => {
    let w: TlsWorld;
    let custom: CustomObjectsApi;
    let ca: KeyPairPem;
    /** An application's client certificate, from a Certificate the test asks the Issuer for. */
    let app: { cert: string; key: string };

    const certificate = (name: string) =>
      w.kube.find<Certificate>({
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        namespace: NS,
        name,
      });

    const clientOf = (cluster: string, withCert = true): MemberClient => ({
      ca: Buffer.from(ca.cert),
      ...(withCert && { cert: Buffer.from(app.cert), key: Buffer.from(app.key) }),
      serverName: `${cluster}-client.${NS}.svc`,
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
          const leaf = unb64((await w.secret(name))?.data?.['tls.crt']);
          return leaf && leaf !== previous ? leaf : false;
        },
        { timeoutMs: 60_000, intervalMs: 250 },
        async () => `Certificate: ${JSON.stringify((await certificate(name))?.status)}`,
      );

    before(async () => {
      w = await startTlsWorld();
      custom = w.sandbox.kc.makeApiClient(CustomObjectsApi);
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
      assert.equal((await w.kube.create(caSecret)).kind, 'created');
      const issuer = {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Issuer',
        metadata: { name: ISSUER, namespace: NS },
        spec: { ca: { secretName: 'etcd-ca-key-pair' } },
      };
      assert.equal((await w.kube.create(issuer)).kind, 'created');
      // The application's own client certificate, asked of the same Issuer.
      const appCert = {
        apiVersion: 'cert-manager.io/v1',
        kind: 'Certificate',
        metadata: { name: 'app-client', namespace: NS },
        spec: {
          secretName: APP_SECRET,
          commonName: 'app',
          // etcd accepts only client certificates that name the cluster's client Service
          // (--client-cert-allowed-hostname, docs/security.md#tenants-that-share-an-issuer): this
          // application is a client of both clusters of the test.
          dnsNames: [`${CLUSTER}-client.${NS}.svc`, `${RESTORED}-client.${NS}.svc`],
          usages: ['digital signature', 'key encipherment', 'client auth'],
          issuerRef: { name: ISSUER, kind: 'Issuer', group: 'cert-manager.io' },
        },
      };
      assert.equal((await w.kube.create(appCert)).kind, 'created');
      await signedLeaf(APP_SECRET);
      const s = await w.secret(APP_SECRET);
      app = { cert: unb64(s?.data?.['tls.crt']), key: unb64(s?.data?.['tls.key']) };
      assert.ok(new X509Certificate(app.cert).verify(new X509Certificate(ca.cert).publicKey));
    });
    after(async () => {
      await w?.stop();
    });

    it('bootstraps to 3/3 Ready on certificates from the Issuer; a client without a certificate is refused', async () => {
      await w.createCluster(CLUSTER, 3, CERT_MANAGER_TLS);
      await w.converged(CLUSTER, 3, clientOf(CLUSTER));
      // The operator asked cert-manager for them; they are the cluster's, and signed by the user's CA.
      const cluster = await w.getCluster(CLUSTER);
      for (const name of [`${CLUSTER}-server-tls`, `${CLUSTER}-operator-client-tls`, `${CLUSTER}-peer-tls`]) {
        const cert = await certificate(name);
        assert.equal(cert?.metadata.ownerReferences?.[0]?.uid, cluster?.metadata.uid, name);
        assert.equal(cert?.spec.issuerRef.name, ISSUER, name);
        assert.equal(cert?.status?.conditions?.find(c => c.type === 'Ready')?.status, 'True', name);
        const s = await w.secret(name);
        assert.equal(s?.type, 'kubernetes.io/tls', name);
        assert.equal(unb64(s?.data?.['ca.crt']), ca.cert, name);
      }
      const ips = await w.readyIPs(CLUSTER);
      await fillAndCheckMutualTls(ips[0], clientOf(CLUSTER), clientOf(CLUSTER, false), 'cm', KEYS);
    });

    it('scales 3 → 5 → 3; the new members serve certificates covering their names', async () => {
      for (const replicas of [5, 3]) {
        const since = await w.scale(CLUSTER, replicas);
        await w.converged(CLUSTER, replicas, clientOf(CLUSTER), { since });
        if (replicas !== 5) continue;
        // Each member's own name (as peers dial it) is covered by what it serves on both ports.
        const pods = await w.kube.list<KubeObject & { status?: { podIP?: string } }>(
          'v1',
          'Pod',
          NS,
          `etcdfn.io/cluster=${CLUSTER}`,
        );
        assert.equal(pods.length, 5);
        for (const pod of pods) {
          const name = `${pod.metadata.name}.${CLUSTER}.${NS}.svc`;
          for (const port of [2379, 2380]) {
            const served = await servedCertificate(pod.status?.podIP ?? '', port, clientOf(CLUSTER), name);
            // checkHost answers with the SAN that matched (the wildcard), undefined when none does.
            assert.ok(served.checkHost(name), `${name}:${port} covered`);
          }
        }
      }
    });

    it('an EtcdSnapshot to S3 completes through client mTLS and restores into a new certManager cluster', async () => {
      const snapshot = await snapshotToS3(
        w.kube,
        { namespace: NS, name: 'cm-snap', cluster: CLUSTER },
        w.s3Target('cm/'),
        w.describeCluster(CLUSTER),
      );
      assert.ok((snapshot.status?.artifact?.revision ?? 0) > KEYS);

      await w.createCluster(RESTORED, 1, CERT_MANAGER_TLS, { source: { snapshotRef: { name: 'cm-snap' } } });
      await w.converged(RESTORED, 1, clientOf(RESTORED));
      const [ip] = await w.readyIPs(RESTORED);
      await checkRestoredKeys(ip, clientOf(RESTORED), 'cm', KEYS);
      await w.kube.delete({ apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: RESTORED });
    });

    it('a renewal asked as `cmctl renew` does, under a writer, loses no acknowledged put, keeps 3/3 Ready, and members serve the renewed certificates', async t => {
      const dial = clientOf(CLUSTER);
      const names = [`${CLUSTER}-server-tls`, `${CLUSTER}-peer-tls`, `${CLUSTER}-operator-client-tls`];
      const renewal = await rotateUnderWriter(w, {
        cluster: CLUSTER,
        replicas: 3,
        dial,
        what: 'renewal',
        rotate: async () => {
          const before = await Promise.all(
            names.map(async n => unb64((await w.secret(n))?.data?.['tls.crt'])),
          );
          for (const name of names) await renew(name);
          const [server, peer] = await Promise.all(names.map((n, i) => signedLeaf(n, before[i])));
          return { client: serialOf(server), peer: serialOf(peer) };
        },
      });
      t.diagnostic(`${renewal.acknowledged.length} puts acknowledged, ${renewal.samples} readiness samples`);
      for (const name of names) {
        const conditions = (await certificate(name))?.status?.conditions ?? [];
        assert.equal(conditions.find(c => c.type === 'Ready')?.status, 'True', name);
      }

      // The operator still reaches the cluster with its renewed client certificate: a fresh converge.
      await w.converged(CLUSTER, 3, dial, { timeoutMs: 120_000 });
      await checkNoAckedPutLost(renewal.ips[0], dial, renewal.acknowledged);
    });
  },
);
