// reconcile-member and finalize-member end to end over in-memory fakes of the Kubernetes and etcd
// adapters: what each invocation reads, writes and answers.
import assert from 'node:assert/strict';
import { beforeEach, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { controllerRef } from '../../shared/builders/owner.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { EtcdMember as EtcdMembership } from '../../shared/etcd/members.ts';
import type { MemberStatus } from '../../shared/etcd/status.ts';
import type { OperatorEvent } from '../../shared/events/types.ts';
import type { KubeObject, KubeObjects, ObjectRef } from '../../shared/k8s/objects.ts';
import { finalizeMember } from '../../shared/reconcile/finalize.ts';
import { reconcileMember } from '../../shared/reconcile/member.ts';
import { settingsFromEnv, type Context } from '../../shared/runtime/context.ts';
import { createHandler } from '../../functions/reconcile-member/index.ts';
import { etcdCluster, etcdMember } from '../support/etcd-objects.ts';

const NOW = new Date('2026-11-22T10:00:00Z');
const CLUSTER_ID = 'c0ffee0000000001';
const url = (name: string, port: number) => `http://${name}.demo.prod.svc:${port}`;
const idOf = (name: string) => `00000000000000a${name.slice(-1)}`;

/** The subset of KubeObjects the functions use, over a map, with resourceVersions and finalizers. */
class FakeKube {
  objects = new Map<string, KubeObject>();
  writes: string[] = [];
  private rv = 100;
  /** How many of the next status writes lose to another writer (409). */
  conflictingStatusWrites = 0;

  key(ref: { kind?: string; namespace?: string; name?: string }): string {
    return `${ref.kind}/${ref.namespace}/${ref.name}`;
  }
  put<T extends KubeObject>(object: T): T {
    const stored = structuredClone(object);
    stored.metadata.resourceVersion = String(++this.rv);
    this.objects.set(this.key({ kind: object.kind, ...object.metadata }), stored);
    return structuredClone(stored);
  }
  /** What the fake holds now (for assertions). */
  stored<T>(kind: string, name: string): T | undefined {
    const o = this.objects.get(`${kind}/prod/${name}`);
    return o ? (structuredClone(o) as T) : undefined;
  }
  async get<T extends KubeObject>(ref: ObjectRef) {
    const o = this.objects.get(this.key(ref));
    return o ? { kind: 'found' as const, object: structuredClone(o) as T } : { kind: 'not-found' as const };
  }
  async find<T extends KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    const read = await this.get<T>(ref);
    return read.kind === 'found' ? read.object : undefined;
  }
  async list<T extends KubeObject>(_apiVersion: string, kind: string, namespace: string, selector?: string) {
    const [key, value] = (selector ?? '').split('=');
    return [...this.objects.values()].filter(
      o =>
        o.kind === kind && o.metadata.namespace === namespace && (!key || o.metadata.labels?.[key] === value),
    ) as T[];
  }
  async create<T extends KubeObject>(object: T) {
    this.writes.push(`create ${object.kind} ${object.metadata.name}`);
    if (this.objects.has(this.key({ kind: object.kind, ...object.metadata })))
      return { kind: 'already-exists' as const };
    const uid = object.metadata.uid ?? `${object.metadata.name}-uid`;
    return {
      kind: 'created' as const,
      object: this.put({ ...object, metadata: { ...object.metadata, uid } }),
    };
  }
  private check(object: KubeObject) {
    const existing = this.objects.get(this.key({ kind: object.kind, ...object.metadata }));
    if (!existing) return { kind: 'not-found' as const };
    if (existing.metadata.resourceVersion !== object.metadata.resourceVersion) {
      return { kind: 'conflict' as const, message: 'the object has been modified' };
    }
    return undefined;
  }
  async replace<T extends KubeObject>(object: T) {
    this.writes.push(`replace ${object.kind} ${object.metadata.name}`);
    const failed = this.check(object);
    if (failed) return failed;
    if (object.metadata.deletionTimestamp && (object.metadata.finalizers ?? []).length === 0) {
      this.objects.delete(this.key({ kind: object.kind, ...object.metadata }));
      return { kind: 'written' as const, object };
    }
    return { kind: 'written' as const, object: this.put(object) };
  }
  async replaceStatus<T extends KubeObject>(object: T) {
    this.writes.push(`status ${object.kind} ${object.metadata.name}`);
    if (this.conflictingStatusWrites > 0) {
      this.conflictingStatusWrites--;
      return { kind: 'conflict' as const, message: 'the object has been modified' };
    }
    return this.check(object) ?? { kind: 'written' as const, object: this.put(object) };
  }
  async mergePatch<T extends KubeObject>(
    ref: ObjectRef,
    patch: { metadata?: { labels?: Record<string, string> } },
  ) {
    this.writes.push(`patch ${ref.kind} ${ref.name}`);
    const existing = this.objects.get(this.key(ref));
    if (!existing) return { kind: 'not-found' as const };
    const labels = { ...existing.metadata.labels, ...patch.metadata?.labels };
    return {
      kind: 'written' as const,
      object: this.put({ ...existing, metadata: { ...existing.metadata, labels } }) as T,
    };
  }
  async delete(ref: ObjectRef) {
    this.writes.push(`delete ${ref.kind} ${ref.name}`);
    const existing = this.objects.get(this.key(ref));
    if (!existing) return { kind: 'not-found' as const };
    if ((existing.metadata.finalizers ?? []).length > 0) {
      this.put({ ...existing, metadata: { ...existing.metadata, deletionTimestamp: NOW } });
    } else this.objects.delete(this.key(ref));
    return { kind: 'deleted' as const };
  }
}

