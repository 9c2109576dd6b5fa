// A member whose node is gone (shared/plan/member/node-loss.ts): which volumes are tied to a node,
// and reconcile-member's step for each world — data lost with the node (NodeLost, replaced by
// reconcile-cluster), the Pod moved with its data, or nothing.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1NodeSelectorTerm, V1PersistentVolume, V1Pod } from '@kubernetes/client-node';
import { hostnameAffinity, nodeLoss } from '../../shared/plan/member/node-loss.ts';
import { planMember } from '../../shared/plan/member/plan.ts';
import { ID, member, pod, pvc, ready, running, state, written } from '../support/member-world.ts';
import type { MemberNodes } from '../../shared/plan/member/types.ts';

const hostTerm = (...nodes: string[]) => ({
  matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: nodes }],
});
const zoneTerm = {
  matchExpressions: [{ key: 'topology.kubernetes.io/zone', operator: 'In', values: ['a'] }],
};
const pv = (...terms: V1NodeSelectorTerm[]): V1PersistentVolume => ({
  metadata: { name: 'pvc-1' },
  spec: terms.length ? { nodeAffinity: { required: { nodeSelectorTerms: terms } } } : {},
});

describe('hostnameAffinity: the nodes a volume is tied to', () => {
  const rows: [string, V1PersistentVolume, string[] | undefined][] = [
    ['a local volume on one node', pv(hostTerm('n1')), ['n1']],
    ['a volume usable on two nodes', pv(hostTerm('n1', 'n2')), ['n1', 'n2']],
    ['a zonal volume (EBS, PD): not tied to a node', pv(zoneTerm), undefined],
    ['one term a hostname, another a zone: can go elsewhere', pv(hostTerm('n1'), zoneTerm), undefined],
    ['no node affinity (network storage)', pv(), undefined],
  ];
  for (const [what, volume, expected] of rows)
    it(what, () => assert.deepEqual(hostnameAffinity(volume), expected));
});

const m = member({}, { podName: 'demo-1', memberID: ID, isVoter: true, pvcUID: 'pvc-uid', hasData: true });
const memory = member(
  { storage: { size: '256Mi', medium: 'Memory' } },
  { podName: 'demo-1', podUID: 'pod-uid', memberID: ID, isVoter: true },
);
const onNode = (node: string, o: { ready?: boolean; member?: typeof m } = {}): V1Pod => {
  const p = pod(o.member ?? m, { ready: o.ready ?? true });
  return { ...p, spec: { containers: [], nodeName: node } };
};
const boundPvc = {
  ...pvc(m),
  metadata: { ...pvc(m).metadata, uid: 'pvc-uid' },
  spec: { volumeName: 'pvc-1' },
};
const nodes = (n: MemberNodes) => n;

