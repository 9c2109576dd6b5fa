// finalize-member's I/O (shared/reconcile/finalize.ts) over an in-memory Kubernetes
// (test/support/fake-kube.ts) and a scripted etcd: the order of the steps (leadership off the
// member, then its removal from etcd, then the finalizer, never the finalizer before the removal),
// which etcd endpoints it asks, the finalizer written compare-and-swap with the others kept, the
// Events on the cluster, and what it answers when each call fails. The same against a real API
// server and etcd is test/integration/reconcile-finalize.test.ts; the decisions are plan-finalize's.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { EtcdMember as EtcdMembership } from '../../shared/etcd/members.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { finalizeMember } from '../../shared/reconcile/finalize.ts';
import { crashAt } from '../support/crash-at.ts';
import { FakeKube, fakeContext } from '../support/fake-kube.ts';
import { etcdCluster, etcdMember } from '../support/etcd-objects.ts';

process.env.LOG_LEVEL ??= 'silent';

const NOW = new Date('2026-11-22T10:00:00Z');
const CLUSTER_ID = 'c0ffee0000000001';
const url = (name: string, port = 2379) => `http://${name}.demo.prod.svc:${port}`;
const ids: Record<string, string> = {
  'demo-0': '00000000000000a0',
  'demo-1': '00000000000000a1',
  'demo-2': '00000000000000a2',
};
const REF = { namespace: 'prod', name: 'demo-2' };
const ready = [{ type: 'Ready', status: 'True', reason: 'PodReady', message: '', lastTransitionTime: '' }];

const demo = (status: Record<string, unknown> = { clusterID: CLUSTER_ID }, deleting = false) =>
  etcdCluster({
    metadata: { uid: 'cluster-uid', deletionTimestamp: deleting ? NOW : undefined },
    spec: { replicas: undefined },
    status: status,
  });

function member(name: string, o: { deleting?: boolean; finalizers?: string[]; voter?: boolean } = {}) {
  return etcdMember(name, {
    metadata: {
      uid: `${name}-uid`,
      resourceVersion: '7',
      labels: { 'etcdfn.io/cluster': 'demo' },
      finalizers: o.finalizers ?? ['etcdfn.io/member-cleanup'],
      deletionTimestamp: (o.deleting ?? name === 'demo-2') ? NOW : undefined,
    },
    spec: { initialCluster: 'demo-0=…', clusterToken: 't' },
    status: { isVoter: o.voter ?? true, conditions: ready as never },
  });
}

const inEtcd = (name: string, o: Partial<EtcdMembership> = {}): EtcdMembership => ({
  id: ids[name] ?? 'ff',
  name,
  peerURLs: [url(name, 2380)],
  clientURLs: [url(name)],
  isLearner: false,
  started: true,
  ...o,
});

/**
 * An etcd of demo-0..2 that demo-0 leads unless `leader` says: a removal takes the member out of
 * its list, a leadership move hands over; every call recorded.
 */
function fakeEtcd(
  o: {
    leader?: string;
    overrides?: Partial<EtcdAdapter>;
    members?: EtcdMembership[];
    /** etcd's answer to a removal (default ok); ok and member-not-found leave the member out. */
    removal?: () => { kind: string; message?: string };
  } = {},
) {
  const calls: string[] = [];
  let members = o.members ?? ['demo-0', 'demo-1', 'demo-2'].map(n => inEtcd(n));
  let leader = ids[o.leader ?? 'demo-0'];
  const etcd: Partial<EtcdAdapter> = {
    listMembers: async endpoints => {
      calls.push(`listMembers ${endpoints.join(' ')}`);
      return { kind: 'ok', members, clusterId: CLUSTER_ID, endpoint: endpoints[0] ?? '' } as never;
    },
    clusterStatus: async endpoints => {
      calls.push(`clusterStatus ${endpoints.join(' ')}`);
      return endpoints.map(endpoint => ({
        kind: 'ok',
        endpoint,
        status: { leaderId: leader, raftTerm: 3 },
      })) as never;
    },
    moveLeader: async (endpoints, toId) => {
      calls.push(`moveLeader ${endpoints.join(' ')} -> ${toId}`);
      leader = toId;
      return { kind: 'ok', leaderId: toId } as never;
    },
    remove: async (endpoints, id) => {
      calls.push(`remove ${endpoints.join(' ')} ${id}`);
      const answer = o.removal?.() ?? { kind: 'ok' };
      if (answer.kind === 'ok' || answer.kind === 'member-not-found')
        members = members.filter(m => m.id !== id);
      return answer as never;
    },
    ...o.overrides,
  };
  return { etcd, calls };
}

