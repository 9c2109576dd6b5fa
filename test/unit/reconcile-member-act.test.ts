// reconcile-member's I/O (shared/reconcile/member.ts, member-volume.ts, member-nodes.ts,
// member-events.ts) over an in-memory Kubernetes (test/support/fake-kube.ts) and a scripted etcd:
// which objects it writes with what content and in what order, the outcome it answers, the Events
// it records, and what it does when each call fails. The same steps against a real API server and
// etcd are test/integration/reconcile-member.test.ts; the decisions are plan-member*.test.ts's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ApiException, type V1PersistentVolumeClaim, type V1Pod } from '@kubernetes/client-node';
import type { EtcdMember, EtcdMemberStatus } from '../../shared/api/etcd-member.ts';
import { buildMemberPod } from '../../shared/builders/pod.ts';
import { findCondition } from '../../shared/conditions.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import { KubeApiError } from '../../shared/k8s/errors.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { reconcileMember } from '../../shared/reconcile/member.ts';
import { crashAt } from '../support/crash-at.ts';
import { FakeKube, fakeContext } from '../support/fake-kube.ts';
import {
  CLIENT,
  CLUSTER_ID,
  ID,
  NOW,
  cluster,
  inEtcd,
  member,
  other,
  pod,
  pvc,
  self,
} from '../support/member-world.ts';

process.env.LOG_LEVEL ??= 'silent';

/** The error @kubernetes/client-node throws for an HTTP status, with the API server's Status body. */
const apiException = (code: number, reason: string, message: string) =>
  new ApiException(code, reason, JSON.stringify({ kind: 'Status', code, reason, message }), {});

const REF = { namespace: 'prod', name: 'demo-1' };
const OTHER_CLIENT = 'http://demo-0.demo.prod.svc:2379';
const voter: EtcdMemberStatus = {
  memberID: ID,
  isVoter: true,
  role: 'voter',
  version: '3.5.16',
  podUID: 'pod-uid',
  podName: 'demo-1',
  pvcName: 'data-demo-1',
};

/** An etcd that lists demo-0 and demo-1 and reports demo-1 following; calls recorded. */
function fakeEtcd(overrides: Partial<EtcdAdapter> = {}) {
  const calls: string[] = [];
  const etcd: Partial<EtcdAdapter> = {
    listMembers: async endpoints => {
      calls.push(`listMembers ${endpoints.join(' ')}`);
      return {
        kind: 'ok',
        members: [other, inEtcd()],
        clusterId: CLUSTER_ID,
        endpoint: endpoints[0] ?? '',
      } as never;
    },
    memberStatus: async endpoint => {
      calls.push(`memberStatus ${endpoint}`);
      return { kind: 'ok', status: self() } as never;
    },
    moveLeader: async (endpoints, toId) => {
      calls.push(`moveLeader ${endpoints.join(' ')} -> ${toId}`);
      return { kind: 'ok', leaderId: toId } as never;
    },
    ...overrides,
  };
  return { etcd, calls };
}

/** The cluster with demo-0 a ready voter (and demo-1 itself listed) in its status. */
const clusterWithVoters = cluster({
  clusterID: CLUSTER_ID,
  members: [
    { name: 'demo-0', ready: true, role: 'voter' },
    { name: 'demo-1', ready: true, role: 'voter' },
    { name: 'demo-2', ready: false, role: 'voter' },
    { name: 'demo-3', ready: true, role: 'learner' },
  ],
} as never);

function world(objects: unknown[], etcdOverrides: Partial<EtcdAdapter> = {}, settings = {}) {
  const kube = new FakeKube(objects);
  const { etcd, calls } = fakeEtcd(etcdOverrides);
  const ctx = fakeContext(kube, etcd, settings, NOW);
  return { kube, etcdCalls: calls, run: () => reconcileMember(ctx, REF) };
}

const summaryOf = (o: { result: string; summary?: string; reason?: string }) =>
  o.result === 'done' ? o.summary : o.reason;
const storedMember = (kube: FakeKube) => kube.stored<EtcdMember & KubeObject>('EtcdMember', 'prod', 'demo-1');
const readyOf = (kube: FakeKube) => findCondition(storedMember(kube)?.status?.conditions, 'Ready');

describe('reconcile-member: a member not found', () => {
  it('answers done, naming it, and writes nothing', async () => {
    const w = world([]);
    assert.deepEqual(await w.run(), { result: 'done', summary: 'EtcdMember prod/demo-1 not found' });
    assert.deepEqual(w.kube.calls, ['get EtcdMember prod/demo-1']);
  });
});

