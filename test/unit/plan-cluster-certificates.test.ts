// status.certificates and the TLSCertificates condition as planCluster shapes them from the
// certificates observed before planning (state.certificates), whatever step it chose.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { toKubeTime } from '../../shared/conditions.ts';
import { planCluster } from '../../shared/plan/cluster/plan.ts';
import type { ClusterState } from '../../shared/plan/cluster/types.ts';
import { CERTIFICATES_CONDITION } from '../../shared/plan/tls/certificate-status.ts';
import type { CertificateObservation } from '../../shared/plan/tls/types.ts';
import { NOW, cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';

const facts = {
  notBefore: new Date('2026-11-22T00:00:00Z'),
  notAfter: new Date('2027-02-20T00:00:00Z'),
  dnsNames: [],
  ipAddresses: [],
};
const serverSecret: CertificateObservation['observed'][number] = {
  secret: 'demo-server-tls',
  role: 'server',
  issuedByOperator: false,
  facts,
};
const recorded = [{ secret: 'old-tls', role: 'server' as const, notAfter: '2027-01-01T00:00:00Z' }];
const reached = (certificates?: CertificateObservation, withRecorded = false): ClusterState => {
  const c = cluster(
    {},
    locked(3, { clusterID: 'c0ffee0000000001', ...(withRecorded && { certificates: recorded }) }),
  );
  const s = state(c, [member(0), member(1), member(2)], {
    etcd: etcdOf([membership(0), membership(1), membership(2)]),
  });
  if (certificates) s.certificates = certificates;
  return s;
};
const tlsCondition = (s: ClusterState) =>
  planCluster(s).status.conditions?.find(c => c.type === CERTIFICATES_CONDITION);

describe('planCluster: the certificates observed before planning', () => {
  it('a certificate Secret read: its expiry in status.certificates', () => {
    const plan = planCluster(reached({ observed: [serverSecret] }));
    assert.deepEqual(plan.status.certificates, [
      { secret: 'demo-server-tls', role: 'server', notAfter: '2027-02-20T00:00:00Z' },
    ]);
    assert.equal(plan.action.kind, 'none');
  });
  it('none wanted any more: what status recorded goes', () => {
    assert.equal(planCluster(reached({ observed: [] }, true)).status.certificates, undefined);
  });
  it('nobody observed them (state.certificates unset): status keeps what it has', () => {
    assert.deepEqual(planCluster(reached(undefined, true)).status.certificates, recorded);
  });
  it('none wanted and none recorded: no field and no condition', () => {
    const plan = planCluster(reached({ observed: [] }));
    assert.equal('certificates' in plan.status, false);
    assert.equal(tlsCondition(reached({ observed: [] })), undefined);
  });
  it('a new cluster without TLS (no status yet): the target is locked, no field and no condition', () => {
    const s = state(cluster(), []);
    s.certificates = { observed: [] };
    const plan = planCluster(s);
    assert.equal(plan.status.observed?.replicas, 3);
    assert.equal('certificates' in plan.status, false);
    assert.equal(
      plan.status.conditions?.find(c => c.type === CERTIFICATES_CONDITION),
      undefined,
    );
  });
  it('the operator cannot issue: TLSCertificates False says why, from the time of the state', () => {
    const problem = { reason: 'SecretNotOwned', message: 'auto TLS cannot issue certificates: x' };
    const condition = tlsCondition(reached({ observed: [serverSecret], problem }));
    assert.deepEqual(condition, {
      type: CERTIFICATES_CONDITION,
      status: 'False',
      ...problem,
      lastTransitionTime: toKubeTime(NOW),
    });
  });
  it('a cluster being deleted still shows its certificates', () => {
    const s = reached({ observed: [serverSecret] });
    s.cluster.metadata.deletionTimestamp = NOW;
    const plan = planCluster(s);
    assert.equal(plan.status.certificates?.[0]?.secret, 'demo-server-tls');
    assert.equal(plan.action.kind, 'none');
  });
});