function world(objects: unknown[], etcdOptions: Parameters<typeof fakeEtcd>[0] = {}, settings = {}) {
  const kube = new FakeKube(objects);
  const { etcd, calls } = fakeEtcd(etcdOptions);
  const ctx = fakeContext(kube, etcd, settings, NOW);
  return { kube, etcdCalls: calls, run: () => finalizeMember(ctx, REF) };
}

const scaleDown = () => [demo(), member('demo-0'), member('demo-1'), member('demo-2')];
const stored = (kube: FakeKube) => kube.stored<EtcdMember & KubeObject>('EtcdMember', 'prod', 'demo-2');

describe('finalize-member: a member leaving a running cluster', () => {
  it('removes it from etcd through the other members, then its finalizer, and says so on the cluster', async () => {
    const w = world(scaleDown());
    const outcome = await w.run();
    assert.deepEqual(outcome, {
      result: 'done',
      summary: `removed demo-2 (${ids['demo-2']}) from etcd; demo-2 is not (or no longer) a member of etcd; finalizer removed`,
    });
    assert.deepEqual(w.etcdCalls, [
      `listMembers ${url('demo-0')} ${url('demo-1')}`,
      `clusterStatus ${url('demo-0')} ${url('demo-2')}`,
      `remove ${url('demo-0')} ${url('demo-1')} ${ids['demo-2']}`,
      `listMembers ${url('demo-0')} ${url('demo-1')}`,
      `clusterStatus ${url('demo-0')} ${url('demo-2')}`,
    ]);
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, []);
    assert.deepEqual(w.kube.events, [
      `Normal MemberRemoved: member demo-2 (voter ${ids['demo-2']}) removed from etcd; 2 members left`,
    ]);
    const event = w.kube.created.find(o => o.kind === 'Event') as KubeObject & {
      involvedObject?: Record<string, string>;
    };
    assert.equal(event.involvedObject?.kind, 'EtcdCluster');
    assert.equal(event.involvedObject?.uid, 'cluster-uid');
    assert.match(JSON.stringify(event), /finalize-member/);
  });

  it('lists only members of its own cluster, by label, in its namespace', async () => {
    const stranger = { ...member('demo-9'), spec: { ...member('demo-9').spec, clusterName: 'other' } };
    const w = world([...scaleDown(), stranger]);
    await w.run();
    assert.ok(w.kube.calls.includes('list EtcdMember prod etcdfn.io/cluster=demo'), w.kube.calls.join());
    assert.equal(w.etcdCalls[0], `listMembers ${url('demo-0')} ${url('demo-1')}`, 'not through demo-9');
  });

  it('the finalizer write keeps every other finalizer and is compare-and-swap', async () => {
    const m = member('demo-2', { finalizers: ['example.com/keep', 'etcdfn.io/member-cleanup'] });
    const w = world([demo(), member('demo-0'), member('demo-1'), m]);
    await w.run();
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['example.com/keep']);
    assert.deepEqual(
      w.kube.writes.filter(c => c.startsWith('replace')),
      ['replace EtcdMember prod/demo-2'],
    );
  });

  it('the member leads: leadership moves to the member that answered first, then it is removed, then the finalizer', async () => {
    const w = world(scaleDown(), { leader: 'demo-2' });
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    const steps = w.etcdCalls.filter(c => /^(moveLeader|remove)/.test(c));
    assert.deepEqual(steps, [
      `moveLeader ${url('demo-2')} ${url('demo-0')} ${url('demo-1')} -> ${ids['demo-0']}`,
      `remove ${url('demo-0')} ${url('demo-1')} ${ids['demo-2']}`,
    ]);
    assert.match(
      outcome.result === 'done' ? outcome.summary : '',
      /^moved leadership from demo-2 to demo-0; removed demo-2 .* from etcd; .*finalizer removed$/,
    );
    assert.deepEqual(
      w.kube.events.map(e => e.split(':')[0]),
      ['Normal LeaderMoved', 'Normal MemberRemoved'],
    );
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, []);
  });

  it('a leadership move etcd refuses: retried with 503, the member stays in etcd and keeps its finalizer', async () => {
    const w = world(scaleDown(), {
      leader: 'demo-2',
      overrides: { moveLeader: async () => ({ kind: 'unavailable', message: 'no quorum' }) as never },
    });
    assert.deepEqual(await w.run(), {
      result: 'retry',
      reason: 'moving leadership off demo-2 to demo-0: no quorum',
      status: 503,
    });
    assert.equal(w.etcdCalls.filter(c => c.startsWith('remove')).length, 0);
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['etcdfn.io/member-cleanup']);
    assert.deepEqual(w.kube.events, []);
  });

  it('a removal etcd refuses: retried with 503, the finalizer kept, no Event', async () => {
    const w = world(scaleDown(), { removal: () => ({ kind: 'unavailable', message: 'etcd down' }) });
    assert.deepEqual(await w.run(), {
      result: 'retry',
      reason: `removing demo-2 (${ids['demo-2']}) from etcd: etcd down`,
      status: 503,
    });
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['etcdfn.io/member-cleanup']);
    assert.deepEqual(w.kube.events, []);
  });

  it('already out of etcd when removed: said, and the finalizer goes', async () => {
    const w = world(scaleDown(), { removal: () => ({ kind: 'member-not-found' }) });
    const outcome = await w.run();
    assert.match(outcome.result === 'done' ? outcome.summary : '', /^demo-2 was already out of etcd; /);
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, []);
    assert.deepEqual(w.kube.events, []);
  });

  it('etcd not ready for a removal (strict reconfiguration): asked again until it is', async () => {
    let refusals = 2;
    const w = world(scaleDown(), {
      removal: () => (refusals-- > 0 ? { kind: 'unhealthy-cluster', message: 'not yet' } : { kind: 'ok' }),
    });
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    assert.equal(refusals, -1, 'three calls');
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, []);
  });

  it('etcd never ready within the wait: the refusal answered as a retry, the finalizer kept', async () => {
    let calls = 0;
    const w = world(
      scaleDown(),
      { removal: () => (calls++, { kind: 'unhealthy-cluster', message: 'not yet' }) },
      { unhealthyWaitMs: 120 },
    );
    const started = Date.now();
    const outcome = await w.run();
    assert.equal(outcome.result, 'retry');
    assert.match(outcome.result === 'retry' ? outcome.reason : '', /not yet$/);
    assert.ok(calls >= 2, `asked again (${calls})`);
    assert.ok(Date.now() - started < 2000, 'gave up after the wait');
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['etcdfn.io/member-cleanup']);
  });

  it('no answer from etcd: the finalizer kept, the error named', async () => {
    const w = world(scaleDown(), {
      overrides: {
        listMembers: async () => ({ kind: 'unavailable', message: 'connection refused' }) as never,
      },
    });
    const outcome = await w.run();
    assert.equal(outcome.result, 'retry');
    assert.match(
      outcome.result === 'retry' ? outcome.reason : '',
      /: connection refused\); keeping demo-2's finalizer/,
    );
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['etcdfn.io/member-cleanup']);
  });

  it('not in etcd (never added): the finalizer goes without a removal', async () => {
    const w = world(scaleDown(), { members: [inEtcd('demo-0'), inEtcd('demo-1')] });
    const outcome = await w.run();
    assert.deepEqual(outcome, {
      result: 'done',
      summary: 'demo-2 is not (or no longer) a member of etcd; finalizer removed',
    });
    assert.equal(w.etcdCalls.filter(c => c.startsWith('remove')).length, 0);
  });
});

