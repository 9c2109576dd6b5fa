// reconcile-cluster end to end (shared/reconcile/cluster.ts) over plain fakes: an in-memory API
// server (test/support/store-kube.ts) and a scripted etcd, with the real planner in between. What a
// user sees: the objects written and in what order (a claiming step writes status.operation before it
// acts, and acts only if that write won), the status and its Progressing message when a step must be
// retried, the Events, the wake-up PingSources, the summary the event is answered with, how many
// steps one event takes, and that a healthy cluster in sync costs no write at all. The same flows on a
// real API server and etcd: test/integration/reconcile-*.test.ts.
import assert from 'node:assert/strict';
import { before, describe, it } from 'node:test';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { EtcdMember as Membership } from '../../shared/etcd/members.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { reconcileCluster } from '../../shared/reconcile/cluster.ts';
import type { Context } from '../../shared/runtime/context.ts';
import { membership } from '../support/cluster-world.ts';
import { etcdCluster } from '../support/etcd-objects.ts';
import { StoreKube, storeContext, withCrashArmed } from '../support/store-kube.ts';

type Cluster = EtcdCluster & KubeObject;
const REF = { namespace: 'prod', name: 'demo' };
const client = (n: number) => `http://demo-${n}.demo.prod.svc:2379`;

/** etcd as the members would answer; `members` may be changed by a test. */
function fakeEtcd(
  members: Membership[],
  o: Partial<Record<keyof EtcdAdapter, (...a: never[]) => unknown>> = {},
) {
  const calls: string[] = [];
  const status = {
    leaderId: members[0]?.id,
    errors: [],
    dbSize: 100,
    dbSizeInUse: 50,
    raftIndex: 5,
    raftAppliedIndex: 5,
  };
  const answer =
    (name: keyof EtcdAdapter, dflt: (...a: never[]) => unknown) =>
    (...args: unknown[]) => {
      calls.push(`${name} ${args.map(a => (Array.isArray(a) ? a.join(',') : String(a))).join(' ')}`);
      return Promise.resolve((o[name] ?? dflt)(...(args as never[])));
    };
  const etcd = {
    listMembers: answer('listMembers', () => ({
      kind: 'ok',
      members,
      clusterId: 'c0ffee',
      endpoint: client(0),
    })),
    memberStatus: answer('memberStatus', () => ({ kind: 'ok', status })),
    clusterStatus: answer('clusterStatus', (e: string[]) => e.map(() => ({ kind: 'ok', status }))),
    addLearner: answer('addLearner', (_e: never, peer: string) => {
      const added = {
        id: '0000000000001003',
        name: '',
        peerURLs: [peer],
        clientURLs: [],
        isLearner: true,
        started: false,
      };
      return { kind: 'ok', member: added, members: [...members, added] };
    }),
    promote: answer('promote', () => ({ kind: 'ok', member: undefined, members })),
    remove: answer('remove', () => ({ kind: 'ok', members })),
  } as unknown as EtcdAdapter;
  return { etcd, calls };
}

const three = () => [membership(0), membership(1), membership(2)];
const ctxOf = (kube: StoreKube, etcd: EtcdAdapter, settings: Partial<Context['settings']> = {}) =>
  storeContext(kube, etcd, { chainSteps: 6, ...settings });
const clusterIn = (kube: StoreKube) => kube.stored<Cluster>('EtcdCluster', 'prod', 'demo');
const writes = (kube: StoreKube) => kube.lines.filter(l => !/^(get|list) /.test(l));
const eventsOf = (kube: StoreKube) =>
  kube.calls
    .filter(c => c.verb === 'create' && c.kind === 'Event')
    .map(c => {
      const e = c.body as { type: string; reason: string; message: string };
      return `${e.type} ${e.reason}: ${e.message}`;
    });
const progressing = (kube: StoreKube) =>
  clusterIn(kube)?.status?.conditions?.find(c => c.type === 'Progressing')?.message;

const newCluster = (spec: Record<string, unknown> = {}) =>
  etcdCluster({
    metadata: { resourceVersion: '1', generation: 1 },
    spec: { storage: { size: '1Gi' }, ...spec },
  }) as KubeObject;