describe('reconcile-member: a new member', () => {
  it('writes its status, creates the PVC and then the Pod in the same invocation, both its own', async () => {
    const m = member();
    const w = world([m, cluster()]);
    const outcome = await w.run();
    assert.deepEqual(outcome, {
      result: 'done',
      summary: 'PVC data-demo-1 created; Pod demo-1 created (learner)',
    });
    assert.deepEqual(w.kube.writes, [
      'replaceStatus EtcdMember prod/demo-1',
      'create PersistentVolumeClaim prod/data-demo-1',
      'replaceStatus EtcdMember prod/demo-1',
      'create Pod prod/demo-1',
    ]);
    const created = w.kube.stored<V1Pod & KubeObject>('Pod', 'prod', 'demo-1');
    assert.equal(created?.metadata.ownerReferences?.[0]?.uid, 'member-uid');
    const claim = w.kube.stored<V1PersistentVolumeClaim & KubeObject>(
      'PersistentVolumeClaim',
      'prod',
      'data-demo-1',
    );
    assert.equal(claim?.spec?.resources?.requests?.storage, '1Gi');
    assert.equal(storedMember(w.kube)?.status?.pvcName, 'data-demo-1');
  });

  it('reads the cluster, its Pod and its PVC by name, and no node while nothing is bound', async () => {
    const w = world([member(), cluster()]);
    await w.run();
    assert.deepEqual(w.kube.calls.slice(0, 4), [
      'get EtcdMember prod/demo-1',
      'get EtcdCluster prod/demo',
      'get Pod prod/demo-1',
      'get PersistentVolumeClaim prod/data-demo-1',
    ]);
    assert.equal(w.kube.calls.filter(c => c.includes(' Node ') || c.includes('PersistentVolume ')).length, 0);
  });

  it('a Memory member: no PVC read and none created, the Pod at once', async () => {
    const m = member({ storage: { size: '256Mi', medium: 'Memory' } });
    const w = world([m, cluster()]);
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    assert.equal(
      w.kube.calls.filter(c => c.includes('PersistentVolumeClaim')).length,
      0,
      w.kube.calls.join(),
    );
    assert.deepEqual(w.kube.writes, ['replaceStatus EtcdMember prod/demo-1', 'create Pod prod/demo-1']);
  });

  it('a PVC that already exists (a duplicate invocation): observed again, not the end of the invocation', async () => {
    const w = world([member(), cluster()]);
    w.kube.script('create', 'PersistentVolumeClaim', { kind: 'already-exists' });
    const outcome = await w.run();
    // The fake did not store it, so the next pass creates it, and the Pod follows.
    assert.deepEqual(outcome, {
      result: 'done',
      summary: 'PVC data-demo-1 already-exists; PVC data-demo-1 created; Pod demo-1 created (learner)',
    });
  });

  it('a PVC the API server refuses: stops there and says why, no Pod', async () => {
    const w = world([member(), cluster()]);
    w.kube.script('create', 'PersistentVolumeClaim', { kind: 'invalid', message: 'quota exceeded' });
    assert.deepEqual(await w.run(), {
      result: 'done',
      summary: 'PVC data-demo-1 refused: quota exceeded',
    });
    assert.equal(w.kube.stored('Pod', 'prod', 'demo-1'), undefined);
    assert.equal(w.kube.calls.filter(c => c.startsWith('create Pod')).length, 0);
  });

  it('a Pod the API server refuses: says why', async () => {
    const w = world([member(), cluster(), pvc(member())]);
    w.kube.script('create', 'Pod', { kind: 'invalid', message: 'forbidden by policy' });
    assert.deepEqual(await w.run(), { result: 'done', summary: 'Pod demo-1 refused: forbidden by policy' });
  });

  it('a Pod that already exists: said as such', async () => {
    const w = world([member(), cluster(), pvc(member())]);
    w.kube.script('create', 'Pod', { kind: 'already-exists' });
    assert.deepEqual(await w.run(), { result: 'done', summary: 'Pod demo-1 already-exists (learner)' });
  });

  it('the seed of a cluster not yet formed is created a voter', async () => {
    const m = member({ bootstrap: true, initialCluster: 'demo-1=http://demo-1.demo.prod.svc:2380' });
    const w = world([m, cluster({}), pvc(m)]);
    assert.deepEqual(await w.run(), { result: 'done', summary: 'Pod demo-1 created (voter)' });
  });
});

