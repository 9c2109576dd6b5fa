// The auto TLS provider on the sandbox with real etcd 3.5.16: the operator creates the cluster's CA
// and every leaf (server, peer, its own client certificate) into Secrets, and renews each leaf at
// 2/3 of its lifetime. The sandbox runs the functions with a 180 s leaf lifetime (the documented
// operator setting ETCDFN_AUTO_TLS_LEAF_LIFETIME_SECONDS), so renewals happen during the test on
// their own, about every 100 s. It shows: bootstrap to 3/3 Ready with status.certificates, a
// client with the operator-issued client certificate works and one without is refused, scale
// 3 → 5 → 3, a snapshot to S3 and a restore from it into a new auto-TLS cluster, and a renewal
// under a writer (one put every 10 ms) that loses no acknowledged put, keeps every member Ready,
// ends with every member serving the renewed certificates and status showing the new expiry.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { after, before, describe, it } from 'node:test';
import { runHealth, type HealthView } from '../../cli/health.ts';
import { runMembers } from '../../cli/members.ts';
import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { secretValues } from '../../shared/k8s/secrets.ts';
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
const CLUSTER = 'auto';
const RESTORED = 'auto-restored';
const BUCKET = 'etcd-backups';
const S3_SECRET = 'backup-s3';
const KEYS = 200;
const LEAF_LIFETIME_SECONDS = 180;
type Cluster = EtcdCluster & KubeObject;
interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}
type Secret = KubeObject & { data?: Record<string, string> };