/** A formed, healthy 3-member cluster: bootstrapped by reconcile-cluster itself, Pods ready, members voters. */
let formedObjects: KubeObject[] = [];
before(async () => {
  const kube = new StoreKube([newCluster()]);
  const { etcd } = fakeEtcd(three());
  await reconcileCluster(ctxOf(kube, etcd), REF);
  three().forEach((m, n) => {
    kube.put({
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: `demo-${n}`, namespace: 'prod' },
      status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'True' }] },
    } as KubeObject);
    const member = kube.stored<EtcdMember>('EtcdMember', 'prod', `demo-${n}`);
    if (member) member.status = { isVoter: true, role: 'voter', memberID: m.id } as never;
  });
  await reconcileCluster(ctxOf(kube, etcd), REF);
  formedObjects = [...kube.objects.values()].filter(o => o.kind !== 'Event');
});

function formed(change: (objects: KubeObject[]) => void = () => {}) {
  const objects = structuredClone(formedObjects);
  change(objects);
  return new StoreKube(objects);
}
/** The formed cluster asked for 4 members, its new target already locked (a NewTarget step taken). */
async function scaled(change: (objects: KubeObject[]) => void = () => {}) {
  const kube = formed(o => {
    specOf(o).replicas = 4;
    change(o);
  });
  await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd, { chainSteps: 1 }), REF);
  kube.calls = [];
  return kube;
}
const specOf = (objects: KubeObject[]) =>
  (objects.find(o => o.kind === 'EtcdCluster') as unknown as Cluster).spec as unknown as Record<
    string,
    unknown
  >;

