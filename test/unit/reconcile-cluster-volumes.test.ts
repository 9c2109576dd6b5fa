// reconcile-cluster's volume and size I/O (shared/reconcile/cluster-volumes.ts) and the pause and
// resume of one member (shared/reconcile/cluster-dormant.ts), over plain fakes: what is patched on
// which EtcdMember, what each step answers, and that a refused patch is a retry naming the member
// and the cause (a member missing is skipped when raising sizes: it is going away).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { growVolumes, observeDbSizes } from '../../shared/reconcile/cluster-volumes.ts';
import { setDormant } from '../../shared/reconcile/cluster-dormant.ts';
import { cluster as clusterOf, locked, member, state as stateOf } from '../support/cluster-world.ts';
import { StoreKube, storeContext, withCrashArmed } from '../support/store-kube.ts';

const MiB = 1024 * 1024;
const client = (n: number) => `http://demo-${n}.demo.prod.svc:2379`;
const retry = (reason: string) => ({ ok: false, outcome: { result: 'retry', reason, status: 503 } });

function world(ready = [0, 1, 2]) {
  const cluster = clusterOf({}, locked(3));
  const members = [member(0), member(1), member(2), member(3, { dormant: true })];
  const state = stateOf(cluster, members, { ready });
  const kube = new StoreKube(members);
  return { state, kube };
}
const memberIn = (kube: StoreKube, name: string) => kube.stored<EtcdMember>('EtcdMember', 'prod', name);

describe('growVolumes', () => {
  const action = { kind: 'grow-volumes' as const, members: ['demo-0', 'demo-2'], size: '4Gi' };

  it('raises spec.storage.size on each member named, in order, and says so', async () => {
    const w = world();
    const result = await growVolumes(storeContext(w.kube, {}), w.state, action);
    assert.deepEqual(result, { ok: true, summary: 'volume size 4Gi set on demo-0, demo-2' });
    assert.deepEqual(
      w.kube.calls.map(c => [c.verb, c.apiVersion, c.kind, c.namespace, c.name, c.body]),
      ['demo-0', 'demo-2'].map(n => [
        'mergePatch',
        'etcdfn.io/v1alpha1',
        'EtcdMember',
        'prod',
        n,
        { spec: { storage: { size: '4Gi' } } },
      ]),
    );
    assert.equal(memberIn(w.kube, 'demo-2')?.spec.storage.size, '4Gi');
    assert.equal(memberIn(w.kube, 'demo-1')?.spec.storage.size, '1Gi');
  });

  it('a conflict or an invalid size stops at that member with a retry; a member gone is skipped', async () => {
    const conflict = world();
    conflict.kube.script('mergePatch', { kind: 'conflict', message: 'modified' });
    assert.deepEqual(
      await growVolumes(storeContext(conflict.kube, {}), conflict.state, action),
      retry("growing demo-0's volume: conflict"),
    );
    assert.equal(conflict.kube.calls.length, 1);

    const invalid = world();
    invalid.kube.script(
      'mergePatch',
      { kind: 'written', object: {} },
      { kind: 'invalid', message: 'spec.storage.size: may not shrink' },
    );
    assert.deepEqual(
      await growVolumes(storeContext(invalid.kube, {}), invalid.state, action),
      retry("growing demo-2's volume: spec.storage.size: may not shrink"),
    );

    const gone = world();
    gone.kube.objects.delete('EtcdMember/prod/demo-0');
    const result = await growVolumes(storeContext(gone.kube, {}), gone.state, action);
    assert.equal(result.ok, true);
    assert.equal(memberIn(gone.kube, 'demo-2')?.spec.storage.size, '4Gi');
  });
});

