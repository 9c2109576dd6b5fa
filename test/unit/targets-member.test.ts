import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { ObjectEvent, OperatorEvent, TickEvent } from '../../shared/events/types.ts';
import { memberTarget } from '../../functions/reconcile-member/targets.ts';
import { finalizeTarget } from '../../functions/finalize-member/targets.ts';

function objectEvent(
  apiVersion: string,
  kind: string,
  name: string,
  verb: ObjectEvent['verb'] = 'update',
): ObjectEvent {
  return {
    id: '1',
    source: 'https://10.96.0.1:443',
    type: `dev.knative.apiserver.ref.${verb}`,
    kind: 'object',
    mode: 'Reference',
    verb,
    ref: { apiVersion, kind, namespace: 'prod', name },
  };
}

const tick: TickEvent = { id: '2', source: 'ping', type: 'dev.knative.sources.ping', kind: 'tick', data: {} };
const member = (name: string) => ({ kind: 'member', namespace: 'prod', name });

describe('reconcile-member targets', () => {
  const rows: [string, OperatorEvent, unknown][] = [
    [
      'an EtcdMember event → that member',
      objectEvent('etcdfn.io/v1alpha1', 'EtcdMember', 'demo-1'),
      member('demo-1'),
    ],
    [
      'an EtcdMember deletion → that member',
      objectEvent('etcdfn.io/v1alpha1', 'EtcdMember', 'demo-1', 'delete'),
      member('demo-1'),
    ],
    ['a Pod event → the member of the same name', objectEvent('v1', 'Pod', 'demo-1'), member('demo-1')],
    [
      'a Pod deletion → the member (it recreates its Pod)',
      objectEvent('v1', 'Pod', 'demo-1', 'delete'),
      member('demo-1'),
    ],
    [
      'a PVC data-<m> → member m',
      objectEvent('v1', 'PersistentVolumeClaim', 'data-demo-1'),
      member('demo-1'),
    ],
    [
      'a PVC data-<m> with dashes in m → member m',
      objectEvent('v1', 'PersistentVolumeClaim', 'data-my-db-12', 'delete'),
      member('my-db-12'),
    ],
  ];
  for (const [title, event, expected] of rows) {
    it(title, () => assert.deepEqual(memberTarget(event), expected));
  }

  const ignored: [string, OperatorEvent, RegExp][] = [
    [
      'a PVC not named data-* is ignored',
      objectEvent('v1', 'PersistentVolumeClaim', 'scratch'),
      /not a member's data volume/,
    ],
    [
      'a PVC named just data- is ignored',
      objectEvent('v1', 'PersistentVolumeClaim', 'data-'),
      /not a member's data volume/,
    ],
    [
      'an EtcdCluster event is not for this function',
      objectEvent('etcdfn.io/v1alpha1', 'EtcdCluster', 'demo'),
      /not for this function/,
    ],
    [
      'a Job event is not for this function',
      objectEvent('batch/v1', 'Job', 'demo-snap'),
      /not for this function/,
    ],
    [
      'an EtcdMember of another API version is not for this function',
      objectEvent('etcd.example/v1', 'EtcdMember', 'x'),
      /not for this function/,
    ],
  ];
  it('a tick reconciles every member (a lost Pod event must not leave a member without its Pod)', () => {
    assert.deepEqual(memberTarget(tick), { kind: 'all-members' });
  });
  for (const [title, event, summary] of ignored) {
    it(title, () => {
      const target = memberTarget(event);
      assert.equal(target.kind, 'ignore');
      assert.match((target as { summary: string }).summary, summary);
    });
  }
});

describe('finalize-member targets', () => {
  it('an EtcdMember event (update or delete) → that member', () => {
    assert.deepEqual(
      finalizeTarget(objectEvent('etcdfn.io/v1alpha1', 'EtcdMember', 'demo-2')),
      member('demo-2'),
    );
    assert.deepEqual(
      finalizeTarget(objectEvent('etcdfn.io/v1alpha1', 'EtcdMember', 'demo-2', 'delete')),
      member('demo-2'),
    );
  });

  for (const event of [
    objectEvent('v1', 'Pod', 'demo-2'),
    objectEvent('v1', 'PersistentVolumeClaim', 'data-demo-2'),
    objectEvent('etcdfn.io/v1alpha1', 'EtcdCluster', 'demo'),
  ]) {
    it(`a ${event.ref.kind} event is ignored with done`, () => {
      const target = finalizeTarget(event);
      assert.equal(target.kind, 'ignore');
      assert.match((target as { summary: string }).summary, /not for this function/);
    });
  }

  it('a tick is ignored with done', () => {
    const target = finalizeTarget(tick);
    assert.equal(target.kind, 'ignore');
    assert.match((target as { summary: string }).summary, /nothing to do for finalize-member/);
  });
});