describe(
  'auto TLS: the operator issues and renews client and peer certificates (etcd 3.5.16 on the sandbox)',
  { timeout: 900_000 },
  () => {
    let sandbox: FullSandbox;
    let s3: TestS3;
    let kube: KubeObjects;

    const secret = async (name: string): Promise<Record<string, string>> => {
      const read = await kube.get<Secret>({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name });
      assert.equal(read.kind, 'found', `Secret ${name}`);
      return read.kind === 'found' ? secretValues(read.object) : {};
    };

    /** A client with the operator-issued client certificate, read fresh from its Secret. */
    const clientOf = async (cluster: string, withCert = true): Promise<MemberClient> => {
      const ca = (await secret(`${cluster}-ca`))['tls.crt'];
      const op = await secret(`${cluster}-operator-client-tls`);
      return {
        ca: Buffer.from(ca),
        ...(withCert && { cert: Buffer.from(op['tls.crt']), key: Buffer.from(op['tls.key']) }),
        serverName: `${cluster}-client.${NS}.svc`,
      };
    };

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
          tls: { client: { auto: {} }, peer: { auto: {} } },
          ...(restore !== undefined && { bootstrap: { restore } }),
        },
      });
      assert.equal(created.kind, 'created', JSON.stringify(created));
    }

    /** Waits until the cluster exists with its CA and operator client Secret, then converges. */
    async function convergedWithTls(name: string, replicas: number, since = beforeCreation()) {
      await waitFor(
        `${name}: auto TLS Secrets`,
        async () => {
          for (const s of [`${name}-ca`, `${name}-operator-client-tls`]) {
            const read = await kube.get({ apiVersion: 'v1', kind: 'Secret', namespace: NS, name: s });
            if (read.kind !== 'found') return false;
          }
          return true;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
        world(name),
      );
      return converged(
        { kube, namespace: NS, name },
        { replicas, since, client: await clientOf(name), timeoutMs: 300_000, describe: world(name) },
      );
    }

    /** The serial number of the certificate a member serves on `port` (hex, no leading zeros). */
    const servedSerial = (ip: string, port: number, dial: MemberClient): Promise<string> =>
      new Promise((resolve, reject) => {
        const socket = connect({
          host: ip,
          port,
          servername: dial.serverName,
          ca: dial.ca,
          cert: dial.cert,
          key: dial.key,
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
    const secretSerial = async (name: string): Promise<string> => serialOf((await secret(name))['tls.crt']);

    before(async () => {
      process.env.ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS = '2';
      // Not 127.0.0.1: a Pod's 127.0.0.1 is the Pod itself on the sandbox (the restore runs in a Pod).
      s3 = await startS3rver([BUCKET], undefined, '127.0.0.2');
      sandbox = await startFullSandbox({
        tickSeconds: 2,
        env: { ETCDFN_AUTO_TLS_LEAF_LIFETIME_SECONDS: String(LEAF_LIFETIME_SECONDS) },
      });
      kube = new KubeObjects(sandbox.kc);
      assert.equal((await kube.create(s3rverSecret(S3_SECRET, NS))).kind, 'created');
    });
    after(async () => {
      await sandbox?.stop();
      await s3?.stop();
    });

    it('bootstraps to 3/3 Ready with issued certificates in status; a client without a certificate is refused', async () => {
      await createCluster(CLUSTER, 3);
      await convergedWithTls(CLUSTER, 3);
      const certificates = await waitFor(
        'status.certificates with an expiry for server, peer and operator-client',
        async () => {
          const list = (await getCluster(CLUSTER))?.status?.certificates ?? [];
          const roles = list.filter(c => c.notAfter && c.renewAfter).map(c => c.role);
          return ['operator-client', 'peer', 'server'].every(r => roles.includes(r as never)) && list;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
        world(CLUSTER),
      );
      for (const c of certificates) {
        const pem = (await secret(c.secret))['tls.crt'];
        assert.equal(Date.parse(c.notAfter ?? ''), Date.parse(new X509Certificate(pem).validTo), c.secret);
      }

      const dial = await clientOf(CLUSTER);
      const ips = await readyIPs(CLUSTER);
      await fillAndCheckMutualTls(ips[0], dial, await clientOf(CLUSTER, false), 'auto', KEYS);
    });

    it('scales 3 → 5 → 3 over peer TLS', async () => {
      for (const replicas of [5, 3]) {
        const since = await mark({ kube, namespace: NS, name: CLUSTER });
        const patched = await kube.mergePatch(
          { apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: CLUSTER },
          { spec: { replicas } },
        );
        assert.equal(patched.kind, 'written', JSON.stringify(patched));
        await convergedWithTls(CLUSTER, replicas, since);
      }
    });

    it('kubectl etcdfn health and members dial with the cluster CA and the operator client certificate', async () => {
      const cli = { kube, namespace: NS, server: 'sandbox' };
      const health = JSON.parse((await runHealth(cli, CLUSTER, 'json')).text) as HealthView;
      assert.equal(health.healthy, true, JSON.stringify(health));
      assert.equal(health.members.length, 3);
      const members = JSON.parse(await runMembers(cli, CLUSTER, 'json')) as { etcd: { members: unknown[] } };
      assert.equal(members.etcd.members.length, 3, JSON.stringify(members));
    });

    it('an EtcdSnapshot to S3 completes through client mTLS and restores into a new auto-TLS cluster', async () => {
      const snapshot = await snapshotToS3(
        kube,
        { namespace: NS, name: 'auto-snap', cluster: CLUSTER },
        { endpoint: s3.endpoint, bucket: BUCKET, key: 'auto/', credentialsSecret: S3_SECRET },
        world(CLUSTER),
      );
      assert.ok((snapshot.status?.artifact?.revision ?? 0) > KEYS);

      await createCluster(RESTORED, 1, { source: { snapshotRef: { name: 'auto-snap' } } });
      await convergedWithTls(RESTORED, 1);
      const [ip] = await readyIPs(RESTORED);
      const client = new Etcd3(memberClientOptions(ip, await clientOf(RESTORED)));
      try {
        assert.equal(await client.getAll().prefix('auto/').count(), KEYS);
        assert.equal(await client.get('auto/0123').string(), 'v123');
      } finally {
        client.close();
      }
      await kube.delete({ apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: RESTORED });
    });

    it('a renewal under a writer loses no acknowledged put, keeps 3/3 Ready, members serve the new certificates and status shows the new expiry', async t => {
      const ips = await readyIPs(CLUSTER);
      assert.equal(ips.length, 3);
      const dial = await clientOf(CLUSTER);
      const before = {
        server: await secretSerial(`${CLUSTER}-server-tls`),
        peer: await secretSerial(`${CLUSTER}-peer-tls`),
        notAfter: new Map(
          ((await getCluster(CLUSTER))?.status?.certificates ?? []).map(c => [c.secret, c.notAfter]),
        ),
      };
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
      let want = { client: '', peer: '' };
      try {
        await writer.acked(100);
        // The operator renews on its own at 2/3 of the lifetime (at most ~2 minutes from here).
        want = await waitFor(
          'the operator to renew the server and peer certificates',
          async () => {
            const client = await secretSerial(`${CLUSTER}-server-tls`);
            const peer = await secretSerial(`${CLUSTER}-peer-tls`);
            return client !== before.server && peer !== before.peer && { client, peer };
          },
          { timeoutMs: 240_000, intervalMs: 500 },
          world(CLUSTER),
        );
        await waitFor(
          'every member to serve the renewed client and peer certificates',
          async () => {
            for (const ip of ips) {
              if ((await servedSerial(ip, 2379, dial)) !== want.client) return false;
              if ((await servedSerial(ip, 2380, dial)) !== want.peer) return false;
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
      assert.deepEqual(bad, [], `readiness during the renewal (${samples.length} samples)`);

      // Status shows the renewed certificates' expiry, later than before.
      await waitFor(
        'status.certificates to show the renewed expiry',
        async () => {
          const list = (await getCluster(CLUSTER))?.status?.certificates ?? [];
          return ['server-tls', 'peer-tls'].every(suffix => {
            const name = `${CLUSTER}-${suffix}`;
            const now = list.find(c => c.secret === name)?.notAfter;
            return !!now && Date.parse(now) > Date.parse(before.notAfter.get(name) ?? '');
          });
        },
        { timeoutMs: 60_000, intervalMs: 500 },
        world(CLUSTER),
      );

      // The operator still reaches the cluster with the renewed certificates: a fresh converge.
      await convergedWithTls(CLUSTER, 3);
      const reader = new Etcd3(memberClientOptions(ips[0], await clientOf(CLUSTER)));
      try {
        const stored = new Set(await reader.getAll().prefix('rotation/').keys());
        const lost = writer.acknowledged.filter(k => !stored.has(k));
        assert.deepEqual(lost, [], `${lost.length} of ${writer.acknowledged.length} acknowledged puts lost`);
        t.diagnostic(
          `renewal: server ${before.server} → ${want.client}, peer ${before.peer} → ${want.peer}; ` +
            `${writer.acknowledged.length} puts acknowledged, ${lost.length} lost, ${writer.failed()} failed ` +
            `(not acknowledged), ${samples.length} readiness samples all 3/3`,
        );
      } finally {
        reader.close();
      }
    });
  },
);
