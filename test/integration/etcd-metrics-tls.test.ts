// A member's listen flags, started for real: each etcd minor with the listen and client TLS flags
// the builder gives a member (etcdFlags; $(POD_IP) expanded as the kubelet does, the certificate
// directory mapped to the test's files). What is checked is what a scraper, the kubelet's readiness
// probe and a stranger on the Pod network can do:
// - client TLS on: /metrics on 2381 only over TLS, verified against the cluster's CA under the
//   client Service's name (what the docs' scrape config uses); plain HTTP there gets no metrics;
// - client mTLS: /metrics on 2381 also needs a client certificate of the cluster's CA, like the
//   client port; the probe's /health is plain HTTP on 2382, without any certificate;
// - IPv6: a member on an IPv6 address (::1) starts with the IPv6 flags and serves all of the above;
//   the IPv4 spelling (no brackets) makes etcd refuse to start, and so does bracketing an IPv4 address.
import assert from 'node:assert/strict';
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { request as httpRequest } from 'node:http';
import { request as httpsRequest } from 'node:https';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EtcdMember, EtcdMemberTLS } from '../../shared/api/etcd-member.ts';
import { CLIENT_TLS_DIR, etcdFlags } from '../../shared/builders/etcd-flags.ts';
import type { PodIPFamily } from '../../shared/builders/etcd-listen.ts';
import { certificateShape, type AutoCertificateRole } from '../../shared/tls/auto-certificates.ts';
import { etcdBinaries, type EtcdMinor } from '../support/etcd-binaries.ts';
import { EtcdProcess, LoopbackAddresses, sleep } from '../support/etcd-process.ts';
import { TestCA, type CertFiles } from '../support/test-certs.ts';

const MINORS: EtcdMinor[] = ['3.4', '3.5', '3.6', '3.7'];
const CLUSTER = 'demo';
const NS = 'default';
/** The name every member's server certificate carries (the client Service's): the scrape's server name. */
const SERVER_NAME = `${CLUSTER}-client.${NS}.svc`;

const MTLS: EtcdMemberTLS = { clientServerSecretRef: { name: 's' }, clientMTLS: true };
const SERVER_TLS: EtcdMemberTLS = { clientServerSecretRef: { name: 's' } };

interface Ask {
  ca?: string;
  cert?: CertFiles;
}