describe('reconcile-cluster: the steps one event takes', () => {
  it('a cluster that is gone is answered as done, with nothing written', async () => {
    const kube = new StoreKube();
    const { etcd, calls } = fakeEtcd(three());
    const result = await reconcileCluster(ctxOf(kube, etcd), REF);
    assert.deepEqual(result, { result: 'done', summary: 'EtcdCluster prod/demo is gone' });
    assert.deepEqual(kube.lines, ['get EtcdCluster demo']);
    assert.deepEqual(calls, []);
  });

  it('a new cluster: target locked, Services, NetworkPolicy, the claimed static bootstrap, then a wait that ends the chain', async () => {
    const kube = new StoreKube([newCluster()]);
    const { etcd } = fakeEtcd(three());
    const result = await reconcileCluster(ctxOf(kube, etcd), REF);
    assert.deepEqual(result, {
      result: 'done',
      summary:
        'nothing to do; then Services in place; then NetworkPolicy created; then created the initial members demo-0, demo-1, demo-2; then waiting for initial member demo-0 to start',
      details: { action: ['none', 'ensure-services', 'ensure-network-policy', 'claim', 'wait'] },
    });
    const w = writes(kube);
    // The claim (status.operation) is written before any member is created, and cleared after.
    const claim = kube.calls.findIndex(
      c => c.verb === 'replaceStatus' && (c.body as Cluster).status?.operation,
    );
    const firstMember = kube.calls.findIndex(c => c.verb === 'create' && c.kind === 'EtcdMember');
    assert.ok(claim >= 0 && claim < firstMember, w.join('\n'));
    assert.equal((kube.calls[claim]?.body as Cluster).status?.operation?.member, 'demo-0');
    assert.deepEqual(
      w.filter(l => l.startsWith('create EtcdMember')),
      ['create EtcdMember demo-0', 'create EtcdMember demo-1', 'create EtcdMember demo-2'],
    );
    assert.equal(clusterIn(kube)?.status?.operation, undefined);
    assert.deepEqual(eventsOf(kube), [
      'Normal SeedCreated: created the initial members demo-0, demo-1, demo-2 together (static bootstrap)',
    ]);
    const event = kube.calls.find(c => c.kind === 'Event')?.body as { reportingInstance?: string };
    assert.equal(event.reportingInstance, 'reconcile-cluster');
  });

  it('woken: only the first step of a chain looks for its wake-up', async () => {
    const kube = new StoreKube([newCluster()]);
    const result = await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd), REF, { woken: true });
    assert.deepEqual(result.result === 'done' && result.details, {
      action: ['none', 'ensure-services', 'ensure-network-policy', 'claim', 'wait'],
    });
    assert.equal(kube.lines.filter(l => l === 'get PingSource demo-etcdfn-cluster-wake').length, 1);
  });

  it('one step per event when chainSteps is 1: its summary and its action alone', async () => {
    const kube = new StoreKube([newCluster()]);
    const { etcd } = fakeEtcd(three());
    const result = await reconcileCluster(ctxOf(kube, etcd, { chainSteps: 1 }), REF);
    assert.deepEqual(result, { result: 'done', summary: 'nothing to do', details: { action: 'none' } });
    assert.deepEqual(writes(kube), ['replaceStatus EtcdCluster demo']);
    assert.equal(clusterIn(kube)?.status?.clusterToken, 'prod-demo-uid-1');
    const two = await reconcileCluster(ctxOf(kube, etcd, { chainSteps: 2 }), REF);
    assert.deepEqual(two.result === 'done' && two.details, {
      action: ['ensure-services', 'ensure-network-policy'],
    });
  });

  it('a healthy cluster in sync: nothing to do, and not one write', async () => {
    const kube = formed();
    const { etcd, calls } = fakeEtcd(three());
    const result = await reconcileCluster(ctxOf(kube, etcd), REF);
    assert.deepEqual(result, { result: 'done', summary: 'nothing to do', details: { action: 'none' } });
    assert.deepEqual(writes(kube), []);
    assert.equal(calls[0], `listMembers ${client(0)},${client(1)},${client(2)}`);
    assert.equal(clusterIn(kube)?.status?.phase, 'Running');
    assert.equal(
      kube.lines.some(l => l.includes('PingSource') || l.includes('Broker')),
      false,
      'no wake-up read',
    );
  });

  it('a status write that loses to another writer ends the event; nothing else is written', async () => {
    const kube = new StoreKube([newCluster()]);
    kube.script('replaceStatus', { kind: 'conflict', message: 'modified' });
    const result = await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd), REF);
    assert.deepEqual(result, {
      result: 'done',
      summary: 'EtcdCluster prod/demo changed underneath (conflict); the next event continues',
    });
    assert.deepEqual(writes(kube), ['replaceStatus EtcdCluster demo']);
    const invalid = new StoreKube([newCluster()]);
    invalid.script('replaceStatus', { kind: 'invalid', message: 'x' });
    const r = await reconcileCluster(ctxOf(invalid, fakeEtcd(three()).etcd, { chainSteps: 1 }), REF);
    assert.deepEqual(r, { result: 'done', summary: 'nothing to do', details: { action: 'none' } });
  });
});