/** etcd as the adapter sees it: one membership, reachable through the client URLs of `up`. */
class FakeEtcd {
  members: EtcdMembership[] = [];
  up = new Set<string>();
  leader = '';
  calls: string[] = [];
  /** The endpoints of every listMembers call. */
  listedVia: string[][] = [];
  /** Removals refused as "unhealthy cluster" before one goes through. */
  unhealthyRemovals = 0;

  reachable(endpoints: readonly string[]) {
    return endpoints.find(e => this.up.has(e));
  }
  adapter(): EtcdAdapter {
    const unavailable = (endpoints: readonly string[]) => ({
      kind: 'unavailable' as const,
      message: endpoints.map(e => `${e}: connect ECONNREFUSED`).join('; '),
    });
    const status = (endpoint: string): MemberStatus | undefined => {
      const m = this.members.find(e => e.clientURLs.includes(endpoint));
      if (!m || !this.up.has(endpoint)) return undefined;
      return {
        endpoint,
        memberId: m.id,
        clusterId: CLUSTER_ID,
        leaderId: this.leader,
        isLeader: this.leader === m.id,
        isLearner: m.isLearner,
        version: '3.5.16',
        raftTerm: 3,
        raftIndex: 1,
        raftAppliedIndex: 1,
        dbSize: 1,
        dbSizeInUse: 1,
        errors: [],
      };
    };
    return {
      listMembers: async endpoints => {
        this.calls.push('list');
        this.listedVia.push([...endpoints]);
        const endpoint = this.reachable(endpoints);
        if (!endpoint) return unavailable(endpoints);
        return { kind: 'ok', members: structuredClone(this.members), clusterId: CLUSTER_ID, endpoint };
      },
      memberStatus: async endpoint => {
        const s = status(endpoint);
        return s ? { kind: 'ok', status: s } : unavailable([endpoint]);
      },
      clusterStatus: async endpoints =>
        endpoints.map(endpoint => {
          const s = status(endpoint);
          return s ? { kind: 'ok' as const, status: s, endpoint } : { ...unavailable([endpoint]), endpoint };
        }),
      moveLeader: async (endpoints, toId) => {
        this.calls.push(`move-leader ${toId}`);
        if (!this.reachable(endpoints)) return unavailable(endpoints);
        const previousLeaderId = this.leader;
        this.leader = toId;
        return { kind: 'ok', leaderId: toId, previousLeaderId };
      },
      remove: async (endpoints, id) => {
        this.calls.push(`remove ${id}`);
        if (!this.reachable(endpoints)) return unavailable(endpoints);
        if (this.unhealthyRemovals > 0) {
          this.unhealthyRemovals--;
          return { kind: 'unhealthy-cluster', message: 'etcdserver: unhealthy cluster' };
        }
        if (!this.members.some(m => m.id === id))
          return { kind: 'member-not-found', message: 'member not found' };
        this.members = this.members.filter(m => m.id !== id);
        return { kind: 'ok', members: structuredClone(this.members) };
      },
      addLearner: () => Promise.reject(new Error('not used')),
      promote: () => Promise.reject(new Error('not used')),
      snapshot: () => Promise.reject(new Error('not used')),
      listAlarms: () => Promise.reject(new Error('not used')),
      disarmAlarm: () => Promise.reject(new Error('not used')),
      compact: () => Promise.reject(new Error('not used')),
      defragment: () => Promise.reject(new Error('not used')),
      healthRead: () => Promise.reject(new Error('not used')),
      storageState: () => Promise.reject(new Error('not used')),
      enableDowngrade: () => Promise.reject(new Error('not used')),
    };
  }
}

