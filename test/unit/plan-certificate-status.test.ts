// status.certificates and the TLSCertificates condition from what the certificate Secrets hold.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { CERTIFICATES_CONDITION, withCertificates } from '../../shared/plan/tls/certificate-status.ts';

const now = new Date('2026-11-26T12:00:00Z');
const facts = {
  notBefore: new Date('2026-11-26T00:00:00Z'),
  notAfter: new Date('2027-02-24T00:00:00Z'),
  dnsNames: [],
  ipAddresses: [],
};

describe('withCertificates', () => {
  it('writes each certificate’s expiry, and the renewal time of those the operator issues', () => {
    const status = withCertificates(
      { phase: 'Running' },
      [
        { secret: 'db-server-tls', role: 'server', issuedByOperator: true, facts },
        { secret: 'byo-peer', role: 'peer', issuedByOperator: false, facts },
        { secret: 'db-operator-client-tls', role: 'operator-client', issuedByOperator: true },
      ],
      undefined,
      now,
    );
    assert.deepEqual(status.certificates, [
      {
        secret: 'db-server-tls',
        role: 'server',
        notAfter: '2027-02-24T00:00:00Z',
        renewAfter: '2027-01-25T00:00:00Z',
      },
      { secret: 'byo-peer', role: 'peer', notAfter: '2027-02-24T00:00:00Z' },
      { secret: 'db-operator-client-tls', role: 'operator-client' },
    ]);
    assert.equal(status.phase, 'Running');
    assert.equal(status.conditions, undefined);
  });

  it('says what is wrong and what to do when the CA is unusable, and clears it once fixed', () => {
    const broken = withCertificates(
      {},
      [],
      {
        reason: 'CertificateAuthorityUnusable',
        message: 'auto TLS cannot issue certificates: the CA has expired; delete its Secret',
      },
      now,
    );
    const condition = broken.conditions?.find(c => c.type === CERTIFICATES_CONDITION);
    assert.equal(condition?.status, 'False');
    assert.equal(condition?.reason, 'CertificateAuthorityUnusable');
    assert.match(condition?.message ?? '', /delete its Secret/);
    assert.equal(broken.certificates, undefined);
    const fixed = withCertificates(broken, [], undefined, now);
    assert.equal(
      fixed.conditions?.find(c => c.type === CERTIFICATES_CONDITION),
      undefined,
    );
  });
});
