// Tenants whose clusters take certificates from one shared issuer (a cert-manager ClusterIssuer):
// with the pins the builders set (shared/builders/etcd-listen.ts), a real etcd of each minor accepts
// its own cluster's operator-client and peer certificates and refuses those the same CA signed for
// another cluster, or for a cluster of the same name in another namespace. Without the pins (the
// control) it accepts them all: that is the hole. Certificates have the names and usages the
// operator asks cert-manager for (certificateShape).
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMemberTLS } from '../../shared/api/etcd-member.ts';
import { certPinFlags, listenFlags } from '../../shared/builders/etcd-listen.ts';
import { memberTls } from '../../shared/tls/secret-names.ts';
import { certificateShape, type AutoCertificateRole } from '../../shared/tls/auto-certificates.ts';
import { etcdBinaries, type EtcdMinor } from '../support/etcd-binaries.ts';
import { CLIENT_PORT, EtcdProcess, LoopbackAddresses, PEER_PORT, sleep } from '../support/etcd-process.ts';
import { TestCA, type CertFiles } from '../support/test-certs.ts';

const MINORS: EtcdMinor[] = ['3.4', '3.5', '3.6', '3.7'];

const certManagerCluster = (name: string, namespace: string): EtcdCluster =>
  ({
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name, namespace },
    spec: {
      replicas: 1,
      version: '3.5.16',
      tls: {
        client: {
          certManager: { serverIssuerRef: { name: 'shared' }, operatorClientIssuerRef: { name: 'shared' } },
        },
        peer: { certManager: { issuerRef: { name: 'shared' } } },
      },
    },
  }) as unknown as EtcdCluster;