function inEtcd(name: string, isLearner = false): EtcdMembership {
  return {
    id: idOf(name),
    name,
    peerURLs: [url(name, 2380)],
    clientURLs: [url(name, 2379)],
    isLearner,
    started: true,
  };
}

/** Cluster demo (uid cluster-uid) formed as CLUSTER_ID, demo-0 and demo-1 ready voters in its status. */
function formedCluster(): EtcdCluster & KubeObject {
  return etcdCluster({
    metadata: { uid: 'cluster-uid' },
    status: {
      clusterID: CLUSTER_ID,
      members: [
        { name: 'demo-0', role: 'voter', ready: true },
        { name: 'demo-1', role: 'voter', ready: true },
      ],
    },
  });
}

function member(name: string, spec: Partial<EtcdMember['spec']> = {}): EtcdMember & KubeObject {
  return etcdMember(name, {
    metadata: {
      uid: `${name}-uid`,
      generation: 1,
      labels: { 'etcdfn.io/cluster': 'demo' },
      finalizers: ['etcdfn.io/member-cleanup'],
      ownerReferences: [controllerRef(formedCluster())],
    },
    spec: {
      storage: { size: '1Gi', medium: '' },
      initialCluster: ['demo-0', 'demo-1', 'demo-2'].map(n => `${n}=${url(n, 2380)}`).join(','),
      clusterToken: 'prod-demo-cluster-uid',
      ...spec,
    },
  });
}

let kube: FakeKube;
let etcd: FakeEtcd;
let ctx: Context;

beforeEach(() => {
  kube = new FakeKube();
  etcd = new FakeEtcd();
  ctx = {
    kube: kube as unknown as KubeObjects,
    etcd: etcd.adapter(),
    now: () => NOW,
    settings: settingsFromEnv({}),
  };
  kube.put(formedCluster());
  etcd.members = [inEtcd('demo-0'), inEtcd('demo-1'), inEtcd('demo-2')];
  for (const n of ['demo-0', 'demo-1', 'demo-2']) etcd.up.add(url(n, 2379));
  etcd.leader = idOf('demo-0');
});

const ref = (name: string) => ({ namespace: 'prod', name });

function markReady(name: string): void {
  const pod = kube.stored<V1Pod & KubeObject>('Pod', name)!;
  kube.put({ ...pod, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] } });
}

