// planAutoTls: which certificate the auto TLS provider issues next, from what the Secrets hold.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import {
  autoTlsTimingsFromEnv,
  planAutoTls,
  renewalTime,
  type AutoTlsObserved,
  type ObservedCertificate,
} from '../../shared/plan/tls/auto-tls.ts';
import { autoCertificates } from '../../shared/tls/auto-certificates.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const DAY = 86_400_000;
const now = new Date('2026-11-26T12:00:00Z');
const at = (days: number): Date => new Date(now.getTime() + days * DAY);

/** Cluster db in prod with `tls`. */
const dbWithTls = (tls: EtcdCluster['spec']['tls']): EtcdCluster =>
  etcdCluster({ metadata: { name: 'db', uid: 'u' }, spec: { tls } });
const both = autoCertificates(dbWithTls({ client: { auto: {} }, peer: { auto: {} } }));

/** A leaf issued `age` days ago for 90 days, with the names asked for. */
function leaf(
  index: number,
  age: number,
  over: Partial<{ signedByCa: boolean; dnsNames: string[] }> = {},
): ObservedCertificate {
  const cert = both[index];
  assert.ok(cert);
  return {
    kind: 'read',
    facts: {
      notBefore: at(-age),
      notAfter: at(90 - age),
      dnsNames: over.dnsNames ?? cert.dnsNames,
      ipAddresses: cert.ipAddresses,
      signedByCa: over.signedByCa ?? true,
    },
  };
}
const ca: ObservedCertificate = {
  kind: 'read',
  facts: { notBefore: at(-10), notAfter: at(3640), dnsNames: [], ipAddresses: [] },
};
const observed = (caState: ObservedCertificate, leaves: ObservedCertificate[]): AutoTlsObserved => ({
  now,
  ca: caState,
  leaves: both.map((certificate, i) => ({ certificate, observed: leaves[i] ?? { kind: 'missing' } })),
});

describe('which certificates auto TLS keeps', () => {
  it('keeps a server, an operator client and a peer certificate when both planes are auto', () => {
    assert.deepEqual(
      both.map(c => [c.role, c.secret, c.usages]),
      [
        ['server', 'db-server-tls', ['server']],
        ['operator-client', 'db-operator-client-tls', ['client']],
        ['peer', 'db-peer-tls', ['server', 'client']],
      ],
    );
  });

  it('covers every member under the headless Service and the client Service by name', () => {
    const server = both[0];
    assert.ok(server?.dnsNames.includes('*.db.prod.svc'));
    assert.ok(server?.dnsNames.includes('*.db.prod.svc.cluster.local'));
    assert.ok(server?.dnsNames.includes('db-client.prod.svc'));
    assert.ok(both[2]?.dnsNames.includes('*.db.prod.svc'));
  });

  it('keeps none for a cluster without auto TLS, and only the peer one for peer-only auto', () => {
    assert.deepEqual(autoCertificates(dbWithTls(undefined)), []);
    const peerOnly = autoCertificates(
      dbWithTls({ client: { serverSecretRef: { name: 's' } }, peer: { auto: {} } }),
    );
    assert.deepEqual(
      peerOnly.map(c => c.role),
      ['peer'],
    );
  });
});