describe('reconcile-member: the status write', () => {
  it('lost to another writer: observed afresh and written over the winner', async () => {
    const w = world([member(), cluster(), pvc(member())]);
    w.kube.script('replaceStatus', 'EtcdMember', { kind: 'conflict', message: 'changed' });
    const outcome = await w.run();
    assert.deepEqual(outcome, { result: 'done', summary: 'Pod demo-1 created (learner)' });
    assert.deepEqual(
      w.kube.calls.filter(c => c.startsWith('get EtcdMember') || c.startsWith('replaceStatus')),
      [
        'get EtcdMember prod/demo-1',
        'replaceStatus EtcdMember prod/demo-1',
        'get EtcdMember prod/demo-1',
        'replaceStatus EtcdMember prod/demo-1',
      ],
    );
  });

  it('lost on every pass: a retry naming the conflict, nothing created', async () => {
    const w = world([member(), cluster(), pvc(member())]);
    const conflict = { kind: 'conflict', message: 'changed again' };
    w.kube.script('replaceStatus', 'EtcdMember', conflict, conflict, conflict, conflict, conflict);
    assert.deepEqual(await w.run(), {
      result: 'retry',
      reason: 'EtcdMember demo-1 changed meanwhile: changed again',
      status: 409,
    });
    assert.equal(w.kube.calls.filter(c => c.startsWith('replaceStatus')).length, 4, 'four passes');
    assert.equal(w.kube.calls.filter(c => c.startsWith('create')).length, 0);
  });

  it('the member deleted meanwhile: done, nothing created', async () => {
    const w = world([member(), cluster(), pvc(member())]);
    w.kube.script('replaceStatus', 'EtcdMember', { kind: 'not-found' });
    assert.deepEqual(await w.run(), { result: 'done', summary: 'EtcdMember demo-1 is gone' });
    assert.equal(w.kube.calls.filter(c => c.startsWith('create')).length, 0);
    assert.equal(w.kube.calls.filter(c => c.startsWith('replaceStatus')).length, 1);
  });

  it('refused by the API server: thrown with its message (a bug, not something to retry)', async () => {
    const w = world([member(), cluster(), pvc(member())]);
    w.kube.script('replaceStatus', 'EtcdMember', { kind: 'invalid', message: 'status.role: bad value' });
    await assert.rejects(w.run(), /status of EtcdMember demo-1 refused: status.role: bad value/);
    assert.equal(w.kube.calls.filter(c => c.startsWith('create')).length, 0);
  });
});

describe('reconcile-member: asking etcd', () => {
  it('a steady voter: once its status is written, no write and etcd not asked', async () => {
    const m = member({}, voter);
    const w = world([m, clusterWithVoters, pvc(m), pod(m, { role: 'voter' })]);
    assert.deepEqual(await w.run(), { result: 'done', summary: 'demo-1: nothing to do' });
    const before = w.kube.writes.length;
    assert.deepEqual(await w.run(), { result: 'done', summary: 'demo-1: nothing to do' });
    assert.deepEqual(w.etcdCalls, []);
    assert.equal(w.kube.writes.length, before);
  });

  it('a ready Pod whose member ID is not known: lists through the other ready voters and itself, asks itself', async () => {
    const m = member({}, { podName: 'demo-1', podUID: 'pod-uid', pvcName: 'data-demo-1' });
    const w = world([m, clusterWithVoters, pvc(m), pod(m)]);
    await w.run();
    assert.deepEqual(w.etcdCalls, [`listMembers ${OTHER_CLIENT} ${CLIENT}`, `memberStatus ${CLIENT}`]);
    const status = storedMember(w.kube)?.status;
    assert.equal(status?.memberID, ID, 'from etcd’s list');
    assert.equal(status?.isVoter, true);
    assert.equal(status?.version, '3.5.16', 'from its own report');
  });

  it('a Pod not ready: listed through the other voters alone (a joining etcd would hold the call), its own status not asked', async () => {
    const m = member({}, { podName: 'demo-1', podUID: 'pod-uid', pvcName: 'data-demo-1' });
    const w = world([m, clusterWithVoters, pvc(m), pod(m, { ready: false })]);
    await w.run();
    assert.deepEqual(w.etcdCalls, [`listMembers ${OTHER_CLIENT}`]);
  });

  it('a Pod that has terminated: only the other voters are asked', async () => {
    const m = member({}, { podName: 'demo-1', podUID: 'pod-uid', pvcName: 'data-demo-1' });
    const w = world([m, clusterWithVoters, pvc(m), pod(m, { ready: false, phase: 'Failed' })]);
    await w.run();
    assert.deepEqual(w.etcdCalls.slice(0, 1), [`listMembers ${OTHER_CLIENT}`]);
  });

  it('no other ready voter and no Pod: etcd is not listed at all', async () => {
    const m = member({}, { pvcName: 'data-demo-1' });
    const w = world([m, cluster(), pvc(m)]);
    await w.run();
    assert.deepEqual(w.etcdCalls, []);
  });

  it('a cluster whose status lists no members yet: only the member itself is asked', async () => {
    const m = member({}, { podName: 'demo-1', podUID: 'pod-uid', pvcName: 'data-demo-1' });
    const bare = { ...cluster(), status: undefined };
    const w = world([m, bare, pvc(m), pod(m)]);
    await w.run();
    assert.deepEqual(w.etcdCalls, [`listMembers ${CLIENT}`, `memberStatus ${CLIENT}`]);
  });

  it('etcd failing to answer: nothing taken from it', async () => {
    const m = member({}, { podName: 'demo-1', podUID: 'pod-uid', pvcName: 'data-demo-1' });
    const w = world([m, clusterWithVoters, pvc(m), pod(m)], {
      listMembers: async () => ({ kind: 'unavailable', message: 'down' }) as never,
      memberStatus: async () => ({ kind: 'unavailable', message: 'down' }) as never,
    });
    await w.run();
    const status = storedMember(w.kube)?.status;
    assert.equal(status?.memberID, undefined);
    assert.equal(status?.version, undefined);
  });
});

