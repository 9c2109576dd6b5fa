// The auto TLS provider's certificates work for real etcd (3.4.23 and 3.5.16): three members
// formed over peer TLS with the issued peer certificate, clients held to mutual TLS with the
// issued server certificate, the operator's client certificate let in, a client without one (or
// with one from another CA) refused; and a re-issued leaf under the same CA is served on the next
// connection without a restart, while clients that only trust the CA keep working.
import assert from 'node:assert/strict';
import { execFile, spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, renameSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { autoCertificates, type AutoCertificate } from '../../shared/tls/auto-certificates.ts';
import { createCa, issueLeaf, type KeyPairPem } from '../../shared/tls/issue.ts';
import { readCertificate } from '../../shared/tls/read.ts';
import { etcdBinaries, ETCD_MINORS, type EtcdBinaries } from '../support/etcd-binaries.ts';

const execFileAsync = promisify(execFile);
const DAY = 86_400_000;

const cluster: EtcdCluster = {
  apiVersion: 'etcdfn.io/v1alpha1',
  kind: 'EtcdCluster',
  metadata: { name: 'tls', namespace: 'ns', uid: 'u1' },
  spec: { replicas: 3, version: '3.5.16', tls: { client: { auto: {} }, peer: { auto: {} } } },
};

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const server = createServer();
    server.once('error', reject);
    server.listen({ host: '127.0.0.1', port: 0 }, () => {
      const address = server.address();
      const port = typeof address === 'object' && address ? address.port : 0;
      server.close(() => resolve(port));
    });
  });
}

async function leaf(ca: KeyPairPem, role: AutoCertificate['role']): Promise<KeyPairPem> {
  const cert = autoCertificates(cluster).find(c => c.role === role);
  assert.ok(cert, role);
  const now = Date.now();
  return issueLeaf(ca, { ...cert, notBefore: new Date(now - 60_000), notAfter: new Date(now + 90 * DAY) });
}

/** Writes a Secret's three keys the way a secret volume shows them (whole files, swapped in). */
function writeSecretDir(dir: string, pair: KeyPairPem, ca: string): void {
  mkdirSync(dir, { recursive: true });
  for (const [file, text] of Object.entries({ 'tls.crt': pair.cert, 'tls.key': pair.key, 'ca.crt': ca })) {
    writeFileSync(join(dir, `.${file}`), text);
    renameSync(join(dir, `.${file}`), join(dir, file));
  }
}

interface Member {
  name: string;
  client: string;
  peer: string;
  child?: ChildProcess;
}