describe('reconcile-cluster: claimed steps', () => {
  it('scaling to 4: the claim is written first, then the learner is added; MemberAdded is recorded', async () => {
    const kube = await scaled();
    const { etcd, calls } = fakeEtcd(three());
    const result = await reconcileCluster(ctxOf(kube, etcd, { chainSteps: 1 }), REF);
    assert.deepEqual(result, {
      result: 'done',
      summary: 'added learner demo-3',
      details: { action: 'claim' },
    });
    assert.deepEqual(writes(kube).slice(0, 3), [
      'replaceStatus EtcdCluster demo',
      'create EtcdMember demo-3',
      'mergePatch EtcdMember demo-3',
    ]);
    assert.equal(
      (kube.calls.find(c => c.verb === 'replaceStatus')?.body as Cluster).status?.operation?.member,
      'demo-3',
    );
    assert.ok(calls.some(c => c.startsWith('addLearner')));
    assert.deepEqual(eventsOf(kube), ['Normal MemberAdded: added demo-3 to etcd as a learner']);
    assert.equal(clusterIn(kube)?.status?.operation, undefined);
  });

  it('a claim that loses the status write is not carried out: no member, no etcd change', async () => {
    const kube = await scaled();
    kube.script('replaceStatus', { kind: 'conflict', message: 'modified' });
    const { etcd, calls } = fakeEtcd(three());
    const result = await reconcileCluster(ctxOf(kube, etcd), REF);
    assert.deepEqual(result, {
      result: 'done',
      summary: 'EtcdCluster prod/demo changed underneath (conflict); the next event continues',
    });
    assert.deepEqual(writes(kube), ['replaceStatus EtcdCluster demo']);
    assert.equal(
      calls.some(c => c.startsWith('addLearner')),
      false,
    );
    assert.deepEqual(eventsOf(kube), []);
    const notFound = await scaled();
    notFound.script('replaceStatus', { kind: 'not-found' });
    const r = await reconcileCluster(ctxOf(notFound, fakeEtcd(three()).etcd), REF);
    assert.equal(
      r.result === 'done' && r.summary,
      'EtcdCluster prod/demo changed underneath (not-found); the next event continues',
    );
  });

  it('a claimed step that fails is a retry; the claim stays in status for the next event', async () => {
    const kube = await scaled();
    const { etcd } = fakeEtcd(three(), {
      addLearner: () => ({ kind: 'too-many-learners', message: 'too many learners' }),
    });
    const result = await reconcileCluster(ctxOf(kube, etcd), REF);
    assert.deepEqual(result, {
      result: 'retry',
      reason: 'adding demo-3 as a learner: too many learners',
      status: 503,
    });
    assert.equal(clusterIn(kube)?.status?.operation?.member, 'demo-3');
    assert.deepEqual(eventsOf(kube), []);
    assert.equal(writes(kube).filter(l => l.startsWith('replaceStatus')).length, 1, 'only the claim');
  });

  it('a learner in etcd is promoted under a claim, and MemberPromoted recorded', async () => {
    const learner = { ...membership(2), isLearner: true };
    const kube = formed(o => {
      const m = o.find(x => x.kind === 'EtcdMember' && x.metadata.name === 'demo-2') as unknown as EtcdMember;
      m.status = { ...m.status, isVoter: false, role: 'learner' } as never;
    });
    const { etcd, calls } = fakeEtcd([membership(0), membership(1), learner]);
    const result = await reconcileCluster(ctxOf(kube, etcd, { chainSteps: 1 }), REF);
    assert.deepEqual(result, {
      result: 'done',
      summary: 'promoted demo-2 to voter',
      details: { action: 'promote' },
    });
    assert.ok(
      calls.some(c => c === `promote ${client(0)},${client(1)},${client(2)} ${learner.id}`),
      calls.join('\n'),
    );
    assert.equal(writes(kube)[0], 'replaceStatus EtcdCluster demo');
    assert.deepEqual(eventsOf(kube), ['Normal MemberPromoted: promoted demo-2 to voter']);
  });

  it('crash point cluster:claimed fires after the claim is written, before the step acts', async () => {
    const kube = await scaled();
    const r = await withCrashArmed(
      'cluster:claimed',
      () => reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd), REF),
      () => writes(kube),
    );
    assert.deepEqual(r, { killed: true, at: ['replaceStatus EtcdCluster demo'] });
    // The next event resumes the claimed operation: no second claim, the learner added, the claim cleared.
    kube.calls = [];
    await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd, { chainSteps: 1 }), REF);
    assert.deepEqual(writes(kube).slice(0, 2), ['create EtcdMember demo-3', 'mergePatch EtcdMember demo-3']);
    assert.equal(clusterIn(kube)?.status?.operation, undefined);
  });

  it('a resumed addition says what it did: the learner added, MemberAdded recorded, the claim stays cleared', async () => {
    const kube = await scaled();
    await withCrashArmed(
      'cluster:claimed',
      () => reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd), REF),
      () => writes(kube),
    );
    kube.calls = [];
    const result = await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd, { chainSteps: 1 }), REF);
    assert.deepEqual(result, {
      result: 'done',
      summary: 'added learner demo-3',
      details: { action: 'resume' },
    });
    assert.deepEqual(eventsOf(kube), ['Normal MemberAdded: added demo-3 to etcd as a learner']);
    assert.equal(clusterIn(kube)?.status?.operation, undefined);
    assert.equal(
      writes(kube).filter(l => l.startsWith('replaceStatus')).length,
      1,
      'only the clear: the status planned before it is not written over it',
    );
  });
});