describe('nodeLoss: what a gone node means for the member', () => {
  const rows: [string, Parameters<typeof nodeLoss>[0], string | undefined][] = [
    [
      'local volume on the gone node, no Pod (the pod GC took it): data lost',
      running(m, { pvc: boundPvc, nodes: nodes({ volumeNodes: ['n2'], gone: ['n2'] }) }),
      'data',
    ],
    [
      'local volume on the gone node, a new Pod Pending (unschedulable): data lost',
      running(m, {
        pvc: boundPvc,
        pod: pod(m, { phase: 'Pending', ready: false }),
        nodes: nodes({ volumeNodes: ['n2'], gone: ['n2'] }),
      }),
      'data',
    ],
    [
      'local volume usable on two nodes, one left: not lost',
      running(m, { pvc: boundPvc, nodes: nodes({ volumeNodes: ['n2', 'n3'], gone: ['n2'] }) }),
      undefined,
    ],
    [
      'Pod on the gone node, network volume: the Pod moves with its data',
      running(m, { pvc: boundPvc, pod: onNode('n2'), nodes: nodes({ podNode: 'n2', gone: ['n2'] }) }),
      'move-pod',
    ],
    [
      'Pod on the gone node already force-deleted: nothing more',
      running(m, {
        pvc: boundPvc,
        pod: {
          ...onNode('n2'),
          metadata: {
            ...onNode('n2').metadata,
            deletionTimestamp: new Date(),
            deletionGracePeriodSeconds: 0,
          },
        },
        nodes: nodes({ podNode: 'n2', gone: ['n2'] }),
      }),
      undefined,
    ],
    [
      'Memory member, Pod on the gone node: data lost',
      state(memory, { pod: onNode('n2', { member: memory }), nodes: nodes({ podNode: 'n2', gone: ['n2'] }) }),
      'data',
    ],
    [
      'every node there',
      running(m, {
        pvc: boundPvc,
        pod: onNode('n1'),
        nodes: nodes({ podNode: 'n1', volumeNodes: ['n1'], gone: [] }),
      }),
      undefined,
    ],
    [
      'nodes not read (the Pod runs and is ready)',
      running(m, { pvc: boundPvc, pod: onNode('n1') }),
      undefined,
    ],
    [
      'a foreign Pod on the gone node is not the member’s',
      running(m, {
        pvc: boundPvc,
        pod: { ...pod(m, { owner: 'foreign' }), spec: { containers: [], nodeName: 'n2' } },
        nodes: nodes({ podNode: 'n2', gone: ['n2'] }),
      }),
      undefined,
    ],
  ];
  for (const [what, world, kind] of rows) it(what, () => assert.equal(nodeLoss(world)?.kind, kind));
});

describe('planMember: a member whose node is gone', () => {
  it('local volume on a gone node: NodeLost recorded once, with an Event, the Pending Pod force-deleted', () => {
    const world = running(m, {
      pvc: boundPvc,
      pod: pod(m, { phase: 'Pending', ready: false }),
      nodes: { volumeNodes: ['n2'], gone: ['n2'] },
    });
    const p = planMember(world);
    assert.equal(p.status.dataLoss?.reason, 'NodeLost');
    assert.match(
      p.status.dataLoss?.message ?? '',
      /^node n2, the only place PVC data-demo-1's local volume \(pvc-1\) can be used, is gone/,
    );
    assert.deepEqual([p.action.kind, p.action.kind === 'delete-pod' && p.action.force], ['delete-pod', true]);
    assert.equal(ready(p)?.reason, 'DataLost');
    assert.deepEqual(
      p.events.map(e => [e.type, e.reason]),
      [['Warning', 'NodeLost']],
    );
    assert.equal(p.statusChanged, true);
    // Sticky, and said once: the next invocation (Pod gone) waits for the replacement.
    const again = planMember(running(written(m, p), { pvc: boundPvc, nodes: world.nodes }));
    assert.equal(again.action.kind, 'wait');
    assert.deepEqual(again.events, []);
    assert.equal(again.status.dataLoss?.reason, 'NodeLost');
  });

  it('Pod on a gone node with a network volume: deleted with no grace, Ready False NodeLost, no data loss', () => {
    const p = planMember(
      running(m, { pvc: boundPvc, pod: onNode('n2'), nodes: { podNode: 'n2', gone: ['n2'] } }),
    );
    assert.equal(p.status.dataLoss, undefined);
    assert.equal(p.action.kind, 'delete-pod');
    assert.equal(p.action.kind === 'delete-pod' && p.action.force, true);
    assert.equal(ready(p)?.reason, 'NodeLost');
    assert.match(ready(p)?.message ?? '', /next one starts on another node with the same data and member ID/);
    assert.deepEqual(
      p.events.map(e => e.reason),
      ['NodeLost'],
    );
  });

  it('a Memory member whose Pod’s node is gone is NodeLost, not MemoryLost', () => {
    const p = planMember(
      state(memory, { pod: onNode('n2', { member: memory }), nodes: { podNode: 'n2', gone: ['n2'] } }),
    );
    assert.equal(p.status.dataLoss?.reason, 'NodeLost');
  });
});