for (const minor of ETCD_MINORS) {
  describe(`auto TLS certificates on etcd ${minor}`, () => {
    let bins: EtcdBinaries;
    let root: string;
    let ca: KeyPairPem;
    let operator: KeyPairPem;
    const members: Member[] = [];
    const logs: string[] = [];

    before(async () => {
      bins = etcdBinaries(minor);
      root = mkdtempSync(join(tmpdir(), 'etcdfn-auto-tls-'));
      const now = Date.now();
      ca = await createCa('ns/tls etcd CA', new Date(now - 60_000), new Date(now + 3650 * DAY));
      operator = await leaf(ca, 'operator-client');
      writeSecretDir(join(root, 'server'), await leaf(ca, 'server'), ca.cert);
      writeSecretDir(join(root, 'peer'), await leaf(ca, 'peer'), ca.cert);
      for (const name of ['tls-0', 'tls-1', 'tls-2'])
        members.push({
          name,
          client: `https://127.0.0.1:${await freePort()}`,
          peer: `https://127.0.0.1:${await freePort()}`,
        });
      const initial = members.map(m => `${m.name}=${m.peer}`).join(',');
      for (const m of members) {
        // The TLS flags are the ones shared/builders/etcd-flags.ts gives a member with auto TLS.
        m.child = spawn(
          bins.etcd,
          [
            `--name=${m.name}`,
            `--data-dir=${join(root, m.name)}`,
            `--listen-client-urls=${m.client}`,
            `--advertise-client-urls=${m.client}`,
            `--listen-peer-urls=${m.peer}`,
            `--initial-advertise-peer-urls=${m.peer}`,
            `--initial-cluster=${initial}`,
            '--initial-cluster-state=new',
            '--initial-cluster-token=auto-tls',
            '--heartbeat-interval=50',
            '--election-timeout=500',
            `--cert-file=${root}/server/tls.crt`,
            `--key-file=${root}/server/tls.key`,
            '--client-cert-auth=true',
            `--trusted-ca-file=${root}/server/ca.crt`,
            `--peer-cert-file=${root}/peer/tls.crt`,
            `--peer-key-file=${root}/peer/tls.key`,
            `--peer-trusted-ca-file=${root}/peer/ca.crt`,
            '--peer-client-cert-auth=true',
            '--logger=zap',
          ],
          { stdio: ['ignore', 'ignore', 'pipe'] },
        );
        m.child.stderr?.on('data', (chunk: Buffer) => {
          logs.push(`[${m.name}] ${chunk.toString()}`);
          if (logs.length > 300) logs.shift();
        });
      }
    });

    after(async () => {
      await Promise.all(
        members.map(
          m =>
            new Promise<void>(resolve => {
              if (!m.child || m.child.exitCode !== null) return resolve();
              m.child.once('exit', () => resolve());
              m.child.kill('SIGKILL');
            }),
        ),
      );
      if (root) rmSync(root, { recursive: true, force: true });
    });

    const withCert = (pair: KeyPairPem): Etcd3 =>
      new Etcd3({
        hosts: members.map(m => m.client),
        credentials: {
          rootCertificate: Buffer.from(ca.cert),
          privateKey: Buffer.from(pair.key),
          certChain: Buffer.from(pair.cert),
        },
        dialTimeout: 2_000,
        // Node refuses an IP as TLS server name; check the certificate against the client
        // Service's name instead, the name the operator dials in a real cluster.
        grpcOptions: { 'grpc.ssl_target_name_override': 'tls-client.ns.svc' },
      });

    async function etcdctl(args: string[], cert?: KeyPairPem): Promise<{ ok: boolean; out: string }> {
      const dir = mkdtempSync(join(root, 'ctl-'));
      writeFileSync(join(dir, 'ca.crt'), ca.cert);
      const certArgs: string[] = [`--cacert=${dir}/ca.crt`];
      if (cert) {
        writeFileSync(join(dir, 'tls.crt'), cert.cert);
        writeFileSync(join(dir, 'tls.key'), cert.key);
        certArgs.push(`--cert=${dir}/tls.crt`, `--key=${dir}/tls.key`);
      }
      const env = { ...process.env, ETCDCTL_API: '3' };
      const endpoints = `--endpoints=${members.map(m => m.client).join(',')}`;
      try {
        const { stdout } = await execFileAsync(
          bins.etcdctl,
          [endpoints, ...certArgs, '--command-timeout=3s', '--dial-timeout=2s', ...args],
          { env },
        );
        return { ok: true, out: stdout };
      } catch (err) {
        return { ok: false, out: String((err as { stderr?: string }).stderr ?? err) };
      }
    }

    it('forms a three-member cluster over peer TLS and serves the operator certificate', async () => {
      const client = withCert(operator);
      try {
        let health: { ok: boolean; out: string } = { ok: false, out: '' };
        for (let i = 0; i < 100 && !health.ok; i++) {
          health = await etcdctl(['endpoint', 'health', '--cluster'], operator);
          if (!health.ok) await new Promise(r => setTimeout(r, 200));
        }
        assert.ok(health.ok, `cluster never healthy:\n${health.out}\n${logs.slice(-30).join('')}`);
        const list = await client.cluster.memberList({ linearizable: true });
        assert.deepEqual(list.members.map(m => m.name).sort(), ['tls-0', 'tls-1', 'tls-2']);
        await client.put('written-over-mtls').value('yes');
        assert.equal(await client.get('written-over-mtls').string(), 'yes');
      } finally {
        client.close();
      }
    });

    it('refuses a client without a certificate, and one whose certificate another CA signed', async () => {
      const bare = await etcdctl(['get', 'written-over-mtls']);
      assert.equal(bare.ok, false, 'a client without a certificate read data');
      assert.match(bare.out, /certificate|tls|handshake|deadline/i);

      const now = Date.now();
      const stranger = await createCa('someone else', new Date(now - 60_000), new Date(now + DAY));
      const foreign = await leaf(stranger, 'operator-client');
      const refused = await etcdctl(['get', 'written-over-mtls'], foreign);
      assert.equal(refused.ok, false, 'a certificate from another CA was accepted');

      const accepted = await etcdctl(['get', 'written-over-mtls', '--print-value-only'], operator);
      assert.ok(accepted.ok, accepted.out);
      assert.equal(accepted.out.trim(), 'yes');
    });

    it('serves a re-issued server certificate on the next connection, trusted through the same CA', async () => {
      const serial = (): Promise<string> =>
        new Promise((resolve, reject) => {
          const url = new URL(members[0]?.client ?? '');
          const socket = connect({
            host: url.hostname,
            port: Number(url.port),
            ca: ca.cert,
            cert: operator.cert,
            key: operator.key,
            servername: 'localhost',
          });
          socket.once('secureConnect', () => {
            resolve(socket.getPeerCertificate().serialNumber);
            socket.end();
          });
          socket.once('error', reject);
        });
      const before = await serial();
      const renewed = await leaf(ca, 'server');
      writeSecretDir(join(root, 'server'), renewed, ca.cert);
      const facts = readCertificate(renewed.cert, ca.cert);
      assert.equal(facts?.signedByCa, true);
      const afterRenewal = await serial();
      assert.notEqual(afterRenewal, before);
      assert.equal(
        afterRenewal.toLowerCase(),
        new (await import('node:crypto')).X509Certificate(renewed.cert).serialNumber.toLowerCase(),
      );

      const read = await etcdctl(['get', 'written-over-mtls', '--print-value-only'], operator);
      assert.ok(read.ok, read.out);
      assert.equal(read.out.trim(), 'yes');
    });
  });
}