describe('reconcile-member: a paused member', () => {
  it('deletes its own Pod by uid, keeps the PVC, and records the pause', async () => {
    const m = member({ dormant: true }, voter);
    const w = world([m, cluster(), pvc(m), pod(m, { role: 'voter' })]);
    assert.deepEqual(await w.run(), {
      result: 'done',
      summary: 'demo-1 is paused (spec.dormant): deleting its Pod, keeping its data',
    });
    assert.deepEqual(w.kube.deletes, [
      {
        ref: { apiVersion: 'v1', kind: 'Pod', namespace: 'prod', name: 'demo-1' },
        options: { uid: 'pod-uid' },
      },
    ]);
    assert.equal(w.kube.stored('Pod', 'prod', 'demo-1'), undefined);
    assert.ok(w.kube.stored('PersistentVolumeClaim', 'prod', 'data-demo-1'), 'the data is kept');
    assert.equal(readyOf(w.kube)?.reason, 'Paused');
    assert.deepEqual(w.etcdCalls, [], 'a paused member asks etcd nothing');
  });

  it('a Pod already terminating is waited for, without a retry', async () => {
    const m = member({ dormant: true });
    const w = world([m, cluster(), pvc(m), pod(m, { deleting: true })]);
    assert.deepEqual(await w.run(), { result: 'done', summary: 'Pod demo-1 is being deleted' });
    assert.deepEqual(w.kube.deletes, []);
  });
});

describe('reconcile-member: a Pod on a node that is gone', () => {
  const m = member({}, { ...voter, pvcUID: 'pvc-uid', hasData: true });
  const bound = { ...pvc(m), metadata: { ...pvc(m).metadata, uid: 'pvc-uid' }, spec: { volumeName: 'pv-1' } };
  const onNode = (node: string): V1Pod => ({
    ...pod(m, { ready: false }),
    spec: { containers: [], nodeName: node },
  });
  const hostPv = {
    apiVersion: 'v1',
    kind: 'PersistentVolume',
    metadata: { name: 'pv-1', namespace: '' },
    spec: {
      nodeAffinity: {
        required: {
          nodeSelectorTerms: [
            { matchExpressions: [{ key: 'kubernetes.io/hostname', operator: 'In', values: ['n2'] }] },
          ],
        },
      },
    },
  };
  const node = (name: string) => ({ apiVersion: 'v1', kind: 'Node', metadata: { name, namespace: '' } });

  it('network volume: the Pod is deleted with no grace, by uid, and NodeLost said', async () => {
    const w = world([m, clusterWithVoters, { ...bound, spec: {} }, onNode('n2')]);
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    assert.deepEqual(
      w.kube.deletes.map(d => d.options),
      [{ uid: 'pod-uid', gracePeriodSeconds: 0 }],
    );
    assert.equal(readyOf(w.kube)?.reason, 'NodeLost');
    assert.deepEqual(
      w.kube.events.map(e => e.split(':')[0]),
      ['Warning NodeLost'],
    );
    assert.ok(w.kube.calls.includes('get Node /n2'), w.kube.calls.join());
  });

  it('the node still there: nothing deleted', async () => {
    const w = world([m, clusterWithVoters, { ...bound, spec: {} }, onNode('n2'), node('n2')]);
    await w.run();
    assert.deepEqual(w.kube.deletes, []);
  });

  it('a local volume tied to a gone node: its PV is read, data loss recorded once', async () => {
    const w = world([m, clusterWithVoters, bound, onNode('n2'), hostPv]);
    await w.run();
    assert.ok(w.kube.calls.includes('get PersistentVolume /pv-1'), w.kube.calls.join());
    assert.equal(storedMember(w.kube)?.status?.dataLoss?.reason, 'NodeLost');
    assert.deepEqual(
      w.kube.deletes.map(d => d.options),
      [{ uid: 'pod-uid', gracePeriodSeconds: 0 }],
    );
  });

  it('a local volume tied to a gone node and no Pod: data loss recorded, said by reconcile-member, nothing created', async () => {
    const w = world([m, clusterWithVoters, bound, hostPv]);
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    assert.equal(storedMember(w.kube)?.status?.dataLoss?.reason, 'NodeLost');
    assert.deepEqual(
      w.kube.events.map(e => e.split(':')[0]),
      ['Warning NodeLost'],
    );
    const event = w.kube.created.find(o => o.kind === 'Event');
    assert.equal((event as { reportingInstance?: string }).reportingInstance, 'reconcile-member');
    assert.equal(w.kube.calls.filter(c => c.startsWith('create Pod')).length, 0);
  });

  it('a running ready Pod: no node read at all', async () => {
    const w = world([
      m,
      clusterWithVoters,
      bound,
      { ...pod(m, { role: 'voter' }), spec: { containers: [], nodeName: 'n2' } },
    ]);
    await w.run();
    assert.equal(
      w.kube.calls.filter(c => / (Node|PersistentVolume) /.test(c)).length,
      0,
      w.kube.calls.join(),
    );
  });
});