describe('reconcileMember over fakes', () => {
  it('a new learner gets its PVC and Pod in one invocation, then its ID, role label and version', async () => {
    etcd.members[2] = inEtcd('demo-2', true);
    kube.put(member('demo-2'));
    const first = await reconcileMember(ctx, ref('demo-2'));
    assert.equal(first.result, 'done');
    assert.deepEqual(kube.writes, [
      'status EtcdMember demo-2',
      'create PersistentVolumeClaim data-demo-2',
      // The new PVC's UID is recorded before a Pod writes data on it (a PVC with another UID later
      // does not hold the member's data).
      'status EtcdMember demo-2',
      'create Pod demo-2',
    ]);
    const pod = kube.stored<V1Pod>('Pod', 'demo-2')!;
    assert.equal(pod.metadata?.labels?.['etcdfn.io/role'], 'learner');
    assert.equal(pod.metadata?.ownerReferences?.[0]?.uid, 'demo-2-uid');
    assert.equal(kube.stored<EtcdMember>('EtcdMember', 'demo-2')?.status?.memberID, idOf('demo-2'));

    markReady('demo-2');
    kube.writes = [];
    const second = await reconcileMember(ctx, ref('demo-2'));
    assert.equal(second.result, 'done');
    assert.deepEqual(kube.writes, ['status EtcdMember demo-2']);
    const status = kube.stored<EtcdMember>('EtcdMember', 'demo-2')?.status;
    assert.equal(status?.role, 'learner');
    assert.equal(status?.version, '3.5.16');
    assert.equal(status?.conditions?.[0]?.reason, 'PodReady');

    kube.writes = [];
    await reconcileMember(ctx, ref('demo-2'));
    assert.deepEqual(kube.writes, [], 'a steady member is read, never written');
  });

  it('asks its own etcd only once its Pod is ready: a member still joining would hold the request', async () => {
    // A new cluster: no ready voter yet, so only the member itself could answer.
    kube.put(etcdCluster({ metadata: { uid: 'cluster-uid' }, status: { members: [] } }));
    etcd.members = [inEtcd('demo-0')];
    kube.put(member('demo-0'));
    await reconcileMember(ctx, ref('demo-0'));
    assert.ok(kube.stored<V1Pod>('Pod', 'demo-0'), 'the Pod is created');
    const pod = kube.stored<V1Pod & KubeObject>('Pod', 'demo-0')!;
    kube.put({ ...pod, status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }] } });
    etcd.listedVia = [];
    await reconcileMember(ctx, ref('demo-0'));
    assert.deepEqual(etcd.listedVia, [], 'etcd not asked while its Pod is not ready');
    markReady('demo-0');
    await reconcileMember(ctx, ref('demo-0'));
    assert.deepEqual(etcd.listedVia, [[url('demo-0', 2379)]]);
    assert.equal(kube.stored<EtcdMember>('EtcdMember', 'demo-0')?.status?.memberID, idOf('demo-0'));
  });

  it('with ready voters, a member whose Pod is not ready is looked up through them alone', async () => {
    kube.put(member('demo-2'));
    etcd.members[2] = inEtcd('demo-2', true);
    await reconcileMember(ctx, ref('demo-2'));
    etcd.listedVia = [];
    await reconcileMember(ctx, ref('demo-2'));
    assert.deepEqual(etcd.listedVia, [[url('demo-0', 2379), url('demo-1', 2379)]]);
    markReady('demo-2');
    etcd.listedVia = [];
    await reconcileMember(ctx, ref('demo-2'));
    assert.deepEqual(etcd.listedVia, [[url('demo-0', 2379), url('demo-1', 2379), url('demo-2', 2379)]]);
  });

  it('after a promotion, relabels the Pod voter; then a settled voter does not even ask etcd', async () => {
    kube.put(member('demo-2'));
    etcd.members[2] = inEtcd('demo-2', true);
    await reconcileMember(ctx, ref('demo-2'));
    markReady('demo-2');
    await reconcileMember(ctx, ref('demo-2'));
    etcd.members[2] = inEtcd('demo-2', false);
    kube.writes = [];
    await reconcileMember(ctx, ref('demo-2'));
    assert.deepEqual(kube.writes, ['status EtcdMember demo-2', 'patch Pod demo-2']);
    assert.equal(kube.stored<V1Pod>('Pod', 'demo-2')?.metadata?.labels?.['etcdfn.io/role'], 'voter');
    etcd.calls = [];
    kube.writes = [];
    await reconcileMember(ctx, ref('demo-2'));
    assert.deepEqual(kube.writes, []);
    assert.deepEqual(etcd.calls, []);
  });

  it('a status write that loses a race is planned again on a fresh read, then acts', async () => {
    kube.put(member('demo-2'));
    kube.conflictingStatusWrites = 1;
    const outcome = await reconcileMember(ctx, ref('demo-2'));
    assert.equal(outcome.result, 'done', JSON.stringify(outcome));
    assert.deepEqual(kube.writes.slice(0, 3), [
      'status EtcdMember demo-2',
      'status EtcdMember demo-2',
      'create PersistentVolumeClaim data-demo-2',
    ]);
    assert.ok(kube.stored('Pod', 'demo-2'), 'the Pod is created in the same invocation');
  });

  it('a status write that keeps losing answers 409 and acts on nothing', async () => {
    kube.put(member('demo-2'));
    kube.conflictingStatusWrites = 99;
    const outcome = await reconcileMember(ctx, ref('demo-2'));
    assert.equal(outcome.result, 'retry');
    assert.equal((outcome as { status?: number }).status, 409);
    assert.ok(kube.writes.length > 1, 'planned again on fresh reads');
    assert.ok(
      kube.writes.every(w => w === 'status EtcdMember demo-2'),
      kube.writes.join(),
    );
    assert.equal(kube.stored('PersistentVolumeClaim', 'data-demo-2'), undefined);
  });

  it('a dormant member has its Pod deleted and keeps its PVC', async () => {
    kube.put(member('demo-2'));
    await reconcileMember(ctx, ref('demo-2'));
    const dormant = kube.stored<EtcdMember & KubeObject>('EtcdMember', 'demo-2')!;
    kube.put({ ...dormant, spec: { ...dormant.spec, dormant: true } });
    kube.writes = [];
    const outcome = await reconcileMember(ctx, ref('demo-2'));
    assert.equal(outcome.result, 'done');
    assert.deepEqual(kube.writes, ['status EtcdMember demo-2', 'delete Pod demo-2']);
    assert.ok(kube.stored('PersistentVolumeClaim', 'data-demo-2'));
    assert.equal(kube.stored<EtcdMember>('EtcdMember', 'demo-2')?.status?.conditions?.[0]?.reason, 'Paused');
  });

  it('a member that does not exist is done', async () => {
    const outcome = await reconcileMember(ctx, ref('demo-9'));
    assert.deepEqual(outcome, { result: 'done', summary: 'EtcdMember prod/demo-9 not found' });
  });

  it('the handler answers events that are not for it with done, without reading anything', async () => {
    const handler = createHandler(() => ctx);
    const tick: OperatorEvent = {
      id: '1',
      source: 's',
      type: 'dev.knative.sources.ping',
      kind: 'tick',
      data: {},
    };
    const outcome = await handler(tick);
    assert.equal(outcome.result, 'done');
    kube.put(member('demo-2', { initialCluster: '' }));
    const podEvent: OperatorEvent = {
      id: '2',
      source: 's',
      type: 'dev.knative.apiserver.ref.delete',
      kind: 'object',
      mode: 'Reference',
      verb: 'delete',
      ref: { apiVersion: 'v1', kind: 'Pod', namespace: 'prod', name: 'demo-2' },
    };
    assert.equal((await handler(podEvent)).result, 'done');
    assert.equal(
      kube.stored<EtcdMember>('EtcdMember', 'demo-2')?.status?.conditions?.[0]?.reason,
      'WaitingToJoin',
    );
  });
});

