// What auto TLS issues (shared/tls/), read back by openssl, an X.509 decoder that is not ours: the
// CA may sign leaves only (CA:TRUE, path length 0, critical, as RFC 5280 asks); a leaf is no CA, is
// signed by that CA (its authority key ID is the CA's subject key ID) and may be used for exactly the
// ends asked for, under exactly the names asked for; serials are positive and never repeat. Then
// what the operator reads from a certificate to decide on renewal (shared/tls/read.ts), and the names
// each role's certificate must cover (shared/tls/auto-certificates.ts). Real handshakes with etcd are
// test/integration/auto-tls-etcd.test.ts and etcd-cert-pinning.test.ts.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createPrivateKey, webcrypto } from 'node:crypto';
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';
import { describe, it } from 'node:test';
import type { EtcdClusterTLS } from '../../shared/api/etcd-cluster.ts';
import { autoCertificates, certificateShape } from '../../shared/tls/auto-certificates.ts';
import { createCa, issueLeaf, type KeyPairPem, type LeafRequest } from '../../shared/tls/issue.ts';
import { readCertificate } from '../../shared/tls/read.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const openssl = (pem: string, ...args: string[]) =>
  execFileSync('openssl', ['x509', '-noout', ...args], { input: pem }).toString();

/** The certificate as openssl prints it: subject, issuer and its extensions, key IDs shown as ID. */
function profile(pem: string) {
  const text = openssl(pem, '-text');
  const line = (label: string) => new RegExp(`^\\s*${label}: (.*)$`, 'm').exec(text)?.[1];
  const from = text.indexOf('X509v3 extensions:');
  const to = text.indexOf('Signature Algorithm', from);
  const extensions = text
    .slice(from, to)
    .split('\n')
    .slice(1)
    .map(l => l.trim())
    .filter(Boolean)
    .map(l => (/^([0-9A-F]{2}:){19}[0-9A-F]{2}$/.test(l) ? 'ID' : l));
  const ids = [...text.matchAll(/Key Identifier: *\n\s*([0-9A-F:]+)/g)].map(m => m[1]);
  return { subject: line('Subject'), issuer: line('Issuer'), extensions, ids };
}

const HOUR = 3600_000;
const now = Date.now();
const window = { notBefore: new Date(now - HOUR), notAfter: new Date(now + 24 * HOUR) };
const leafRequest = (extra: Partial<LeafRequest> = {}): LeafRequest => ({
  commonName: 'demo-peer',
  dnsNames: ['*.demo.prod.svc', 'localhost'],
  ipAddresses: ['127.0.0.1', '::1'],
  usages: ['server', 'client'],
  ...window,
  ...extra,
});

