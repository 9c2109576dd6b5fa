// The operator's etcd client against real etcd serving client mTLS (3.4 and 3.5): the access built
// from Secrets dials it, a client without the certificate is refused, and etcd serves a rotated
// certificate to new connections without a restart (what BYO rotation relies on).
import { after, before, describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { copyFileSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { X509Certificate } from 'node:crypto';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { createEtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { EtcdAccess } from '../../shared/etcd/access.ts';
import type { KubeObjects, ObjectRef } from '../../shared/k8s/objects.ts';
import { clusterEtcd } from '../../shared/runtime/cluster-etcd.ts';
import { settingsFromEnv, type Context } from '../../shared/runtime/context.ts';
import { ETCD_MINORS, etcdBinaries } from '../support/etcd-binaries.ts';
import { CLIENT_PORT, EtcdProcess, LoopbackAddresses, PEER_PORT, sleep } from '../support/etcd-process.ts';
import { TestCA } from '../support/test-certs.ts';

const SAN = 'm1.demo.ns.svc';

for (const minor of ETCD_MINORS) {
  describe(`etcd ${minor} with client mTLS`, { timeout: 120_000 }, () => {
    let dir: string;
    let ca: TestCA;
    let etcd: EtcdProcess;
    let url: string;
    let host: string;
    let client: { cert: Buffer; key: Buffer };

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'etcd-tls-'));
      ca = new TestCA(dir);
      const slot = await new LoopbackAddresses().reserve('m1');
      host = slot.host;
      url = `https://${host}:${CLIENT_PORT}`;
      const server = ca.issue('server', 'm1', [`IP:${host}`, 'DNS:m1.demo.ns.svc'], 'server');
      copyFileSync(server.cert, join(dir, 'live.crt'));
      copyFileSync(server.key, join(dir, 'live.key'));
      const op = ca.issue('operator', 'etcdfn-operator', [], 'client');
      client = { cert: readFileSync(op.cert), key: readFileSync(op.key) };
      etcd = new EtcdProcess({
        binaries: etcdBinaries(minor),
        slot: { ...slot, clientURL: url, peerURL: `http://${host}:${PEER_PORT}` },
        dataDir: join(dir, 'data'),
        initialCluster: `m1=http://${host}:${PEER_PORT}`,
        state: 'new',
        token: 'tls',
        extraArgs: [
          `--cert-file=${join(dir, 'live.crt')}`,
          `--key-file=${join(dir, 'live.key')}`,
          '--client-cert-auth=true',
          `--trusted-ca-file=${ca.cert}`,
        ],
      });
      const adapter = createEtcdAdapter({
        tls: { ca: ca.pem(), ...client, serverName: SAN },
        timeoutMs: 2000,
      });
      const deadline = Date.now() + 20_000;
      for (;;) {
        const listed = await adapter.listMembers([url]);
        if (listed.kind === 'ok') break;
        if (Date.now() > deadline)
          throw new Error(`etcd ${minor} with TLS did not answer: ${listed.message}`);
        await sleep(200);
      }
    });

    after(async () => {
      await etcd?.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('the access built from the cluster’s Secrets dials it (the seam, end to end)', async () => {
      const secrets: Record<string, Record<string, Buffer>> = {
        srv: { 'ca.crt': ca.pem() },
        op: { 'tls.crt': client.cert, 'tls.key': client.key },
      };
      const kube = {
        find: (ref: ObjectRef) => {
          const data = secrets[ref.name];
          if (!data) return Promise.resolve(undefined);
          const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, v.toString('base64')]));
          return Promise.resolve({ metadata: { name: ref.name }, data: encoded });
        },
      } as unknown as KubeObjects;
      const ctx: Context = {
        kube,
        etcd: createEtcdAdapter({ timeoutMs: 2000 }),
        // grpc-js will not verify an IP address as a name: the test's etcd listens on one, so the
        // name checked is a SAN of its certificate (in a cluster the URL's host is that name).
        connectEtcd: (access: EtcdAccess) =>
          createEtcdAdapter({ timeoutMs: 2000, ...access, tls: { ...access.tls!, serverName: SAN } }),
        now: () => new Date(),
        settings: settingsFromEnv({}),
      };
      const cluster: EtcdCluster = {
        apiVersion: 'etcdfn.io/v1alpha1',
        kind: 'EtcdCluster',
        metadata: { name: 'demo', namespace: 'ns' },
        spec: {
          version: '3.5.16',
          tls: { client: { serverSecretRef: { name: 'srv' }, operatorClientSecretRef: { name: 'op' } } },
        },
      };
      const etcdOfCluster = clusterEtcd(ctx, cluster);
      const listed = await etcdOfCluster.listMembers([url]);
      assert.equal(listed.kind, 'ok', JSON.stringify(listed));
      const status = await etcdOfCluster.memberStatus(url);
      assert.equal(status.kind, 'ok');
      // The same call without the Secrets' access (ctx.etcd: no TLS at all) does not get through.
      assert.notEqual((await ctx.etcd.listMembers([url.replace('https', 'http')])).kind, 'ok');
    });

    it('a client without the client certificate is refused', async () => {
      const noCert = createEtcdAdapter({ tls: { ca: ca.pem(), serverName: SAN }, timeoutMs: 2000 });
      const listed = await noCert.listMembers([url]);
      assert.notEqual(listed.kind, 'ok');
      const strangerCA = new TestCA(dir, 'stranger');
      const stranger = strangerCA.issue('stranger-client', 'x', [], 'client');
      const foreign = createEtcdAdapter({
        tls: {
          ca: ca.pem(),
          cert: readFileSync(stranger.cert),
          key: readFileSync(stranger.key),
          serverName: SAN,
        },
        timeoutMs: 2000,
      });
      assert.notEqual((await foreign.listMembers([url])).kind, 'ok');
    });

    it('a rotated serving certificate is served to new connections without a restart', async () => {
      const before = await servedSerial(host, ca, client);
      const next = ca.issue('server-2', 'm1', [`IP:${host}`, 'DNS:m1.demo.ns.svc'], 'server');
      // As the kubelet does for a Secret volume: the files change under the running process.
      copyFileSync(next.key, join(dir, 'live.key'));
      copyFileSync(next.cert, join(dir, 'live.crt'));
      const want = new X509Certificate(readFileSync(next.cert)).serialNumber;
      assert.notEqual(before, want);
      const deadline = Date.now() + 10_000;
      let served = before;
      while (served !== want && Date.now() < deadline) {
        await sleep(200);
        served = await servedSerial(host, ca, client);
      }
      assert.equal(served, want);
      const adapter = createEtcdAdapter({
        tls: { ca: ca.pem(), ...client, serverName: SAN },
        timeoutMs: 2000,
      });
      assert.equal((await adapter.listMembers([url])).kind, 'ok');
      assert.equal(etcd.pid > 0, true);
    });
  });
}

/** The serial number of the certificate etcd presents on a new TLS connection. */
function servedSerial(host: string, ca: TestCA, client: { cert: Buffer; key: Buffer }): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect(
      {
        host,
        port: CLIENT_PORT,
        ca: ca.pem(),
        cert: client.cert,
        key: client.key,
        servername: SAN,
        ALPNProtocols: ['h2'],
      },
      () => {
        const serial = socket.getPeerX509Certificate()?.serialNumber ?? '';
        socket.end();
        resolve(serial);
      },
    );
    socket.once('error', reject);
  });
}