describe('reconcile-cluster: unclaimed steps and their status', () => {
  const orphan: Membership = {
    id: '00000000000000ff',
    name: 'old',
    peerURLs: ['http://10.0.0.9:2380'],
    clientURLs: [],
    isLearner: false,
    started: true,
  };

  it('an etcd member no EtcdMember stands for is removed, with an OrphanRemoved Warning', async () => {
    const kube = formed();
    const { etcd, calls } = fakeEtcd([...three(), orphan]);
    const result = await reconcileCluster(ctxOf(kube, etcd, { chainSteps: 1 }), REF);
    assert.equal(result.result, 'done');
    assert.ok(
      calls.includes(`remove ${client(0)},${client(1)},${client(2)} 00000000000000ff`),
      calls.join('\n'),
    );
    assert.deepEqual(
      eventsOf(kube).filter(e => e.includes('Orphan')),
      [
        'Warning OrphanRemoved: removed etcd member 00000000000000ff (http://10.0.0.9:2380): no EtcdMember stood for it',
      ],
    );
  });

  it('a removal etcd refuses is a retry and records no OrphanRemoved', async () => {
    const kube = formed();
    const { etcd } = fakeEtcd([...three(), orphan], {
      remove: () => ({ kind: 'unhealthy-cluster', message: 'unhealthy cluster' }),
    });
    const result = await reconcileCluster(ctxOf(kube, etcd), REF);
    const reason = 'removing orphan etcd member 00000000000000ff: unhealthy cluster';
    assert.deepEqual(result, { result: 'retry', reason, status: 503 });
    assert.deepEqual(
      eventsOf(kube).filter(e => e.includes('OrphanRemoved')),
      [],
    );
  });

  it('an unclaimed step that fails is a retry and says so in Progressing (written after the step)', async () => {
    const unmarked = (o: KubeObject[]) => {
      const m = o.find(x => x.kind === 'EtcdMember' && x.metadata.name === 'demo-2') as unknown as EtcdMember;
      m.status = { ...m.status, isVoter: false, role: 'learner' } as never;
    };
    const kube = formed(unmarked);
    kube.script('mergePatchStatus', { kind: 'conflict', message: 'modified' });
    const result = await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd), REF);
    const reason = 'recording demo-2 as a voter: conflict';
    assert.deepEqual(result, { result: 'retry', reason, status: 503 });
    assert.match(progressing(kube) ?? '', new RegExp(`; retrying: ${reason}$`));
    assert.deepEqual(writes(kube), ['mergePatchStatus EtcdMember demo-2', 'replaceStatus EtcdCluster demo']);
    const done = formed(unmarked);
    const ok = await reconcileCluster(ctxOf(done, fakeEtcd(three()).etcd, { chainSteps: 1 }), REF);
    assert.deepEqual(ok, {
      result: 'done',
      summary: 'recorded demo-2 as a voter',
      details: { action: 'mark-voter' },
    });
    assert.doesNotMatch(progressing(done) ?? '', /retrying/);
    const chained = formed(unmarked);
    const two = await reconcileCluster(ctxOf(chained, fakeEtcd(three()).etcd, { chainSteps: 2 }), REF);
    assert.deepEqual(
      two.result === 'done' && two.details,
      { action: ['mark-voter', 'none'] },
      'a step that changed something is followed at once',
    );
  });

  it('crash point cluster:status-written follows an ordinary status write; cluster-id-latched the first clusterID', async () => {
    const kube = new StoreKube([newCluster()]);
    const r = await withCrashArmed(
      'cluster:status-written',
      () => reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd), REF),
      () => writes(kube),
    );
    assert.deepEqual(r, { killed: true, at: ['replaceStatus EtcdCluster demo'] });

    const latch = formed(o => {
      const c = o.find(x => x.kind === 'EtcdCluster') as unknown as Cluster;
      delete c.status?.clusterID;
    });
    const l = await withCrashArmed(
      'cluster:cluster-id-latched',
      () => reconcileCluster(ctxOf(latch, fakeEtcd(three()).etcd), REF),
      () => clusterIn(latch)?.status?.clusterID,
    );
    assert.deepEqual(l, { killed: true, at: 'c0ffee' });
    const quiet = formed();
    const q = await withCrashArmed(
      'cluster:status-written',
      () => reconcileCluster(ctxOf(quiet, fakeEtcd(three()).etcd), REF),
      () => 0,
    );
    assert.equal(q.killed, false, 'no write, no crash point');
  });
});