describe('auto TLS certificates, read back by openssl', () => {
  let ca: KeyPairPem;
  const caReady = createCa('demo-ca', window.notBefore, window.notAfter).then(made => (ca = made));

  it('the CA: self-signed, may sign leaves only (critical CA:TRUE, path length 0), nothing else', async () => {
    await caReady;
    assert.deepEqual(profile(ca.cert), {
      subject: 'CN = demo-ca',
      issuer: 'CN = demo-ca',
      extensions: [
        'X509v3 Basic Constraints: critical',
        'CA:TRUE, pathlen:0',
        'X509v3 Key Usage: critical',
        'Certificate Sign, CRL Sign',
        'X509v3 Subject Key Identifier:',
        'ID',
      ],
      ids: [profile(ca.cert).ids[0]],
    });
  });

  it('a leaf for both ends: no CA, signed by the CA, server and client use, every name asked for', async () => {
    await caReady;
    const leaf = await issueLeaf(ca, leafRequest());
    const got = profile(leaf.cert);
    assert.deepEqual(got.extensions, [
      'X509v3 Basic Constraints: critical',
      'CA:FALSE',
      'X509v3 Key Usage: critical',
      'Digital Signature, Key Encipherment',
      'X509v3 Extended Key Usage:',
      'TLS Web Server Authentication, TLS Web Client Authentication',
      'X509v3 Subject Alternative Name:',
      'DNS:*.demo.prod.svc, DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1',
      'X509v3 Authority Key Identifier:',
      'ID',
    ]);
    assert.equal(got.subject, 'CN = demo-peer');
    assert.equal(got.issuer, 'CN = demo-ca');
    assert.equal(got.ids[0], profile(ca.cert).ids[0], 'the authority key ID is the CA’s key ID');
    assert.equal(readCertificate(leaf.cert, ca.cert)?.signedByCa, true);
  });

  it('a server-only and a client-only leaf carry only that use; a leaf with no names has no SAN', async () => {
    await caReady;
    const server = profile((await issueLeaf(ca, leafRequest({ usages: ['server'] }))).cert);
    assert.ok(server.extensions.includes('TLS Web Server Authentication'), server.extensions.join('\n'));
    const client = profile(
      (
        await issueLeaf(
          ca,
          leafRequest({ commonName: 'etcdfn-operator', usages: ['client'], dnsNames: [], ipAddresses: [] }),
        )
      ).cert,
    );
    assert.ok(client.extensions.includes('TLS Web Client Authentication'), client.extensions.join('\n'));
    assert.equal(client.subject, 'CN = etcdfn-operator');
    assert.ok(!client.extensions.includes('X509v3 Subject Alternative Name:'), client.extensions.join('\n'));
  });

  it('serials: positive, 16 random bytes, never the same twice', async () => {
    await caReady;
    const serials = [
      openssl(ca.cert, '-serial'),
      ...(await Promise.all(
        Array.from({ length: 8 }, async () => openssl((await issueLeaf(ca, leafRequest())).cert, '-serial')),
      )),
    ].map(s => s.trim().replace(/^serial=/, ''));
    assert.equal(new Set(serials).size, serials.length, serials.join());
    for (const s of serials) {
      assert.ok(s.length <= 32 && s.length % 2 === 0, s);
      assert.ok(Number.parseInt(s.slice(0, 2), 16) < 0x80, `${s} would be negative`);
    }
    // The top byte is random too (only its sign bit cleared): not every serial can be short of it.
    assert.ok(
      serials.some(s => s.length === 32),
      serials.join(),
    );
  });

  it('the leaf’s private key is the certificate’s (a TLS server can use the pair)', async () => {
    await caReady;
    const leaf = await issueLeaf(ca, leafRequest());
    const { createPrivateKey, createPublicKey, X509Certificate } = await import('node:crypto');
    const fromKey = createPublicKey(createPrivateKey(leaf.key)).export({ format: 'der', type: 'spki' });
    const fromCert = new X509Certificate(leaf.cert).publicKey.export({ format: 'der', type: 'spki' });
    assert.deepEqual(fromKey, fromCert);
  });
});

/** The CA's key under another name, self-signed: what a CA re-made by hand with the old key is. */
async function renamedCa(ca: KeyPairPem, name: string): Promise<string> {
  const jwk = createPrivateKey(ca.key).export({ format: 'jwk' });
  const algorithm = { name: 'ECDSA', namedCurve: 'P-256' };
  const privateKey = await webcrypto.subtle.importKey('jwk', jwk, algorithm, false, ['sign']);
  const { d: _d, ...pub } = jwk;
  const publicKey = await webcrypto.subtle.importKey('jwk', pub, algorithm, true, ['verify']);
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: '01',
      name: `CN=${name}`,
      ...window,
      keys: { privateKey, publicKey },
      signingAlgorithm: { name: 'ECDSA', hash: 'SHA-256' },
      extensions: [new x509.BasicConstraintsExtension(true, 0, true)],
    },
    webcrypto,
  );
  return cert.toString('pem');
}