describe('finalizeMember over fakes', () => {
  function deleting(name: string): void {
    kube.put({ ...member(name), metadata: { ...member(name).metadata, deletionTimestamp: NOW } });
  }
  const events = () =>
    [...kube.objects.values()]
      .filter(o => o.kind === 'Event')
      .map(o => (o as unknown as { reason: string }).reason);

  beforeEach(() => {
    kube.put(member('demo-0'));
    kube.put(member('demo-1'));
  });

  it('scale-down of the leader: move leadership, remove from etcd, drop the finalizer — one invocation', async () => {
    etcd.leader = idOf('demo-2');
    deleting('demo-2');
    const outcome = await finalizeMember(ctx, ref('demo-2'));
    assert.equal(outcome.result, 'done', JSON.stringify(outcome));
    assert.deepEqual(etcd.calls, [
      'list',
      `move-leader ${idOf('demo-0')}`,
      'list',
      `remove ${idOf('demo-2')}`,
      'list',
    ]);
    assert.deepEqual(
      etcd.members.map(m => m.name),
      ['demo-0', 'demo-1'],
    );
    assert.equal(kube.stored('EtcdMember', 'demo-2'), undefined, 'the finalizer is gone, so is the member');
    assert.deepEqual(events().sort(), ['LeaderMoved', 'MemberRemoved']);
  });

  it('waits inside the request while etcd calls the cluster unhealthy (a voter connected < 5 s)', async () => {
    deleting('demo-2');
    etcd.unhealthyRemovals = 2;
    const outcome = await finalizeMember(ctx, ref('demo-2'));
    assert.equal(outcome.result, 'done', JSON.stringify(outcome));
    assert.deepEqual(
      etcd.members.map(m => m.name),
      ['demo-0', 'demo-1'],
    );
    assert.equal(kube.stored('EtcdMember', 'demo-2'), undefined);
  });

  it('never drops the finalizer while the cluster lives and no peer answers', async () => {
    deleting('demo-2');
    etcd.up.clear();
    const outcome = await finalizeMember(ctx, ref('demo-2'));
    assert.equal(outcome.result, 'retry');
    assert.equal((outcome as { status?: number }).status, 503);
    assert.match(
      (outcome as { reason: string }).reason,
      /asked http:\/\/demo-0\.demo\.prod\.svc:2379, http:\/\/demo-1/,
    );
    assert.ok(kube.stored('EtcdMember', 'demo-2'), 'the member stays');
  });

  it('a member of a cluster being deleted goes without asking etcd', async () => {
    const c = kube.stored<EtcdCluster & KubeObject>('EtcdCluster', 'demo')!;
    kube.put({ ...c, metadata: { ...c.metadata, deletionTimestamp: NOW } });
    deleting('demo-2');
    const outcome = await finalizeMember(ctx, ref('demo-2'));
    assert.equal(outcome.result, 'done');
    assert.deepEqual(etcd.calls, []);
    assert.equal(kube.stored('EtcdMember', 'demo-2'), undefined);
  });

  it('a repeat after the removal (member-not-found) converges: just the finalizer', async () => {
    etcd.members = etcd.members.filter(m => m.name !== 'demo-2');
    deleting('demo-2');
    const outcome = await finalizeMember(ctx, ref('demo-2'));
    assert.equal(outcome.result, 'done');
    assert.deepEqual(events(), [], 'no MemberRemoved for a removal that happened before');
  });

  it('a member that is not being deleted costs one read and nothing else', async () => {
    const outcome = await finalizeMember(ctx, ref('demo-1'));
    assert.deepEqual(outcome, { result: 'done', summary: 'demo-1 is not being deleted' });
    assert.deepEqual(kube.writes, []);
    assert.deepEqual(etcd.calls, []);
  });
});