describe('finalize-member: the finalizer write', () => {
  it('a conflict: retried with 409, naming it', async () => {
    const w = world([demo(undefined, true), member('demo-2')]);
    w.kube.script('replace', 'EtcdMember', { kind: 'conflict', message: 'changed' });
    assert.deepEqual(await w.run(), {
      result: 'retry',
      reason: 'EtcdMember demo-2 changed meanwhile: changed',
      status: 409,
    });
  });

  it('the member gone meanwhile: done', async () => {
    const w = world([demo(undefined, true), member('demo-2')]);
    w.kube.script('replace', 'EtcdMember', { kind: 'not-found' });
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    assert.match(outcome.result === 'done' ? outcome.summary : '', /finalizer removed$/);
  });

  it('refused: thrown with the message', async () => {
    const w = world([demo(undefined, true), member('demo-2')]);
    w.kube.script('replace', 'EtcdMember', { kind: 'invalid', message: 'bad finalizers' });
    await assert.rejects(w.run(), /removing the finalizer of EtcdMember demo-2 refused: bad finalizers/);
  });
});

describe('finalize-member: members it does not ask etcd about', () => {
  it('gone: done, nothing written', async () => {
    const w = world([]);
    assert.deepEqual(await w.run(), { result: 'done', summary: 'EtcdMember prod/demo-2 is gone' });
    assert.deepEqual(w.kube.calls, ['get EtcdMember prod/demo-2']);
  });

  it('not being deleted: only the member read', async () => {
    const w = world([demo(), member('demo-2', { deleting: false })]);
    assert.deepEqual(await w.run(), { result: 'done', summary: 'demo-2 is not being deleted' });
    assert.deepEqual(w.kube.calls, ['get EtcdMember prod/demo-2']);
  });

  it('its finalizer already gone: only the member read', async () => {
    const w = world([demo(), member('demo-2', { finalizers: ['example.com/x'] })]);
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    assert.deepEqual(w.kube.calls, ['get EtcdMember prod/demo-2']);
  });

  it('its cluster being deleted: the finalizer goes, etcd not asked, the members not listed', async () => {
    const w = world([demo(undefined, true), member('demo-0'), member('demo-2')]);
    const outcome = await w.run();
    assert.match(
      outcome.result === 'done' ? outcome.summary : '',
      /is being deleted: etcd goes with it.*finalizer removed$/,
    );
    assert.deepEqual(w.etcdCalls, []);
    assert.equal(w.kube.calls.filter(c => c.startsWith('list')).length, 0);
  });

  it('its cluster gone: the finalizer goes, etcd not asked', async () => {
    const w = world([member('demo-0'), member('demo-2')]);
    const outcome = await w.run();
    assert.match(outcome.result === 'done' ? outcome.summary : '', /EtcdCluster demo is gone/);
    assert.deepEqual(w.etcdCalls, []);
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, []);
  });

  it('the last member: the finalizer goes, etcd not asked', async () => {
    const w = world([demo({}), member('demo-2')]);
    const outcome = await w.run();
    assert.match(outcome.result === 'done' ? outcome.summary : '', /last member/);
    assert.deepEqual(w.etcdCalls, []);
  });

  it('the only one holding the data: kept, a Warning Event on the cluster, no write', async () => {
    const dormant = { ...member('demo-0'), spec: { ...member('demo-0').spec, dormant: true } };
    const w = world([demo(), dormant, member('demo-2')]);
    const outcome = await w.run();
    assert.equal(outcome.result, 'done');
    assert.match(outcome.result === 'done' ? outcome.summary : '', /^deletion of demo-2 is held/);
    assert.deepEqual(w.etcdCalls, []);
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['etcdfn.io/member-cleanup']);
    assert.deepEqual(
      w.kube.events.map(e => e.split(':')[0]),
      ['Warning DeletionHeld'],
    );
    assert.equal(w.kube.writes.filter(c => !c.startsWith('create Event')).length, 0);
  });

  it('no other member with a Pod to ask: retried, the finalizer kept, etcd not called', async () => {
    const unwired = { ...member('demo-0'), spec: { ...member('demo-0').spec, initialCluster: '' } };
    const w = world([demo({}), unwired, member('demo-2')]);
    const outcome = await w.run();
    assert.equal(outcome.result, 'retry');
    assert.match(outcome.result === 'retry' ? outcome.reason : '', /none of demo-0 has a Pod to ask/);
    assert.deepEqual(w.etcdCalls, []);
  });
});