describe('what the operator reads from a certificate', () => {
  const made = (async () => {
    const ca = await createCa('demo-ca', window.notBefore, window.notAfter);
    const leaf = await issueLeaf(ca, leafRequest());
    // A new CA under the same name (the CA Secret was replaced): old leaves are not its.
    const sameName = await createCa('demo-ca', window.notBefore, window.notAfter);
    const other = await createCa('other-ca', window.notBefore, window.notAfter);
    return { ca, leaf, sameName, other };
  })();

  it('validity and names, IPv6 in its short form', async () => {
    const { leaf } = await made;
    const facts = readCertificate(leaf.cert);
    assert.deepEqual(facts, {
      notBefore: new Date(Math.floor(window.notBefore.getTime() / 1000) * 1000),
      notAfter: new Date(Math.floor(window.notAfter.getTime() / 1000) * 1000),
      dnsNames: ['*.demo.prod.svc', 'localhost'],
      ipAddresses: ['127.0.0.1', '::1'],
    });
    assert.equal('signedByCa' in (facts ?? {}), false, 'no CA given, nothing said about one');
  });

  it('signed by the CA given: its own yes; a new CA with the same name, another CA, or no CA text: no', async () => {
    const { ca, leaf, sameName, other } = await made;
    assert.equal(readCertificate(leaf.cert, ca.cert)?.signedByCa, true);
    assert.equal(readCertificate(leaf.cert, sameName.cert)?.signedByCa, false);
    assert.equal(readCertificate(leaf.cert, other.cert)?.signedByCa, false);
    assert.equal(readCertificate(leaf.cert, 'not a certificate')?.signedByCa, false);
  });

  it('the CA’s key under another name is not the issuer the leaf names (no TLS peer would chain it): no', async () => {
    const { ca, leaf } = await made;
    assert.equal(readCertificate(leaf.cert, await renamedCa(ca, 'renamed-ca'))?.signedByCa, false);
    // The same key under the old name is (a CA re-made with its key keeps its leaves valid).
    assert.equal(readCertificate(leaf.cert, await renamedCa(ca, 'demo-ca'))?.signedByCa, true);
  });

  it('a certificate with no names has empty lists; text that is no certificate is undefined', async () => {
    const { ca } = await made;
    const bare = await issueLeaf(ca, leafRequest({ dnsNames: [], ipAddresses: [] }));
    const facts = readCertificate(bare.cert);
    assert.deepEqual([facts?.dnsNames, facts?.ipAddresses], [[], []]);
    assert.equal(readCertificate('garbage'), undefined);
  });

  it('IP names only: no DNS name is made up, and IPv4 stays as written', async () => {
    const { ca } = await made;
    const ipOnly = await issueLeaf(ca, leafRequest({ dnsNames: [], ipAddresses: ['10.0.0.7', 'fd00::7'] }));
    const facts = readCertificate(ipOnly.cert);
    assert.deepEqual([facts?.dnsNames, facts?.ipAddresses], [[], ['10.0.0.7', 'fd00::7']]);
  });
});

describe('the certificates each auto TLS role needs', () => {
  it('server: the members’ wildcard, the client Service by every name a Pod may use, and loopback', () => {
    assert.deepEqual(certificateShape('server', 'demo', 'prod'), {
      role: 'server',
      secret: 'demo-server-tls',
      commonName: 'demo-server',
      dnsNames: [
        '*.demo.prod.svc',
        '*.demo.prod.svc.cluster.local',
        'demo-client',
        'demo-client.prod',
        'demo-client.prod.svc',
        'demo-client.prod.svc.cluster.local',
        'localhost',
      ],
      ipAddresses: ['127.0.0.1', '::1'],
      usages: ['server'],
    });
  });

  it('operator client: the etcd user etcdfn-operator, under the name etcd pins client certificates to', () => {
    assert.deepEqual(certificateShape('operator-client', 'demo', 'prod'), {
      role: 'operator-client',
      secret: 'demo-operator-client-tls',
      commonName: 'etcdfn-operator',
      dnsNames: ['demo-client.prod.svc'],
      ipAddresses: [],
      usages: ['client'],
    });
  });

  it('peer: the members’ wildcard and loopback, for both ends', () => {
    assert.deepEqual(certificateShape('peer', 'demo', 'prod'), {
      role: 'peer',
      secret: 'demo-peer-tls',
      commonName: 'demo-peer',
      dnsNames: ['*.demo.prod.svc', '*.demo.prod.svc.cluster.local', 'localhost'],
      ipAddresses: ['127.0.0.1', '::1'],
      usages: ['server', 'client'],
    });
  });

  const roles = (tls: unknown) =>
    autoCertificates(etcdCluster({ metadata: { uid: undefined }, spec: { tls: tls as EtcdClusterTLS } })).map(
      c => c.role,
    );

  it('which roles a spec asks for, with either plane left out entirely', () => {
    assert.deepEqual(roles(undefined), []);
    assert.deepEqual(roles({ peer: { auto: true } }), ['peer']);
    assert.deepEqual(roles({ client: { auto: true } }), ['server', 'operator-client']);
    assert.deepEqual(roles({ client: { auto: true }, peer: { auto: true } }), [
      'server',
      'operator-client',
      'peer',
    ]);
  });
});
