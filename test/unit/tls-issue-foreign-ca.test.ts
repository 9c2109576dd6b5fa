// issueLeaf under a CA made elsewhere (openssl, as a user's cert-manager CA Issuer would hold):
// the leaf's issuer must be the CA's subject byte for byte. Go (etcd) finds a certificate's parent
// by comparing the raw bytes, so a re-encoded name (PrintableString for openssl's UTF8String) made
// etcd answer "unknown certificate authority" to every client and peer.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { X509Certificate } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { issueLeaf } from '../../shared/tls/issue.ts';

describe('issueLeaf under a CA made by openssl', () => {
  it('writes the CA subject as the issuer, byte for byte', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'etcdfn-ca-'));
    try {
      execFileSync(
        'openssl',
        [
          'req',
          '-x509',
          '-newkey',
          'ec',
          '-pkeyopt',
          'ec_paramgen_curve:P-256',
          '-nodes',
          '-days',
          '2',
          '-subj',
          '/CN=etcd-ca',
          '-keyout',
          join(dir, 'ca.key'),
          '-out',
          join(dir, 'ca.crt'),
          '-addext',
          'basicConstraints=critical,CA:TRUE',
          '-addext',
          'keyUsage=critical,keyCertSign,cRLSign',
        ],
        { stdio: 'ignore' },
      );
      const ca = {
        cert: readFileSync(join(dir, 'ca.crt'), 'utf8'),
        key: readFileSync(join(dir, 'ca.key'), 'utf8'),
      };
      const now = Date.now();
      const leaf = await issueLeaf(ca, {
        commonName: 'app',
        dnsNames: [],
        ipAddresses: [],
        usages: ['client'],
        notBefore: new Date(now - 60_000),
        notAfter: new Date(now + 3600_000),
      });
      const der = (pem: string): Buffer => new X509Certificate(pem).raw;
      // The issuer Name's DER inside the leaf equals the subject Name's DER inside the CA.
      assert.ok(der(ca.cert).includes(subjectDer(der(ca.cert))), 'openssl wrote UTF8String');
      assert.ok(
        der(leaf.cert).includes(subjectDer(der(ca.cert))),
        'the leaf carries the CA subject bytes as its issuer',
      );
      assert.ok(new X509Certificate(leaf.cert).checkIssued(new X509Certificate(ca.cert)));
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

/** The CA's common name as openssl encodes it (UTF8String, tag 0x0c): the bytes Go compares. */
function subjectDer(_cert: Buffer): Buffer {
  return Buffer.concat([Buffer.from([0x0c, 7]), Buffer.from('etcd-ca')]);
}