describe('finalize-member: every pass used', () => {
  it('a member that stays in etcd and keeps leading: not finished after four steps, retried', async () => {
    // etcd says the move went through, yet demo-2 still leads on every read.
    const w = world(scaleDown(), {
      leader: 'demo-2',
      overrides: { moveLeader: async (_endpoints, toId) => ({ kind: 'ok', leaderId: toId }) as never },
    });
    const outcome = await w.run();
    assert.equal(outcome.result, 'retry');
    assert.equal(outcome.result === 'retry' && outcome.status, 503);
    assert.match(
      outcome.result === 'retry' ? outcome.reason : '',
      /^moved leadership from demo-2 to demo-0; (moved leadership from demo-2 to demo-0; ){3}not finished after 4 steps$/,
    );
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['etcdfn.io/member-cleanup']);
  });
});

describe('finalize-member: a crash just after each step', () => {
  it('after leadership moved: nothing removed yet, the finalizer kept; the next invocation finishes', async () => {
    const w = world(scaleDown(), { leader: 'demo-2' });
    assert.equal(await crashAt('finalize:leader-moved', w.run), 'crashed');
    assert.deepEqual(
      w.etcdCalls.filter(c => /^(moveLeader|remove)/.test(c)).map(c => c.split(' ')[0]),
      ['moveLeader'],
    );
    assert.deepEqual(w.kube.events, []);
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['etcdfn.io/member-cleanup']);
    assert.equal((await w.run()).result, 'done');
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, []);
  });

  it('after the removal from etcd: the finalizer still on (the next invocation finds it out of etcd)', async () => {
    const w = world(scaleDown());
    assert.equal(await crashAt('finalize:removed-from-etcd', w.run), 'crashed');
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['etcdfn.io/member-cleanup']);
    assert.deepEqual(w.kube.events, []);
    const outcome = await w.run();
    assert.match(
      outcome.result === 'done' ? outcome.summary : '',
      /not \(or no longer\) a member of etcd; finalizer removed$/,
    );
  });

  it('a removal that found the member already out is no crash point', async () => {
    const w = world(scaleDown(), { removal: () => ({ kind: 'member-not-found' }) });
    assert.notEqual(await crashAt('finalize:removed-from-etcd', w.run), 'crashed');
  });

  it('after the finalizer went: it is gone', async () => {
    const w = world([demo(undefined, true), member('demo-2')]);
    assert.equal(await crashAt('finalize:finalizer-removed', w.run), 'crashed');
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, []);
  });

  it('a finalizer write that found the member gone is no crash point', async () => {
    const w = world([demo(undefined, true), member('demo-2')]);
    w.kube.script('replace', 'EtcdMember', { kind: 'not-found' });
    assert.notEqual(await crashAt('finalize:finalizer-removed', w.run), 'crashed');
  });

  it('a refused leadership move is no crash point', async () => {
    const w = world(scaleDown(), {
      leader: 'demo-2',
      overrides: { moveLeader: async () => ({ kind: 'unavailable', message: 'no' }) as never },
    });
    assert.notEqual(await crashAt('finalize:leader-moved', w.run), 'crashed');
  });
});