describe('reconcile-member: the role label on its Pod', () => {
  const m = member({}, voter);
  const bare = () => {
    const p = pod(m, { role: 'voter' });
    delete p.metadata?.labels;
    return p;
  };

  it('put back by a merge patch of the label alone', async () => {
    const w = world([m, clusterWithVoters, pvc(m), bare()]);
    assert.deepEqual(await w.run(), {
      result: 'done',
      summary: 'labelling Pod demo-1 etcdfn.io/role=voter, as etcd counts it',
    });
    assert.deepEqual(w.kube.patches, [
      {
        ref: { apiVersion: 'v1', kind: 'Pod', namespace: 'prod', name: 'demo-1' },
        patch: { metadata: { labels: { 'etcdfn.io/role': 'voter' } } },
      },
    ]);
    assert.equal(
      w.kube.stored<V1Pod & KubeObject>('Pod', 'prod', 'demo-1')?.metadata.labels?.['etcdfn.io/role'],
      'voter',
    );
  });

  it('a conflict: retried with 409', async () => {
    const w = world([m, clusterWithVoters, pvc(m), bare()]);
    w.kube.script('mergePatch', 'Pod', { kind: 'conflict', message: 'Pod changed' });
    assert.deepEqual(await w.run(), { result: 'retry', reason: 'Pod changed', status: 409 });
  });

  it('the Pod gone meanwhile: said, not retried', async () => {
    const w = world([m, clusterWithVoters, pvc(m), bare()]);
    w.kube.script('mergePatch', 'Pod', { kind: 'not-found' });
    assert.deepEqual(await w.run(), { result: 'done', summary: 'Pod demo-1: not-found' });
  });
});

describe('reconcile-member: the empty-data guard of a first Pod', () => {
  it('its join settings patched to the guard’s, as annotations', async () => {
    const m = member({}, { ...voter, hasData: true });
    // As buildMemberPod made it before the member had run: the full join list in its annotations.
    const built = buildMemberPod(member({}, { memberID: ID, isVoter: true, role: 'voter' }), {
      namespace: 'prod',
      clusterFormed: true,
      isVoter: true,
    });
    const seen = pod(m, { role: 'voter' });
    const first = {
      ...built,
      metadata: {
        ...built.metadata,
        ...seen.metadata,
        labels: { ...built.metadata?.labels, ...seen.metadata?.labels },
      },
      status: seen.status,
    };
    const w = world([m, clusterWithVoters, pvc(m), first]);
    const outcome = await w.run();
    assert.match(summaryOf(outcome) ?? '', /arming the empty-data guard of Pod demo-1/);
    assert.deepEqual(
      w.kube.patches.map(p => p.patch),
      [
        {
          metadata: {
            annotations: {
              'etcdfn.io/initial-cluster': 'demo-1=http://demo-1.demo.prod.svc:2380',
              'etcdfn.io/initial-cluster-state': 'existing',
            },
          },
        },
      ],
    );
  });
});

describe('reconcile-member: a crash just after each step', () => {
  it('after the status write: the status is there, nothing created; the next invocation goes on', async () => {
    const w = world([member(), cluster()]);
    assert.equal(await crashAt('member:status-written', w.run), 'crashed');
    assert.deepEqual(w.kube.writes, ['replaceStatus EtcdMember prod/demo-1']);
    assert.equal(storedMember(w.kube)?.status?.pvcName, 'data-demo-1');
    assert.match(summaryOf(await w.run()) ?? '', /Pod demo-1 created/);
  });

  it('only after a write that went through: a lost race goes on to the next pass first', async () => {
    const w = world([member(), cluster()]);
    w.kube.script('replaceStatus', 'EtcdMember', { kind: 'conflict', message: 'x' });
    assert.equal(await crashAt('member:status-written', w.run), 'crashed');
    assert.equal(w.kube.calls.filter(c => c.startsWith('replaceStatus')).length, 2);
  });

  it('after the PVC: no Pod yet; the next invocation creates it', async () => {
    const m = member({}, { pvcName: 'data-demo-1' });
    const w = world([m, cluster()]);
    await w.run();
    const fresh = world([{ ...storedMember(w.kube)!, status: m.status }, cluster()]);
    const s = await crashAt('member:pvc-created', async () => {
      await fresh.run();
      return 'ran';
    });
    assert.equal(s, 'crashed');
    assert.ok(fresh.kube.stored('PersistentVolumeClaim', 'prod', 'data-demo-1'));
    assert.equal(fresh.kube.stored('Pod', 'prod', 'demo-1'), undefined);
  });

  it('a PVC that already existed is no crash point', async () => {
    const m = member();
    const w = world([m, cluster(), pvc(m)]);
    const exists = { kind: 'already-exists' };
    w.kube.script('create', 'PersistentVolumeClaim', exists, exists, exists, exists);
    w.kube.objects.delete('PersistentVolumeClaim/prod/data-demo-1');
    assert.notEqual(await crashAt('member:pvc-created', w.run), 'crashed');
  });

  it('after the Pod: the Pod is there', async () => {
    const m = member();
    const w = world([m, cluster(), pvc(m)]);
    assert.equal(await crashAt('member:pod-created', w.run), 'crashed');
    assert.ok(w.kube.stored('Pod', 'prod', 'demo-1'));
  });

  it('a Pod refused is no crash point', async () => {
    const m = member();
    const w = world([m, cluster(), pvc(m)]);
    w.kube.script('create', 'Pod', { kind: 'invalid', message: 'no' });
    assert.notEqual(await crashAt('member:pod-created', w.run), 'crashed');
  });

  it('after a paused member’s Pod is deleted: deleted, the PVC kept', async () => {
    const m = member({ dormant: true }, voter);
    const w = world([m, cluster(), pvc(m), pod(m, { role: 'voter' })]);
    assert.equal(await crashAt('member:pod-deleted', w.run), 'crashed');
    assert.equal(w.kube.stored('Pod', 'prod', 'demo-1'), undefined);
    assert.ok(w.kube.stored('PersistentVolumeClaim', 'prod', 'data-demo-1'));
  });

  it('after the role label: labelled; a patch that found no Pod is no crash point', async () => {
    const m = member({}, voter);
    const bare = pod(m, { role: 'voter' });
    delete bare.metadata?.labels;
    const w = world([m, clusterWithVoters, pvc(m), bare]);
    assert.equal(await crashAt('member:pod-labelled', w.run), 'crashed');
    assert.equal(
      w.kube.stored<V1Pod & KubeObject>('Pod', 'prod', 'demo-1')?.metadata.labels?.['etcdfn.io/role'],
      'voter',
    );
    const gone = world([m, clusterWithVoters, pvc(m), bare]);
    gone.kube.script('mergePatch', 'Pod', { kind: 'not-found' });
    assert.notEqual(await crashAt('member:pod-labelled', gone.run), 'crashed');
  });
});