describe('reconcile-cluster: recovery steps and their crash points', () => {
  const restoreWorld = () =>
    formed(o => {
      specOf(o).inPlaceRestore = { requestID: 'r1', snapshotRef: { name: 'snap' } };
      o.push(
        {
          apiVersion: 'etcdfn.io/v1alpha1',
          kind: 'EtcdSnapshot',
          metadata: { name: 'snap', namespace: 'prod' },
          spec: { clusterRef: { name: 'demo' }, destination: { pvc: { claimName: 'pc' } } },
          status: {
            phase: 'Complete',
            artifact: { uri: 'pvc://pc/s.db', revision: 3 },
            conditions: [{ type: 'Verified', status: 'True' }],
          },
        } as KubeObject,
        {
          apiVersion: 'v1',
          kind: 'PersistentVolumeClaim',
          metadata: { name: 'pc', namespace: 'prod' },
        },
      );
    });
  const forceWorld = () =>
    formed(o => {
      specOf(o).recovery = { policy: 'ForceNewCluster' };
      for (const n of [1, 2])
        o.splice(
          o.findIndex(x => x.kind === 'Pod' && x.metadata.name === `demo-${n}`),
          1,
        );
    });
  const down = () =>
    fakeEtcd(three(), { listMembers: () => ({ kind: 'unavailable', message: 'no leader' }) }).etcd;
  const stepOf = (kube: StoreKube) => {
    const status = clusterIn(kube)?.status;
    return status?.inPlaceRestore?.step ?? status?.forceNewCluster?.step;
  };

  it('an in-place restore accepted: its step written first, with cluster:restore-step-written after that write', async () => {
    const kube = restoreWorld();
    const r = await withCrashArmed(
      'cluster:restore-step-written',
      () => reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd, { chainSteps: 1 }), REF),
      () => stepOf(kube),
    );
    assert.deepEqual(r, { killed: true, at: 'Stopping' });
    const plain = restoreWorld();
    const p = await withCrashArmed(
      'cluster:status-written',
      () => reconcileCluster(ctxOf(plain, fakeEtcd(three()).etcd, { chainSteps: 1 }), REF),
      () => 0,
    );
    assert.equal(p.killed, false, 'a restore step is not an ordinary status write');
    assert.equal(stepOf(plain), 'Stopping');
  });

  it('quorum lost under ForceNewCluster: the recovery’s step written, with cluster:force-step-written after it', async () => {
    const kube = forceWorld();
    const r = await withCrashArmed(
      'cluster:force-step-written',
      () => reconcileCluster(ctxOf(kube, down(), { chainSteps: 1 }), REF),
      () => stepOf(kube),
    );
    assert.deepEqual(r, { killed: true, at: 'Waiting' });
    const plain = forceWorld();
    const p = await withCrashArmed(
      'cluster:status-written',
      () => reconcileCluster(ctxOf(plain, down(), { chainSteps: 1 }), REF),
      () => 0,
    );
    assert.equal(p.killed, false);
    assert.equal(stepOf(plain), 'Waiting');
  });
});

