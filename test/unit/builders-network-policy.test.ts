// The cluster's NetworkPolicy: who may reach which port of the members.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  buildNetworkPolicy,
  DEFAULT_OPERATOR_NAMESPACE,
  networkPolicyDrift,
} from '../../shared/builders/network-policy.ts';
import { memberLabels } from '../../shared/names.ts';
import { etcdCluster } from '../support/etcd-objects.ts';
import {
  admits as admitsPort,
  selects as matches,
  type PodSource,
} from '../support/network-policy-admits.ts';

/** The policy's verdict for `source` on `port` of a member Pod (test/support/network-policy-admits.ts). */
function admits(policy: ReturnType<typeof buildNetworkPolicy>, source: PodSource, port: number): boolean {
  assert.ok(policy);
  return admitsPort(policy, source, port);
}

const member = { namespace: 'prod', labels: memberLabels('demo', 'demo-1', 'voter') };
const otherMember = { namespace: 'prod', labels: memberLabels('other', 'other-1', 'voter') };
const client = { namespace: 'prod', labels: { 'etcdfn.io/client': 'demo', app: 'api' } };
const otherClient = { namespace: 'prod', labels: { 'etcdfn.io/client': 'other' } };
const stranger = { namespace: 'prod', labels: { app: 'web' } };
const operator = { namespace: 'etcdfn-system', labels: { 'etcdfn.io/component': 'operator' } };
/** Any other Pod of the operator's namespace, and an operator-labelled Pod elsewhere. */
const operatorNeighbour = { namespace: 'etcdfn-system', labels: { app: 'other' } };
const fakeOperator = { namespace: 'prod', labels: { 'etcdfn.io/component': 'operator' } };
const foreignClient = { namespace: 'team-b', labels: { 'etcdfn.io/client': 'demo' } };
const prometheus = { namespace: 'monitoring', labels: { app: 'prometheus' } };

describe('buildNetworkPolicy', () => {
  const policy = buildNetworkPolicy(etcdCluster());

  it('is on by default, owned by the cluster and selects only its member Pods', () => {
    assert.ok(policy);
    assert.equal(policy.metadata?.name, 'demo');
    assert.equal(policy.metadata?.namespace, 'prod');
    assert.equal(policy.metadata?.ownerReferences?.[0]?.uid, 'uid-1');
    assert.deepEqual(policy.spec?.policyTypes, ['Ingress']);
    assert.ok(matches(policy.spec?.podSelector, member.labels));
    assert.ok(!matches(policy.spec?.podSelector, otherMember.labels));
    assert.ok(!matches(policy.spec?.podSelector, { 'etcdfn.io/cluster': 'demo' }), 'a non-member Pod');
  });

  it('client port: labelled clients, the operator and the members; nobody else', () => {
    assert.deepEqual(
      [
        client,
        operator,
        member,
        otherClient,
        stranger,
        foreignClient,
        otherMember,
        prometheus,
        operatorNeighbour,
        fakeOperator,
      ].map(s => admits(policy, s, 2379)),
      [true, true, true, false, false, false, false, false, false, false],
    );
  });

  it('peer port: the members only', () => {
    assert.deepEqual(
      [member, client, operator, otherMember, stranger].map(s => admits(policy, s, 2380)),
      [true, false, false, false, false],
    );
  });

  it('metrics port: closed unless a namespace is named', () => {
    assert.equal(admits(policy, prometheus, 2381), false);
    const open = buildNetworkPolicy(
      etcdCluster({ spec: { networkPolicy: { metricsNamespace: 'monitoring' } } }),
    );
    assert.equal(admits(open, prometheus, 2381), true);
    assert.equal(admits(open, stranger, 2381), false);
  });

  it('probe port (2382, plain /health and /metrics with client mTLS): no Pod at all, the metrics namespace neither', () => {
    const open = buildNetworkPolicy(
      etcdCluster({ spec: { networkPolicy: { metricsNamespace: 'monitoring' } } }),
    );
    for (const source of [prometheus, client, operator, member, stranger]) {
      assert.equal(admits(policy, source, 2382), false);
      assert.equal(admits(open, source, 2382), false);
    }
  });

  it("admits the operator's namespace as configured", () => {
    assert.equal(DEFAULT_OPERATOR_NAMESPACE, 'etcdfn-system');
    const elsewhere = buildNetworkPolicy(etcdCluster(), { operatorNamespace: 'ops' });
    assert.equal(admits(elsewhere, { namespace: 'ops', labels: operator.labels }, 2379), true);
    assert.equal(admits(elsewhere, { namespace: 'ops', labels: {} }, 2379), false);
    assert.equal(admits(elsewhere, operator, 2379), false);
  });

  it('is absent when the cluster turns it off', () => {
    assert.equal(buildNetworkPolicy(etcdCluster({ spec: { networkPolicy: { enabled: false } } })), undefined);
    assert.ok(buildNetworkPolicy(etcdCluster({ spec: { networkPolicy: { enabled: true } } })));
  });
});

describe('networkPolicyDrift', () => {
  const desired = buildNetworkPolicy(etcdCluster())!;

  it('is undefined for the policy as built, and as read back with protocols defaulted', () => {
    assert.equal(networkPolicyDrift(structuredClone(desired), desired), undefined);
  });

  it('is undefined for the policy as the client reads it back: other key order, nulls for unset', () => {
    const readBack = JSON.parse(
      JSON.stringify(desired.spec, (_key, v: unknown) => {
        if (v && typeof v === 'object' && !Array.isArray(v))
          return Object.fromEntries(Object.entries(v).reverse());
        return v;
      }),
    ) as NonNullable<typeof desired.spec>;
    readBack.ingress![0].ports![0].endPort = null as unknown as undefined;
    assert.notEqual(JSON.stringify(readBack), JSON.stringify(desired.spec));
    assert.equal(networkPolicyDrift({ ...desired, spec: readBack }, desired), undefined);
  });

  it('patches the whole spec back when a rule was widened or removed', () => {
    const widened = structuredClone(desired);
    widened.spec!.ingress![1]._from = [];
    assert.deepEqual(networkPolicyDrift(widened, desired), { spec: desired.spec });
    const removed = structuredClone(desired);
    removed.spec!.ingress = removed.spec!.ingress!.slice(0, 1);
    assert.deepEqual(networkPolicyDrift(removed, desired), { spec: desired.spec });
  });
});