describe('reconcile-member: an upgrade of the member that leads', () => {
  const m = member({ version: '3.5.16' }, { ...voter, version: '3.4.23' });
  const oldPod = (): V1Pod => ({
    ...pod(m, { role: 'voter' }),
    spec: { containers: [{ name: 'etcd', image: 'quay.io/coreos/etcd:v3.4.23' }] },
  });
  const leading = self({ version: '3.4.23', isLeader: true, leaderId: ID, raftTerm: 7 });
  const etcdLeading = (moved: 'ok' | 'fail') => ({
    memberStatus: async () => ({ kind: 'ok', status: leading }) as never,
    moveLeader: async (endpoints: readonly string[], toId: string) => {
      calls.push(`moveLeader ${endpoints.join(' ')} -> ${toId}`);
      return (
        moved === 'ok' ? { kind: 'ok', leaderId: toId } : { kind: 'unavailable', message: 'no quorum' }
      ) as never;
    },
  });
  const calls: string[] = [];

  it('moves leadership through the other voters and itself first, then plans again on a fresh read', async () => {
    calls.length = 0;
    const w = world([m, clusterWithVoters, pvc(m), oldPod()], etcdLeading('ok'));
    const outcome = await w.run();
    assert.deepEqual(calls.slice(0, 1), [`moveLeader ${OTHER_CLIENT} ${CLIENT} -> ${other.id}`]);
    assert.equal(outcome.result === 'done' || outcome.result === 'retry', true);
    const summary = outcome.result === 'done' ? outcome.summary : outcome.reason;
    assert.match(summary, new RegExp(`demo-1 leads etcd \\(term 7\\).*: ${other.id} leads now`));
    assert.ok(
      w.kube.calls.filter(c => c === 'get EtcdMember prod/demo-1').length >= 2,
      'observed again after the move',
    );
  });

  it('a member that still leads after every move: four passes, no more, and its Pod is not stopped', async () => {
    calls.length = 0;
    const w = world([m, clusterWithVoters, pvc(m), oldPod()], {
      ...etcdLeading('ok'),
      moveLeader: async (endpoints: readonly string[], toId: string) => {
        calls.push(`moveLeader ${endpoints.join(' ')} -> ${toId}`);
        return { kind: 'ok', leaderId: toId } as never;
      },
    });
    const outcome = await w.run();
    assert.equal(calls.length, 4);
    assert.equal(outcome.result, 'done');
    assert.equal((summaryOf(outcome) ?? '').split('; ').length, 4);
    assert.deepEqual(w.kube.deletes, []);
  });

  it('a move etcd refuses: retried with 503 and its message', async () => {
    calls.length = 0;
    const w = world([m, clusterWithVoters, pvc(m), oldPod()], etcdLeading('fail'));
    const outcome = await w.run();
    assert.equal(outcome.result, 'retry');
    assert.equal(outcome.result === 'retry' && outcome.status, 503);
    assert.match(outcome.result === 'retry' ? outcome.reason : '', /leads etcd \(term 7\).*: no quorum$/);
    assert.deepEqual(w.kube.deletes, [], 'the Pod is not stopped while it leads');
  });

  it('etcd not listing the members: waits with a retry, nothing deleted', async () => {
    const w = world([m, clusterWithVoters, pvc(m), oldPod()], {
      ...etcdLeading('ok'),
      listMembers: async () => ({ kind: 'unavailable', message: 'down' }) as never,
    });
    const outcome = await w.run();
    assert.equal(outcome.result, 'retry');
    assert.equal(outcome.result === 'retry' && outcome.status, 503);
    assert.deepEqual(w.kube.deletes, []);
  });
});