describe('reconcile-cluster: auth after the step', () => {
  const withAuth = (o: KubeObject[]) => {
    specOf(o).auth = { enabled: true, rootCredentialsSecretRef: { name: 'demo-root' } };
  };

  it('an auth step that fails makes the event a retry, said in Progressing', async () => {
    const kube = formed(withAuth);
    kube.script('create', { kind: 'invalid', message: 'Secret demo-root is invalid' });
    const result = await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd), REF);
    const reason = 'auth: create-secret: Secret demo-root is invalid';
    assert.deepEqual(result, { result: 'retry', reason, status: 503 });
    assert.match(progressing(kube) ?? '', new RegExp(`; retrying: ${reason}$`));
    assert.equal(clusterIn(kube)?.status?.authEnabled, false);
  });

  it('auth stuck on the user: its Warning is recorded and the summary says why', async () => {
    const kube = formed(withAuth);
    kube.put({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'Opaque',
      metadata: { name: 'demo-root', namespace: 'prod' },
    } as KubeObject);
    const result = await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd, { chainSteps: 1 }), REF);
    const message = 'Secret demo-root is of type Opaque, not kubernetes.io/basic-auth; fix the Secret';
    assert.deepEqual(result, {
      result: 'done',
      summary: `auth: in sync (${message})`,
      details: { action: 'none' },
    });
    assert.deepEqual(eventsOf(kube), [`Warning RootSecretInvalid: ${message}`]);
    assert.equal(clusterIn(kube)?.status?.authEnabled, false);
  });

  it('auth is not run while the step has something to do', async () => {
    const kube = await scaled(withAuth);
    await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd, { chainSteps: 1 }), REF);
    assert.equal(
      kube.lines.some(l => l.includes('demo-root')),
      false,
    );
  });
});