describe('planAutoTls', () => {
  const rows: [string, AutoTlsObserved, string][] = [
    ['no CA yet: create it first', observed({ kind: 'missing' }, []), 'create-ca'],
    ['CA unreadable: a person decides', observed({ kind: 'unreadable' }, []), 'ca-unusable'],
    [
      'CA expired: a person decides',
      observed(
        { kind: 'read', facts: { notBefore: at(-400), notAfter: at(-1), dnsNames: [], ipAddresses: [] } },
        [],
      ),
      'ca-unusable',
    ],
    ['CA, no leaves: the server certificate first', observed(ca, []), 'issue db-server-tls missing'],
    [
      'server there: the operator client next',
      observed(ca, [leaf(0, 1)]),
      'issue db-operator-client-tls missing',
    ],
    ['all fresh: nothing', observed(ca, [leaf(0, 1), leaf(1, 1), leaf(2, 1)]), 'none'],
    ['peer at 59 of 90 days: not yet', observed(ca, [leaf(0, 1), leaf(1, 1), leaf(2, 59)]), 'none'],
    [
      'peer at 60 of 90 days: renew',
      observed(ca, [leaf(0, 1), leaf(1, 1), leaf(2, 60)]),
      'issue db-peer-tls renewal-due',
    ],
    [
      'peer expired: renew',
      observed(ca, [leaf(0, 1), leaf(1, 1), leaf(2, 91)]),
      'issue db-peer-tls renewal-due',
    ],
    [
      'server signed by another CA: re-issue',
      observed(ca, [leaf(0, 1, { signedByCa: false }), leaf(1, 1), leaf(2, 1)]),
      'issue db-server-tls other-ca',
    ],
    [
      'server missing a name: re-issue',
      observed(ca, [leaf(0, 1, { dnsNames: ['*.db.prod.svc'] }), leaf(1, 1), leaf(2, 1)]),
      'issue db-server-tls names-changed',
    ],
    [
      'operator client unreadable: re-issue',
      observed(ca, [leaf(0, 1), { kind: 'unreadable' }, leaf(2, 1)]),
      'issue db-operator-client-tls unreadable',
    ],
    // Issue 29, security 5: a Secret not created by etcdfn for this cluster is never used or replaced.
    [
      'a leaf Secret not ours, unreadable: left alone',
      { ...observed(ca, [{ kind: 'unreadable' }, leaf(1, 1), leaf(2, 1)]), foreign: ['db-server-tls'] },
      'secrets-not-ours',
    ],
    [
      'a leaf Secret not ours, even a good one: left alone',
      { ...observed(ca, [leaf(0, 1), leaf(1, 1), leaf(2, 1)]), foreign: ['db-peer-tls'] },
      'secrets-not-ours',
    ],
    [
      'the CA Secret not ours: not used to sign',
      { ...observed(ca, []), foreign: ['db-ca'] },
      'secrets-not-ours',
    ],
    [
      'no CA yet, a leaf Secret not ours: nothing created',
      { ...observed({ kind: 'missing' }, []), foreign: ['db-server-tls'] },
      'secrets-not-ours',
    ],
  ];
  for (const [name, input, expected] of rows)
    it(name, () => {
      const step = planAutoTls(input);
      const got = step.kind === 'issue' ? `issue ${step.certificate.secret} ${step.reason}` : step.kind;
      assert.equal(got, expected);
    });

  it('names every Secret that is not ours, in order, and the ways out', () => {
    const step = planAutoTls({ ...observed(ca, []), foreign: ['db-peer-tls', 'db-ca'] });
    assert.equal(step.kind, 'secrets-not-ours');
    if (step.kind !== 'secrets-not-ours') return;
    assert.deepEqual(step.secrets, ['db-ca', 'db-peer-tls']);
    assert.match(step.message, /^Secrets db-ca, db-peer-tls exist but were not created by etcdfn/);
    assert.match(step.message, /delete or rename them/);
    assert.match(step.message, /spec\.tls to your own Secrets/);
  });

  it('nothing to keep without auto TLS, whatever the CA', () => {
    assert.equal(planAutoTls({ now, ca: { kind: 'missing' }, leaves: [] }).kind, 'none');
  });

  it('says when the next renewal falls: the earliest leaf at 2/3 of its life', () => {
    const step = planAutoTls(observed(ca, [leaf(0, 1), leaf(1, 10), leaf(2, 1)]));
    assert.equal(step.kind, 'none');
    assert.deepEqual(step.kind === 'none' && step.nextRenewal, at(50));
  });
});

describe('renewal timing', () => {
  it('renews at two thirds of the validity', () => {
    assert.deepEqual(renewalTime({ notBefore: at(0), notAfter: at(90) }), at(60));
  });
  it('defaults to 90-day leaves; the environment can shorten them', () => {
    assert.equal(autoTlsTimingsFromEnv({}).leafLifetimeMs, 90 * DAY);
    assert.equal(
      autoTlsTimingsFromEnv({ ETCDFN_AUTO_TLS_LEAF_LIFETIME_SECONDS: '30' }).leafLifetimeMs,
      30_000,
    );
    assert.equal(
      autoTlsTimingsFromEnv({ ETCDFN_AUTO_TLS_LEAF_LIFETIME_SECONDS: 'soon' }).leafLifetimeMs,
      90 * DAY,
    );
  });
});