describe('reconcile-member: growing its PVC', () => {
  const m = member({ storage: { size: '2Gi', medium: '' } }, voter);
  const claim = (): V1PersistentVolumeClaim => ({
    ...pvc(m),
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: '1Gi' } },
      storageClassName: 'standard',
    },
    status: { phase: 'Bound', capacity: { storage: '1Gi' } },
  });
  const grow = () => world([m, clusterWithVoters, claim(), pod(m, { role: 'voter' })]);

  it('patches the requested size alone and says so in an Event', async () => {
    const w = grow();
    assert.deepEqual(await w.run(), { result: 'done', summary: 'PVC data-demo-1: 1Gi → 2Gi requested' });
    assert.deepEqual(
      w.kube.patches.map(p => p.patch),
      [{ spec: { resources: { requests: { storage: '2Gi' } } } }],
    );
    assert.deepEqual(w.kube.events, ['Normal GrowingVolume: growing PVC data-demo-1 from 1Gi to 2Gi']);
  });

  it('a conflict: retried with 409', async () => {
    const w = grow();
    w.kube.script('mergePatch', 'PersistentVolumeClaim', { kind: 'conflict', message: 'PVC changed' });
    assert.deepEqual(await w.run(), { result: 'retry', reason: 'PVC changed', status: 409 });
    assert.deepEqual(w.kube.events, []);
  });

  it('the PVC gone: said, no status change, no Event', async () => {
    const w = grow();
    w.kube.script('mergePatch', 'PersistentVolumeClaim', { kind: 'not-found' });
    assert.deepEqual(await w.run(), { result: 'done', summary: 'PVC data-demo-1 is gone' });
    assert.deepEqual(w.kube.events, []);
  });

  const refusals: [string, Record<string, unknown> | Error, string][] = [
    [
      'a 422',
      { kind: 'invalid', message: 'only dynamically provisioned pvc can be resized' },
      'only dynamically provisioned pvc can be resized',
    ],
    [
      'a 403 from a StorageClass that does not allow expansion',
      new KubeApiError(
        'patch PersistentVolumeClaim prod/data-demo-1',
        apiException(
          403,
          'Forbidden',
          'only dynamically provisioned pvc can be expanded and the storageclass must support resize',
        ),
      ),
      'only dynamically provisioned pvc can be expanded and the storageclass must support resize',
    ],
  ];
  for (const [what, answer, message] of refusals)
    it(`${what}: the refusal recorded in status with its time, a Warning Event, done`, async () => {
      const w = grow();
      w.kube.script('mergePatch', 'PersistentVolumeClaim', answer);
      const outcome = await w.run();
      assert.deepEqual(outcome, {
        result: 'done',
        summary: `growing PVC data-demo-1 to 2Gi refused: ${message}`,
      });
      const refused = storedMember(w.kube)?.status?.volume?.refused;
      assert.equal(refused?.size, '2Gi');
      assert.equal(refused?.at, '2026-11-22T10:00:00Z');
      assert.match(refused?.message ?? '', new RegExp(message));
      assert.equal(w.kube.events.length, 1);
      assert.match(w.kube.events[0] ?? '', /^Warning /);
      assert.match(w.kube.events[0] ?? '', /standard/);
    });

  it('any other error is thrown, nothing recorded', async () => {
    const w = grow();
    w.kube.script(
      'mergePatch',
      'PersistentVolumeClaim',
      new KubeApiError(
        'patch PersistentVolumeClaim prod/data-demo-1',
        apiException(500, 'InternalError', 'etcd down'),
      ),
    );
    await assert.rejects(w.run(), /patch PersistentVolumeClaim/);
    assert.equal(storedMember(w.kube)?.status?.volume?.refused, undefined);
  });

  it('refused, and the status write then conflicts: retried with 409, no Event', async () => {
    const w = grow();
    w.kube.script('mergePatch', 'PersistentVolumeClaim', { kind: 'invalid', message: 'no' });
    // The first write is the member's own status, before the step; the second the refusal.
    w.kube.script('replaceStatus', 'EtcdMember', null, { kind: 'conflict', message: 'member changed' });
    assert.deepEqual(await w.run(), { result: 'retry', reason: 'member changed', status: 409 });
    assert.deepEqual(w.kube.events, []);
  });

  it('refused, and the member gone before the status write: done, nothing written', async () => {
    const w = grow();
    w.kube.script('mergePatch', 'PersistentVolumeClaim', { kind: 'invalid', message: 'no' });
    w.kube.script('get', 'EtcdMember', null, { kind: 'not-found' });
    assert.deepEqual(await w.run(), { result: 'done', summary: 'EtcdMember demo-1 is gone' });
    assert.equal(w.kube.calls.filter(c => c.startsWith('replaceStatus')).length, 1, 'its own status only');
    assert.equal(storedMember(w.kube)?.status?.volume?.refused, undefined);
    assert.deepEqual(w.kube.events, []);
  });
});