describe('finalize-member: etcd reached only with the cluster’s own access', () => {
  it('a TLS cluster whose client Secret is missing: nothing removed, the Secret named, retried', async () => {
    const tls = {
      ...demo(),
      spec: { ...demo().spec, tls: { client: { serverSecretRef: { name: 'demo-client-tls' } } } },
    };
    const w = world([tls, member('demo-0'), member('demo-1'), member('demo-2')]);
    const outcome = await w.run();
    assert.equal(outcome.result, 'retry');
    assert.match(outcome.result === 'retry' ? outcome.reason : '', /demo-client-tls/);
    assert.deepEqual(w.etcdCalls, [], 'the fake stands for plain access only: never called');
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['etcdfn.io/member-cleanup']);
  });
});

describe('finalize-member: waiting for etcd to allow a removal', () => {
  it('no wait configured: asked once, the refusal answered at once', async () => {
    let calls = 0;
    const w = world(
      scaleDown(),
      { removal: () => (calls++, { kind: 'unhealthy-cluster', message: 'not yet' }) },
      { unhealthyWaitMs: 0 },
    );
    assert.equal((await w.run()).result, 'retry');
    assert.equal(calls, 1);
  });
});

describe('finalize-member: its Events come from finalize-member', () => {
  const instances = (kube: FakeKube) =>
    kube.created
      .filter(o => o.kind === 'Event')
      .map(o => (o as { reportingInstance?: string }).reportingInstance);

  it('LeaderMoved and MemberRemoved', async () => {
    const w = world(scaleDown(), { leader: 'demo-2' });
    await w.run();
    assert.deepEqual(instances(w.kube), ['finalize-member', 'finalize-member']);
  });

  it('about a cluster with no uid (nothing to attach it to): no Event, the deletion still held', async () => {
    const dormant = { ...member('demo-0'), spec: { ...member('demo-0').spec, dormant: true } };
    const noUid = { ...demo(), metadata: { ...demo().metadata, uid: undefined } };
    const w = world([noUid, dormant, member('demo-2')]);
    const outcome = await w.run();
    assert.match(outcome.result === 'done' ? outcome.summary : '', /^deletion of demo-2 is held/);
    assert.deepEqual(w.kube.events, []);
    assert.deepEqual(stored(w.kube)?.metadata.finalizers, ['etcdfn.io/member-cleanup']);
  });

  it('DeletionHeld', async () => {
    const dormant = { ...member('demo-0'), spec: { ...member('demo-0').spec, dormant: true } };
    const w = world([demo(), dormant, member('demo-2')]);
    await w.run();
    assert.deepEqual(instances(w.kube), ['finalize-member']);
  });
});