/** GET url: the status and body, or 'refused' when the connection or TLS does not let it through. */
function get(url: string, ask: Ask = {}): Promise<{ status: number; body: string } | 'refused'> {
  return new Promise(resolve => {
    const tls = url.startsWith('https:');
    const options = {
      agent: false,
      timeout: 5000,
      ...(tls && {
        // The kubelet's HTTPS probe verifies nothing; a scraper verifies against the CA by name.
        ...(ask.ca ? { ca: readFileSync(ask.ca), servername: SERVER_NAME } : { rejectUnauthorized: false }),
        ...(ask.cert && { cert: readFileSync(ask.cert.cert), key: readFileSync(ask.cert.key) }),
      }),
    };
    const req = (tls ? httpsRequest : httpRequest)(url, options, res => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('error', () => resolve('refused'));
    req.on('timeout', () => req.destroy());
    req.end();
  });
}

const METRIC = /^etcd_server_has_leader 1$/m;
type Answer = Awaited<ReturnType<typeof get>>;
const served = (r: Answer): r is { status: number; body: string } => r !== 'refused' && r.status === 200;
const hasMetrics = (r: Answer): boolean => served(r) && METRIC.test(r.body);

function memberWith(version: string, tls: EtcdMemberTLS | undefined): EtcdMember {
  return {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdMember',
    metadata: { name: `${CLUSTER}-0`, namespace: NS },
    spec: {
      clusterName: CLUSTER,
      version,
      storage: { size: '1Gi' },
      initialCluster: `${CLUSTER}-0=http://${CLUSTER}-0.${CLUSTER}.${NS}.svc:2380`,
      clusterToken: 't',
      bootstrap: true,
      ...(tls && { tls }),
    },
  };
}

/** The builder's listen and client TLS flags, $(POD_IP) expanded and the certificates mapped. */
function builderFlags(
  version: string,
  tls: EtcdMemberTLS | undefined,
  family: PodIPFamily,
  ip: string,
  certDir: string,
) {
  return etcdFlags(memberWith(version, tls), { namespace: NS, clusterFormed: false, podIPFamily: family })
    .filter(f =>
      /^--(listen-(client|peer|metrics)-urls|cert-file|key-file|client-cert-auth|trusted-ca-file)=/.test(f),
    )
    .map(f => f.replaceAll('$(POD_IP)', ip).replaceAll(CLIENT_TLS_DIR, certDir));
}

function portsFree(host: string, ports: number[]): Promise<boolean> {
  return ports.reduce<Promise<boolean>>(
    async (ok, port) =>
      (await ok) &&
      new Promise(resolve => {
        const server = createServer();
        server.once('error', () => resolve(false));
        server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
      }),
    Promise.resolve(true),
  );
}

for (const minor of MINORS) {
  describe(`etcd ${minor}: metrics and /health with the builder's listen flags`, { timeout: 120_000 }, () => {
    let dir: string;
    let ca: TestCA;
    let certDir: string;
    const certs: Record<string, CertFiles> = {};
    const started: EtcdProcess[] = [];
    const addresses = new LoopbackAddresses();

    const issue = (file: string, role: AutoCertificateRole, extraIP?: string): CertFiles => {
      const shape = certificateShape(role, CLUSTER, NS);
      const sans = [
        ...shape.dnsNames.map(n => `DNS:${n}`),
        ...[...shape.ipAddresses, ...(extraIP ? [extraIP] : [])].map(a => `IP:${a}`),
      ];
      certs[file] = ca.issue(
        file,
        shape.commonName,
        sans,
        shape.usages.length === 2 ? 'both' : shape.usages[0],
      );
      return certs[file];
    };

    /** One member started with the builder's flags; resolves with its base URLs once it serves. */
    async function start(name: string, tls: EtcdMemberTLS | undefined, family: PodIPFamily, ip?: string) {
      const slot = ip ? { name, host: ip, clientURL: '', peerURL: '' } : await addresses.reserve(name);
      const host = family === 'IPv6' ? `[${slot.host}]` : slot.host;
      const scheme = tls ? 'https' : 'http';
      const client = `${scheme}://${host}:2379`;
      const peer = `http://${host}:2380`;
      const etcd = new EtcdProcess({
        binaries: etcdBinaries(minor),
        slot: { ...slot, clientURL: client, peerURL: peer },
        dataDir: join(dir, name),
        initialCluster: `${name}=${peer}`,
        state: 'new',
        token: name,
        extraArgs: builderFlags(etcdBinaries(minor).version, tls, family, slot.host, certDir),
      });
      started.push(etcd);
      const deadline = Date.now() + 30_000;
      while (!served(await get(`${client}/version`, { cert: certs.operator }))) {
        if (!etcd.running || Date.now() > deadline) {
          throw new Error(`etcd ${minor} (${name}) did not serve:\n${etcd.logs()}`);
        }
        await sleep(200);
      }
      // /health answers once a leader is known (a one-member cluster elects itself).
      const probe = tls?.clientMTLS ? `http://${host}:2382` : `${scheme}://${host}:2381`;
      while (!served(await get(`${probe}/health?exclude=NOSPACE`))) {
        if (Date.now() > deadline)
          throw new Error(`etcd ${minor} (${name}): /health never 200:\n${etcd.logs()}`);
        await sleep(200);
      }
      return { client, metrics: `https://${host}:2381`, plainMetrics: `http://${host}:2381`, probe };
    }

    let plain: Awaited<ReturnType<typeof start>>;
    let serverTls: Awaited<ReturnType<typeof start>>;
    let mtls: Awaited<ReturnType<typeof start>>;

    before(async () => {
      dir = mkdtempSync(join(tmpdir(), 'etcd-metrics-'));
      ca = new TestCA(dir);
      // The member's client Secret as the Pod mounts it: tls.crt, tls.key, ca.crt.
      certDir = join(dir, 'client-secret');
      mkdirSync(certDir);
      const server = issue('server', 'server');
      copyFileSync(server.cert, join(certDir, 'tls.crt'));
      copyFileSync(server.key, join(certDir, 'tls.key'));
      copyFileSync(ca.cert, join(certDir, 'ca.crt'));
      issue('operator', 'operator-client');
      // A scraper's client certificate: the cluster's CA, no SANs (see the SAN check below).
      certs.scraper = ca.issue('scraper', 'prometheus', [], 'client');
      // The same client certificate from another CA: what mTLS refuses.
      const other = new TestCA(dir, 'other-ca');
      certs.foreign = other.issue('foreign', 'root', [], 'client');
      plain = await start('plain', undefined, 'IPv4');
      serverTls = await start('server-tls', SERVER_TLS, 'IPv4');
      mtls = await start('mtls', MTLS, 'IPv4');
    });

    after(async () => {
      for (const etcd of started) await etcd.stop({ force: true });
      rmSync(dir, { recursive: true, force: true });
    });

    it('without client TLS: plain metrics, like the client port (the control)', async () => {
      assert.ok(hasMetrics(await get(`${plain.plainMetrics}/metrics`)));
      assert.equal(plain.probe, plain.plainMetrics);
    });

    it('client TLS: metrics only over TLS, verified with the CA; plain HTTP gets none; the HTTPS probe reads /health', async () => {
      assert.ok(hasMetrics(await get(`${serverTls.metrics}/metrics`, { ca: ca.cert })));
      const overHttp = await get(`${serverTls.plainMetrics}/metrics`);
      assert.ok(!hasMetrics(overHttp), `plain HTTP on 2381: ${JSON.stringify(overHttp).slice(0, 200)}`);
      assert.equal(serverTls.probe, serverTls.metrics);
      assert.ok(
        served(await get(`${serverTls.probe}/health?exclude=NOSPACE`)),
        'the kubelet: HTTPS, no certificate',
      );
    });

    it('client mTLS: metrics need a client certificate of the cluster CA; plain HTTP and no certificate get none', async () => {
      const scraped = await get(`${mtls.metrics}/metrics`, { ca: ca.cert, cert: certs.scraper });
      assert.ok(hasMetrics(scraped), JSON.stringify(scraped).slice(0, 300));
      assert.equal(await get(`${mtls.metrics}/metrics`, { ca: ca.cert }), 'refused', 'no client certificate');
      assert.equal(
        await get(`${mtls.metrics}/metrics`, { ca: ca.cert, cert: certs.foreign }),
        'refused',
        'a certificate of another CA',
      );
      assert.ok(!hasMetrics(await get(`${mtls.plainMetrics}/metrics`)), 'plain HTTP on 2381');
    });

    it("client mTLS: etcd's metrics listener also matches a client certificate's SANs to the caller's address; the client port's /metrics does not", async () => {
      // etcd's transport listener (checkCertSAN) wants a certificate with SANs to name the caller's
      // address; the client port (cmux) does not check. So a client certificate with DNS names,
      // like the operator's (and any certificate a pinned cluster accepts), scrapes /metrics on the
      // client port, not on 2381 (docs/security.md, "Scraping etcd's metrics").
      assert.equal(await get(`${mtls.metrics}/metrics`, { ca: ca.cert, cert: certs.operator }), 'refused');
      assert.ok(hasMetrics(await get(`${mtls.client}/metrics`, { ca: ca.cert, cert: certs.operator })));
      assert.equal(await get(`${mtls.client}/metrics`, { ca: ca.cert }), 'refused');
    });

    it('client mTLS: the readiness probe reads /health on 2382, plain HTTP and no certificate', async () => {
      assert.equal(mtls.probe.endsWith(':2382'), true);
      const health = await get(`${mtls.probe}/health?exclude=NOSPACE`);
      assert.ok(served(health), JSON.stringify(health));
      assert.match(health.body, /"health":\s*"true"/);
    });

    it('IPv6: a member on ::1 starts with the IPv6 flags and serves client, metrics and probe there', async t => {
      if (!(await portsFree('::1', [2379, 2380, 2381, 2382]))) {
        t.skip('[::1]:2379-2382 in use on this machine');
        return;
      }
      const v6 = await start('ipv6', MTLS, 'IPv6', '::1');
      try {
        assert.match(v6.client, /^https:\/\/\[::1\]:2379$/);
        assert.ok(served(await get(`${v6.client}/version`, { ca: ca.cert, cert: certs.operator })));
        const scraped = await get(`${v6.metrics}/metrics`, { ca: ca.cert, cert: certs.scraper });
        assert.ok(hasMetrics(scraped), JSON.stringify(scraped).slice(0, 300));
        assert.equal(await get(`${v6.metrics}/metrics`, { ca: ca.cert }), 'refused');
        assert.ok(served(await get(`${v6.probe}/health?exclude=NOSPACE`)));
      } finally {
        await started.pop()?.stop({ force: true });
      }
    });

    it('IPv6: the IPv4 spelling (no brackets) makes etcd refuse to start; brackets around IPv4 too', async t => {
      const version = etcdBinaries(minor).version;
      const refuses = async (name: string, flags: string[]): Promise<string> => {
        const etcd = new EtcdProcess({
          binaries: etcdBinaries(minor),
          slot: { name, host: '::1', clientURL: 'http://[::1]:2379', peerURL: 'http://[::1]:2380' },
          dataDir: join(dir, name),
          initialCluster: `${name}=http://[::1]:2380`,
          state: 'new',
          token: name,
          extraArgs: flags,
        });
        // An unref'd timer: when etcd exits at once, a pending 15 s timer must not hold the file open.
        const giveUp = new Promise<undefined>(resolve =>
          setTimeout(() => resolve(undefined), 15_000).unref(),
        );
        const exit = await Promise.race([etcd.exited, giveUp]);
        await etcd.stop({ force: true });
        assert.ok(exit && exit.code !== 0, `${name}: etcd kept running with ${flags.join(' ')}`);
        return etcd.logs();
      };
      if (!(await portsFree('::1', [2379, 2380, 2381]))) {
        t.skip('[::1]:2379-2381 in use on this machine');
        return;
      }
      const bare = builderFlags(version, undefined, 'IPv4', '::1', certDir);
      assert.ok(bare.includes('--listen-client-urls=http://::1:2379'), bare.join(' '));
      assert.match(
        await refuses('ipv6-bare', bare),
        /invalid port "::1:23\d\d" after host|does not have the form "host:port"/i,
      );
      // What "always brackets" would give an IPv4 Pod: the net/url of Go 1.24.8+ refuses it (the
      // 3.5-3.7 binaries; the 3.4 one is built with an older Go that still took it).
      if (minor === '3.4') return;
      const v4 = await addresses.reserve('ipv4-bracketed');
      const bracketed = builderFlags(version, undefined, 'IPv6', v4.host, certDir);
      assert.ok(bracketed.includes(`--listen-client-urls=http://[${v4.host}]:2379`), bracketed.join(' '));
      assert.match(await refuses('ipv4-bracketed', bracketed), /invalid|IP-literal|expected IP/i);
    });
  });
}