describe('reconcile-member: Events', () => {
  it('an Event that cannot be written is logged, and the step still answers done', async () => {
    const m = member({}, { ...voter, pvcUID: 'pvc-uid', hasData: true });
    const w = world([
      m,
      clusterWithVoters,
      { ...pvc(m), spec: {} },
      { ...pod(m, { ready: false }), spec: { containers: [], nodeName: 'n2' } },
    ]);
    w.kube.script('create', 'Event', new Error('events are forbidden'));
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    assert.equal(w.kube.deletes.length, 1, 'the Pod was deleted all the same');
  });

  it('Events name the member, its namespace and uid, from reconcile-member', async () => {
    const m = member({}, { ...voter, pvcUID: 'pvc-uid', hasData: true });
    const w = world([
      m,
      clusterWithVoters,
      { ...pvc(m), spec: {} },
      { ...pod(m, { ready: false }), spec: { containers: [], nodeName: 'n2' } },
    ]);
    await w.run();
    const event = w.kube.created.find(o => o.kind === 'Event') as KubeObject & {
      involvedObject?: Record<string, string>;
      reportingInstance?: string;
      source?: { component?: string };
    };
    assert.deepEqual(
      {
        kind: event.involvedObject?.kind,
        name: event.involvedObject?.name,
        namespace: event.involvedObject?.namespace,
        uid: event.involvedObject?.uid,
      },
      { kind: 'EtcdMember', name: 'demo-1', namespace: 'prod', uid: 'member-uid' },
    );
    assert.equal(event.metadata.namespace, 'prod');
    assert.equal(event.reportingInstance, 'reconcile-member');
  });
});

describe('reconcile-member: the operator’s settings reach the Pod', () => {
  it('the Pods’ IP family: etcd listens on IPv6', async () => {
    const m = member();
    const w = world([m, cluster(), pvc(m)], {}, { podIPFamily: 'IPv6' });
    await w.run();
    const created = w.kube.stored<V1Pod & KubeObject>('Pod', 'prod', 'demo-1');
    const etcd = created?.spec?.containers.find(c => c.name === 'etcd');
    assert.match(JSON.stringify(etcd), /--listen-client-urls=http:\/\/\[\$\(POD_IP\)\]:2379/);
    const v4 = world([m, cluster(), pvc(m)], {}, { podIPFamily: 'IPv4' });
    await v4.run();
    const etcd4 = v4.kube
      .stored<V1Pod & KubeObject>('Pod', 'prod', 'demo-1')
      ?.spec?.containers.find(c => c.name === 'etcd');
    assert.match(JSON.stringify(etcd4), /--listen-client-urls=http:\/\/\$\(POD_IP\):2379/);
  });

  it('the S3 endpoint policy reaches a restoring seed’s fetch step', async () => {
    const s3 = {
      endpoint: 'https://s3.example.com',
      bucket: 'b',
      key: 'k/snap.db',
      credentialsSecretRef: { name: 'creds' },
    };
    const m = member({
      bootstrap: true,
      initialCluster: 'demo-1=http://demo-1.demo.prod.svc:2380',
      restore: { source: { s3, sha256: `sha256:${'ab'.repeat(32)}` } },
    });
    const w = world(
      [m, cluster({}), pvc(m)],
      {},
      { s3AllowedEndpoints: 'https://s3.example.com', s3DeniedRanges: '10.0.0.0/8' },
    );
    await w.run();
    const created = w.kube.stored<V1Pod & KubeObject>('Pod', 'prod', 'demo-1');
    const env = created?.spec?.initContainers?.find(c => c.name === 'restore-fetch')?.env ?? [];
    assert.deepEqual(
      env.filter(e => e.name.startsWith('ETCDFN_S3_')).map(e => [e.name, e.value]),
      [
        ['ETCDFN_S3_ALLOWED_ENDPOINTS', 'https://s3.example.com'],
        ['ETCDFN_S3_DENIED_RANGES', '10.0.0.0/8'],
      ],
    );
  });

  it('the etcd image repository', async () => {
    const w = world(
      [member(), cluster(), pvc(member())],
      {},
      { etcdImageRepository: 'registry.example/etcd' },
    );
    await w.run();
    const created = w.kube.stored<V1Pod & KubeObject>('Pod', 'prod', 'demo-1');
    assert.match(
      created?.spec?.containers.find(c => c.name === 'etcd')?.image ?? '',
      /^registry\.example\/etcd:/,
    );
  });
});
