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
import { after, before, describe, it } from 'node:test';
import { runHealth, type HealthView } from '../../cli/health.ts';
import { runMembers } from '../../cli/members.ts';
import type { EtcdClusterTLS } from '../../shared/api/etcd-cluster.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import type { Mark, MemberClient } from '../support/converge.ts';
import {
  checkNoAckedPutLost,
  checkRestoredKeys,
  fillAndCheckMutualTls,
  rotateUnderWriter,
  serialOf,
  snapshotToS3,
} from '../support/tls-checks.ts';
import { NS, startTlsWorld, type TlsWorld } from '../support/tls-world.ts';
import { waitFor } from '../support/wait.ts';

const CLUSTER = 'auto';
const RESTORED = 'auto-restored';
const KEYS = 200;
const LEAF_LIFETIME_SECONDS = 180;
const AUTO_TLS: EtcdClusterTLS = { client: { auto: {} }, peer: { auto: {} } };

describe(
  'auto TLS: the operator issues and renews client and peer certificates (etcd 3.5.16 on the sandbox)',
  { timeout: 900_000 },
  () => {
    let w: TlsWorld;

    /** A client with the operator-issued client certificate, read fresh from its Secret. */
    const clientOf = async (cluster: string, withCert = true): Promise<MemberClient> => {
      const ca = (await w.secretValues(`${cluster}-ca`))['tls.crt'];
      const op = await w.secretValues(`${cluster}-operator-client-tls`);
      return {
        ca: Buffer.from(ca),
        ...(withCert && { cert: Buffer.from(op['tls.crt']), key: Buffer.from(op['tls.key']) }),
        serverName: `${cluster}-client.${NS}.svc`,
      };
    };

    /** Waits until the cluster exists with its CA and operator client Secret, then converges. */
    async function convergedWithTls(name: string, replicas: number, since?: Mark) {
      await waitFor(
        `${name}: auto TLS Secrets`,
        async () => {
          for (const s of [`${name}-ca`, `${name}-operator-client-tls`]) {
            if (!(await w.secret(s))) return false;
          }
          return true;
        },
        { timeoutMs: 120_000, intervalMs: 500 },
        w.describeCluster(name),
      );
      return w.converged(name, replicas, await clientOf(name), { since });
    }

    const secretSerial = async (name: string): Promise<string> =>
      serialOf((await w.secretValues(name))['tls.crt']);

    before(async () => {
      w = await startTlsWorld({ ETCDFN_AUTO_TLS_LEAF_LIFETIME_SECONDS: String(LEAF_LIFETIME_SECONDS) });
    });
    after(async () => {
      await w?.stop();
    });

    it('bootstraps to 3/3 Ready with issued certificates in status; a client without a certificate is refused', async () => {
      await w.createCluster(CLUSTER, 3, AUTO_TLS);
      await convergedWithTls(CLUSTER, 3);
      const certificates = await waitFor(
        'status.certificates with an expiry for server, peer and operator-client',
        async () => {
          const list = (await w.getCluster(CLUSTER))?.status?.certificates ?? [];
          const roles = list.filter(c => c.notAfter && c.renewAfter).map(c => c.role);
          return ['operator-client', 'peer', 'server'].every(r => roles.includes(r as never)) && list;
        },
        { timeoutMs: 60_000, intervalMs: 500 },
        w.describeCluster(CLUSTER),
      );
      for (const c of certificates) {
        const pem = (await w.secretValues(c.secret))['tls.crt'];
        assert.equal(Date.parse(c.notAfter ?? ''), Date.parse(new X509Certificate(pem).validTo), c.secret);
      }

      const dial = await clientOf(CLUSTER);
      const ips = await w.readyIPs(CLUSTER);
      await fillAndCheckMutualTls(ips[0], dial, await clientOf(CLUSTER, false), 'auto', KEYS);
    });

    it('scales 3 → 5 → 3 over peer TLS', async () => {
      for (const replicas of [5, 3]) {
        const since = await w.scale(CLUSTER, replicas);
        await convergedWithTls(CLUSTER, replicas, since);
      }
    });

    it('kubectl etcdfn health and members dial with the cluster CA and the operator client certificate', async () => {
      const cli = { kube: w.kube, namespace: NS, server: 'sandbox' };
      const health = JSON.parse((await runHealth(cli, CLUSTER, 'json')).text) as HealthView;
      assert.equal(health.healthy, true, JSON.stringify(health));
      assert.equal(health.members.length, 3);
      const members = JSON.parse(await runMembers(cli, CLUSTER, 'json')) as { etcd: { members: unknown[] } };
      assert.equal(members.etcd.members.length, 3, JSON.stringify(members));
    });

    it('an EtcdSnapshot to S3 completes through client mTLS and restores into a new auto-TLS cluster', async () => {
      const snapshot = await snapshotToS3(
        w.kube,
        { namespace: NS, name: 'auto-snap', cluster: CLUSTER },
        w.s3Target('auto/'),
        w.describeCluster(CLUSTER),
      );
      assert.ok((snapshot.status?.artifact?.revision ?? 0) > KEYS);

      await w.createCluster(RESTORED, 1, AUTO_TLS, { source: { snapshotRef: { name: 'auto-snap' } } });
      await convergedWithTls(RESTORED, 1);
      const [ip] = await w.readyIPs(RESTORED);
      await checkRestoredKeys(ip, await clientOf(RESTORED), 'auto', KEYS);
      await w.kube.delete({ apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: RESTORED });
    });

    it('a renewal under a writer loses no acknowledged put, keeps 3/3 Ready, members serve the new certificates and status shows the new expiry', async t => {
      const before = {
        server: await secretSerial(`${CLUSTER}-server-tls`),
        peer: await secretSerial(`${CLUSTER}-peer-tls`),
        notAfter: new Map(
          ((await w.getCluster(CLUSTER))?.status?.certificates ?? []).map(c => [c.secret, c.notAfter]),
        ),
      };
      const renewal = await rotateUnderWriter(w, {
        cluster: CLUSTER,
        replicas: 3,
        dial: await clientOf(CLUSTER),
        what: 'renewal',
        // The operator renews on its own at 2/3 of the lifetime (at most ~2 minutes from here).
        rotate: () =>
          waitFor(
            'the operator to renew the server and peer certificates',
            async () => {
              const client = await secretSerial(`${CLUSTER}-server-tls`);
              const peer = await secretSerial(`${CLUSTER}-peer-tls`);
              return client !== before.server && peer !== before.peer && { client, peer };
            },
            { timeoutMs: 240_000, intervalMs: 500 },
            w.describeCluster(CLUSTER),
          ),
      });

      // Status shows the renewed certificates' expiry, later than before.
      await waitFor(
        'status.certificates to show the renewed expiry',
        async () => {
          const list = (await w.getCluster(CLUSTER))?.status?.certificates ?? [];
          return ['server-tls', 'peer-tls'].every(suffix => {
            const name = `${CLUSTER}-${suffix}`;
            const now = list.find(c => c.secret === name)?.notAfter;
            return !!now && Date.parse(now) > Date.parse(before.notAfter.get(name) ?? '');
          });
        },
        { timeoutMs: 60_000, intervalMs: 500 },
        w.describeCluster(CLUSTER),
      );

      // The operator still reaches the cluster with the renewed certificates: a fresh converge.
      await convergedWithTls(CLUSTER, 3);
      const lost = await checkNoAckedPutLost(renewal.ips[0], await clientOf(CLUSTER), renewal.acknowledged);
      t.diagnostic(
        `renewal: server ${before.server} → ${renewal.served.client}, peer ${before.peer} → ${renewal.served.peer}; ` +
          `${renewal.acknowledged.length} puts acknowledged, ${lost} lost, ${renewal.failed} failed ` +
          `(not acknowledged), ${renewal.samples} readiness samples all 3/3`,
      );
    });
  },
);