describe('reconcile-cluster: wake-ups', () => {
  it('a defragmentation schedule gets its PingSource, to the Broker’s address', async () => {
    const kube = formed(o => (specOf(o).maintenance = { defrag: { schedule: '0 3 * * *' } }));
    const result = await reconcileCluster(
      ctxOf(kube, fakeEtcd(three()).etcd, { operatorNamespace: 'etcdfn-system' }),
      REF,
    );
    assert.equal(result.result, 'done');
    assert.match(
      result.result === 'done' ? result.summary : '',
      /PingSource demo-defrag\S* created: looked at again on "0 3 \* \* \*"/,
    );
    const broker = kube.calls.find(c => c.kind === 'Broker');
    assert.deepEqual([broker?.namespace, broker?.name], ['etcdfn-system', 'etcdfn']);
    const ping = kube.calls.find(c => c.verb === 'create' && c.kind === 'PingSource')?.body as {
      spec: { sink: unknown };
    };
    assert.ok(JSON.stringify(ping.spec.sink).includes('etcdfn-system/etcdfn'));
  });

  it('the defragmentation PingSource comes with the very step that sees the schedule; maintenance without defrag has none', async () => {
    const kube = formed(o => (specOf(o).maintenance = { defrag: { schedule: '0 3 * * *' } }));
    const result = await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd, { chainSteps: 1 }), REF);
    assert.match(
      result.result === 'done' ? result.summary : '',
      /PingSource demo-defrag-etcdfn-cluster-wake created/,
    );
    const none = formed(o => (specOf(o).maintenance = {}));
    const quiet = await reconcileCluster(ctxOf(none, fakeEtcd(three()).etcd, { chainSteps: 1 }), REF);
    assert.equal(quiet.result, 'done');
    assert.equal(
      none.lines.some(l => l.includes('PingSource')),
      false,
    );
  });

  it('a wake-up left when nothing waits is deleted on its own event (woken); not read otherwise', async () => {
    const ping = {
      apiVersion: 'sources.knative.dev/v1',
      kind: 'PingSource',
      metadata: {
        name: 'demo-etcdfn-cluster-wake',
        namespace: 'prod',
        ownerReferences: [
          {
            apiVersion: 'etcdfn.io/v1alpha1',
            kind: 'EtcdCluster',
            name: 'demo',
            uid: 'uid-1',
            controller: true,
          },
        ],
      },
      spec: {},
    } as KubeObject;
    const kube = formed(o => o.push(ping));
    const quiet = await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd), REF);
    assert.deepEqual(quiet, { result: 'done', summary: 'nothing to do', details: { action: 'none' } });
    assert.equal(
      kube.lines.some(l => l.includes('PingSource')),
      false,
    );
    const woken = await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd), REF, { woken: true });
    assert.deepEqual(woken, {
      result: 'done',
      summary: 'nothing to do; PingSource demo-etcdfn-cluster-wake deleted (no longer waiting)',
      details: { action: 'none' },
    });
    assert.equal(kube.stored('PingSource', 'prod', 'demo-etcdfn-cluster-wake'), undefined);
  });
  it('a restore waiting on the user gets a wake-up PingSource; with a sink set, no Broker is read', async () => {
    const s3 = {
      bucket: 'b',
      key: 'k',
      endpoint: 'https://s3.example',
      credentialsSecretRef: { name: 'creds' },
    };
    const kube = new StoreKube([newCluster({ bootstrap: { restore: { source: { s3 } } } })]);
    const sink = { uri: 'http://sink.example/x' };
    const result = await reconcileCluster(
      ctxOf(kube, fakeEtcd(three()).etcd, { chainSteps: 1, scheduleSink: sink }),
      REF,
    );
    assert.equal(result.result, 'done');
    assert.match(
      result.result === 'done' ? result.summary : '',
      /; PingSource demo-etcdfn-cluster-wake created: looked at again on /,
    );
    const ping = kube.stored<KubeObject & { spec: { sink: unknown } }>(
      'PingSource',
      'prod',
      'demo-etcdfn-cluster-wake',
    );
    assert.ok(JSON.stringify(ping?.spec.sink).includes('http://sink.example/x'));
    assert.equal(
      kube.calls.some(c => c.kind === 'Broker'),
      false,
    );
  });

  it('a wake-up is looked for when the status says Restored=False, and deleted once nothing waits', async () => {
    const ping = {
      apiVersion: 'sources.knative.dev/v1',
      kind: 'PingSource',
      metadata: {
        name: 'demo-etcdfn-cluster-wake',
        namespace: 'prod',
        ownerReferences: [
          {
            apiVersion: 'etcdfn.io/v1alpha1',
            kind: 'EtcdCluster',
            name: 'demo',
            uid: 'uid-1',
            controller: true,
          },
        ],
      },
      spec: {},
    } as KubeObject;
    const kube = formed(o => {
      o.push(ping);
      const c = o.find(x => x.kind === 'EtcdCluster') as unknown as Cluster;
      c.status?.conditions?.push({
        type: 'Restored',
        status: 'False',
        reason: 'SourceMissing',
        message: 'x',
        lastTransitionTime: '2026-11-29T11:00:00Z',
      } as never);
    });
    const result = await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd, { chainSteps: 1 }), REF);
    assert.match(
      result.result === 'done' ? result.summary : '',
      /PingSource demo-etcdfn-cluster-wake deleted \(no longer waiting\)/,
    );
    assert.equal(kube.stored('PingSource', 'prod', 'demo-etcdfn-cluster-wake'), undefined);
  });

  it('a defragmentation schedule removed: its PingSource goes too (status still names the schedule)', async () => {
    const ping = {
      apiVersion: 'sources.knative.dev/v1',
      kind: 'PingSource',
      metadata: {
        name: 'demo-defrag-etcdfn-cluster-wake',
        namespace: 'prod',
        ownerReferences: [
          {
            apiVersion: 'etcdfn.io/v1alpha1',
            kind: 'EtcdCluster',
            name: 'demo',
            uid: 'uid-1',
            controller: true,
          },
        ],
      },
      spec: {},
    } as KubeObject;
    const kube = formed(o => {
      o.push(ping);
      const c = o.find(x => x.kind === 'EtcdCluster') as unknown as Cluster;
      (c.status as Record<string, unknown>).defragSchedule = { lastRun: '2026-11-29T03:00:00Z' };
    });
    const result = await reconcileCluster(ctxOf(kube, fakeEtcd(three()).etcd, { chainSteps: 1 }), REF);
    assert.match(
      result.result === 'done' ? result.summary : '',
      /PingSource demo-defrag-etcdfn-cluster-wake deleted/,
    );
    assert.equal(kube.stored('PingSource', 'prod', 'demo-defrag-etcdfn-cluster-wake'), undefined);
  });
});
