// Bring-your-own TLS on the sandbox with real etcd 3.5.16: the test is the user's PKI. It issues a
// CA and leaves into Secrets in both accepted layouts (kubernetes.io/tls with an added ca.crt, and
// cert-manager's, with its annotations), and creates a cluster with client mTLS and peer TLS. It
// shows: bootstrap to 3/3 Ready, a client with the certificate works and one without is refused,
// scale 3 → 5 → 3, a snapshot to S3 and a restore from it into a new TLS cluster, and a rotation
// of every leaf under a writer (one put every 10 ms) that loses no acknowledged put, keeps every
// member Ready, and ends with every member serving the new certificates.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { EtcdClusterTLS } from '../../shared/api/etcd-cluster.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { certificateShape } from '../../shared/tls/auto-certificates.ts';
import { createCa, issueLeaf, type KeyPairPem } from '../../shared/tls/issue.ts';
import type { MemberClient } from '../support/converge.ts';
import {
  checkNoAckedPutLost,
  checkRestoredKeys,
  fillAndCheckMutualTls,
  rotateUnderWriter,
  serialOf,
  snapshotToS3,
} from '../support/tls-checks.ts';
import { NS, startTlsWorld, type TlsWorld } from '../support/tls-world.ts';

const CLUSTER = 'byo';
const RESTORED = 'byo-restored';
const KEYS = 200;
type Layout = 'kubernetes.io/tls' | 'cert-manager';
type Role = 'server' | 'peer' | 'operator-client';

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const DAY = 24 * 3600 * 1000;

describe(
  'bring-your-own TLS: client mTLS and peer TLS from Secrets (etcd 3.5.16 on the sandbox)',
  { timeout: 900_000 },
  () => {
    let w: TlsWorld;
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
      const read = await w.kube.get<KubeObject>({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name });
      const written =
        read.kind === 'found'
          ? await w.kube.replace({
              ...body,
              metadata: { ...body.metadata, resourceVersion: read.object.metadata.resourceVersion },
            })
          : await w.kube.create(body);
      assert.ok(['created', 'written'].includes(written.kind), JSON.stringify(written));
      return pair;
    };

    const clientOf = (cluster: string, withCert = true): MemberClient => ({
      ca: Buffer.from(ca.cert),
      ...(withCert && { cert: Buffer.from(app.cert), key: Buffer.from(app.key) }),
      serverName: `${cluster}-client.${NS}.svc`,
    });

    const tlsOf = (name: string): EtcdClusterTLS => ({
      client: {
        serverSecretRef: { name: `${name}-server` },
        operatorClientSecretRef: { name: `${name}-operator` },
      },
      peer: { secretRef: { name: `${name}-peer` } },
    });

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

    it('bootstraps to 3/3 Ready with client mTLS and peer TLS; a client without a certificate is refused', async () => {
      await putSecret(`${CLUSTER}-server`, 'server', CLUSTER, 'kubernetes.io/tls');
      await putSecret(`${CLUSTER}-operator`, 'operator-client', CLUSTER, 'kubernetes.io/tls');
      await putSecret(`${CLUSTER}-peer`, 'peer', CLUSTER, 'cert-manager');
      await w.createCluster(CLUSTER, 3, tlsOf(CLUSTER));
      await w.converged(CLUSTER, 3, clientOf(CLUSTER));
      const ips = await w.readyIPs(CLUSTER);
      await fillAndCheckMutualTls(ips[0], clientOf(CLUSTER), clientOf(CLUSTER, false), 'byo', KEYS);
    });

    it('scales 3 → 5 → 3 over peer TLS', async () => {
      for (const replicas of [5, 3]) {
        const since = await w.scale(CLUSTER, replicas);
        await w.converged(CLUSTER, replicas, clientOf(CLUSTER), { since });
      }
    });

    it('an EtcdSnapshot to S3 completes through client mTLS and restores into a new TLS cluster', async () => {
      const snapshot = await snapshotToS3(
        w.kube,
        { namespace: NS, name: 'byo-snap', cluster: CLUSTER },
        w.s3Target('byo/'),
        w.describeCluster(CLUSTER),
      );
      assert.ok((snapshot.status?.artifact?.revision ?? 0) > KEYS);

      // The other layout for each role this time.
      await putSecret(`${RESTORED}-server`, 'server', RESTORED, 'cert-manager');
      await putSecret(`${RESTORED}-operator`, 'operator-client', RESTORED, 'cert-manager');
      await putSecret(`${RESTORED}-peer`, 'peer', RESTORED, 'kubernetes.io/tls');
      await w.createCluster(RESTORED, 1, tlsOf(RESTORED), { source: { snapshotRef: { name: 'byo-snap' } } });
      await w.converged(RESTORED, 1, clientOf(RESTORED));
      const [ip] = await w.readyIPs(RESTORED);
      await checkRestoredKeys(ip, clientOf(RESTORED), 'byo', KEYS);
      await w.kube.delete({ apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: RESTORED });
    });

    it('rotating every leaf under a writer loses no acknowledged put, keeps 3/3 Ready, and members serve the new certificates', async t => {
      const dial = clientOf(CLUSTER);
      const rotation = await rotateUnderWriter(w, {
        cluster: CLUSTER,
        replicas: 3,
        dial,
        what: 'rotation',
        rotate: async () => {
          const server = await putSecret(`${CLUSTER}-server`, 'server', CLUSTER, 'kubernetes.io/tls');
          const peer = await putSecret(`${CLUSTER}-peer`, 'peer', CLUSTER, 'cert-manager');
          await putSecret(`${CLUSTER}-operator`, 'operator-client', CLUSTER, 'kubernetes.io/tls');
          return { client: serialOf(server.cert), peer: serialOf(peer.cert) };
        },
      });

      // The operator still reaches the cluster with the new certificates: a fresh converge.
      await w.converged(CLUSTER, 3, dial, { timeoutMs: 120_000 });
      const lost = await checkNoAckedPutLost(rotation.ips[0], dial, rotation.acknowledged);
      t.diagnostic(
        `rotation: ${rotation.acknowledged.length} puts acknowledged, ${lost} lost, ${rotation.failed} failed ` +
          `(not acknowledged), ${rotation.samples} readiness samples all 3/3`,
      );
    });
  },
);