describe('observeDbSizes', () => {
  it('asks each ready running member for its sizes; one that fails is left out; none ready asks nothing', async () => {
    const calls: string[][] = [];
    const etcd = {
      clusterStatus: (endpoints: string[]) => {
        calls.push(endpoints);
        return Promise.resolve(
          endpoints.map((_, i) =>
            i === 0
              ? { kind: 'unavailable', message: 'x' }
              : { kind: 'ok', status: { dbSize: (i + 1) * MiB, dbSizeInUse: i * MiB } },
          ),
        );
      },
    } as unknown as EtcdAdapter;
    const w = world([0, 2]);
    const sizes = await observeDbSizes(storeContext(w.kube, etcd), w.state);
    assert.deepEqual(calls, [[client(0), client(2)]]);
    assert.deepEqual(sizes, { 'demo-2': { dbSize: 2 * MiB, dbSizeInUse: MiB } });

    const none = world([]);
    assert.equal(await observeDbSizes(storeContext(none.kube, etcd), none.state), undefined);
    assert.equal(calls.length, 1);
  });
});

describe('setDormant', () => {
  const ANNOTATION = 'etcdfn.io/resume-seed';

  it('pauses and resumes a member: spec.dormant, no annotation touched', async () => {
    const w = world();
    const ctx = storeContext(w.kube, {});
    assert.deepEqual(await setDormant(ctx, w.state, 'demo-2', true), {
      ok: true,
      summary: 'paused: member demo-2 is dormant',
    });
    assert.deepEqual(w.kube.calls[0]?.body, { spec: { dormant: true } });
    assert.deepEqual(
      [w.kube.calls[0]?.apiVersion, w.kube.calls[0]?.kind, w.kube.calls[0]?.namespace],
      ['etcdfn.io/v1alpha1', 'EtcdMember', 'prod'],
    );
    assert.deepEqual(await setDormant(ctx, w.state, 'demo-3', false), {
      ok: true,
      summary: 'resuming member demo-3',
    });
    assert.equal(memberIn(w.kube, 'demo-3')?.spec.dormant, false);
  });

  it('resumes a held member as the seed (annotated), and releases it (annotation removed)', async () => {
    const w = world();
    const ctx = storeContext(w.kube, {});
    assert.deepEqual(await setDormant(ctx, w.state, 'demo-3', false, true), {
      ok: true,
      summary: 'resuming member demo-3 as the seed of the resume',
    });
    assert.equal(memberIn(w.kube, 'demo-3')?.metadata.annotations?.[ANNOTATION], 'true');
    assert.deepEqual(await setDormant(ctx, w.state, 'demo-3', false, false), {
      ok: true,
      summary: "released the resume's seed demo-3: its deletion finishes",
    });
    assert.deepEqual(w.kube.calls[1]?.body, {
      spec: { dormant: false },
      metadata: { annotations: { [ANNOTATION]: null } },
    });
    assert.equal(memberIn(w.kube, 'demo-3')?.metadata.annotations?.[ANNOTATION], undefined);
  });

  it('a refused patch is a retry naming the member, the flags and the cause; the crash point follows a write only', async () => {
    const w = world();
    const ctx = storeContext(w.kube, {});
    w.kube.script('mergePatch', { kind: 'conflict', message: 'x' }, { kind: 'not-found' });
    assert.deepEqual(
      await setDormant(ctx, w.state, 'demo-2', true),
      retry('marking demo-2 dormant=true: conflict'),
    );
    assert.deepEqual(
      await setDormant(ctx, w.state, 'demo-3', false, true),
      retry('marking demo-3 dormant=false seed=true: not-found'),
    );
    for (const [answer, fires] of [
      [undefined, true],
      [{ kind: 'conflict', message: 'x' }, false],
    ] as const) {
      const c = world();
      if (answer) c.kube.script('mergePatch', answer);
      const r = await withCrashArmed(
        'cluster:dormant-set',
        () => setDormant(storeContext(c.kube, {}), c.state, 'demo-2', true),
        () => c.kube.calls.length,
      );
      assert.deepEqual(r.killed, fires);
    }
  });
});