/** GET path with a client certificate: the HTTP status, or 'refused' when TLS does not let it through. */
function get(url: string, cert?: CertFiles): Promise<number | 'refused'> {
  return new Promise(resolve => {
    const send = url.startsWith('http:') ? httpRequest : request;
    const req = send(
      url,
      {
        rejectUnauthorized: false, // the server's name is not what is tested here
        ...(cert && { cert: readFileSync(cert.cert), key: readFileSync(cert.key) }),
        agent: false,
        timeout: 5000,
      },
      res => {
        res.resume();
        resolve(res.statusCode ?? 0);
      },
    );
    req.on('error', () => resolve('refused'));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

for (const minor of MINORS) {
  describe(`etcd ${minor}: certificates from a shared issuer`, { timeout: 120_000 }, () => {
    let dir: string;
    let ca: TestCA;
    const certs: Record<string, CertFiles> = {};
    const started: EtcdProcess[] = [];
    let pinned: { client: string; peer: string; metrics: string };
    let open: { client: string; peer: string };
    let serverOnly: { client: string; peer: string; metrics: string };

    const issue = (
      file: string,
      role: AutoCertificateRole,
      cluster: string,
      namespace: string,
      ip?: string,
    ) => {
      const shape = certificateShape(role, cluster, namespace);
      const sans = [
        ...shape.dnsNames.map(n => `DNS:${n}`),
        ...[...shape.ipAddresses, ...(ip ? [ip] : [])].map(a => `IP:${a}`),
      ];
      const usage = shape.usages.length === 2 ? 'both' : shape.usages[0];
      certs[file] = ca.issue(file, shape.commonName, sans, usage);
    };

    /**
     * A member of cluster a with the listen, TLS and pin flags the builders give a member with this
     * spec.tls, $(POD_IP) expanded to its address as the kubelet does.
     */
    async function start(name: string, tls: EtcdMemberTLS) {
      const slot = await new LoopbackAddresses().reserve(name);
      issue(`${name}-server`, 'server', 'a', 'ns-a', slot.host);
      issue(`${name}-peer`, 'peer', 'a', 'ns-a', slot.host);
      const client = `https://${slot.host}:${CLIENT_PORT}`;
      const peer = `https://${slot.host}:${PEER_PORT}`;
      const listen = listenFlags(tls).map(f => f.replaceAll('$(POD_IP)', slot.host));
      const etcd = new EtcdProcess({
        binaries: etcdBinaries(minor),
        slot: { ...slot, clientURL: client, peerURL: peer },
        dataDir: join(dir, name),
        initialCluster: `${name}=${peer}`,
        state: 'new',
        token: name,
        extraArgs: [
          ...listen,
          `--cert-file=${certs[`${name}-server`].cert}`,
          `--key-file=${certs[`${name}-server`].key}`,
          ...(tls.clientMTLS ? ['--client-cert-auth=true', `--trusted-ca-file=${ca.cert}`] : []),
          `--peer-cert-file=${certs[`${name}-peer`].cert}`,
          `--peer-key-file=${certs[`${name}-peer`].key}`,
          '--peer-client-cert-auth=true',
          `--peer-trusted-ca-file=${ca.cert}`,
          ...certPinFlags(tls),
        ],
      });
      started.push(etcd);
      const deadline = Date.now() + 30_000;
      while ((await get(`${client}/version`, certs['a-operator'])) !== 200) {
        if (Date.now() > deadline) throw new Error(`etcd ${minor} (${name}) did not answer:\n${etcd.logs()}`);
        await sleep(200);
      }
      const metrics = listen.find(f => f.startsWith('--listen-metrics-urls='))?.split('=')[1] ?? '';
      return { client, peer, metrics };
    }

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'etcd-pin-'));
      ca = new TestCA(dir);
      issue('a-operator', 'operator-client', 'a', 'ns-a');
      issue('b-operator', 'operator-client', 'b', 'ns-b');
      issue('a-in-b-operator', 'operator-client', 'a', 'ns-b');
      issue('a-peer-cert', 'peer', 'a', 'ns-a');
      issue('b-peer-cert', 'peer', 'b', 'ns-b');
      issue('a-in-b-peer-cert', 'peer', 'a', 'ns-b');
      // The flags a member of cluster a in namespace ns-a gets from its spec.
      const pins = certPinFlags(memberTls(certManagerCluster('a', 'ns-a')));
      assert.deepEqual(pins, [
        '--client-cert-allowed-hostname=a-client.ns-a.svc',
        '--peer-cert-allowed-hostname=member.a.ns-a.svc',
      ]);
      const tls = memberTls(certManagerCluster('a', 'ns-a'));
      pinned = await start('pinned', tls!);
      open = await start('open', {
        clientServerSecretRef: { name: 's' },
        clientMTLS: true,
        peerSecretRef: { name: 'p' },
      });
      serverOnly = await start('server-only', {
        clientServerSecretRef: { name: 's' },
        peerSecretRef: { name: 'p' },
      });
    });

    after(async () => {
      for (const etcd of started) await etcd.stop();
      rmSync(dir, { recursive: true, force: true });
    });

    it('pinned: the client port accepts only cluster a of ns-a', async () => {
      assert.equal(await get(`${pinned.client}/version`, certs['a-operator']), 200);
      assert.equal(await get(`${pinned.client}/version`, certs['b-operator']), 'refused');
      assert.equal(await get(`${pinned.client}/version`, certs['a-in-b-operator']), 'refused');
      assert.equal(await get(`${pinned.client}/version`), 'refused', 'no certificate at all');
    });

    it('pinned: the peer port accepts only cluster a of ns-a', async () => {
      assert.equal(await get(`${pinned.peer}/version`, certs['a-peer-cert']), 200);
      assert.equal(await get(`${pinned.peer}/version`, certs['b-peer-cert']), 'refused');
      assert.equal(await get(`${pinned.peer}/version`, certs['a-in-b-peer-cert']), 'refused');
    });

    it('the control, without pins: the same CA lets the other tenants in (the hole the pins close)', async () => {
      assert.equal(await get(`${open.client}/version`, certs['b-operator']), 200);
      assert.equal(await get(`${open.peer}/version`, certs['b-peer-cert']), 200);
    });

    it('/health for the readiness probe (no client certificate): plain HTTP on 2382 with client mTLS, HTTPS on 2381 without', async () => {
      // With client mTLS the metrics port is https and wants a client certificate; the probe's
      // listener is the second URL (etcd-metrics-tls.test.ts checks the rest).
      const [metrics, probe] = pinned.metrics.split(',');
      assert.match(metrics ?? '', /^https:\/\/.*:2381$/);
      assert.match(probe ?? '', /^http:\/\/.*:2382$/);
      assert.equal(await get(`${probe}/health`), 200);
      assert.equal(await get(`${metrics}/health`), 'refused');
      assert.match(serverOnly.metrics, /^https:\/\//);
      assert.equal(await get(`${serverOnly.metrics}/health`), 200);
    });
  });
}
