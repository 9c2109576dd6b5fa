// Crash tests for space maintenance, on the sandbox with real etcd 3.5.16 and chaos on: the
// NOSPACE recovery (killed just after compacting, and just after defragmenting a member) and the
// defragmentation policy (killed just after claiming a member, and just after defragmenting it).
// reconcile-cluster is SIGKILLed at the point and started again; only normal events follow. Each
// time the cluster must end writable with every key kept, no alarm, no claim left in status, and
// (for the policy) each member defragmented exactly once.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { Etcd3 } from 'etcd3';
import { API_VERSION } from '../../shared/api/group.ts';
import type { CrashPoint } from '../../shared/runtime/crash.ts';
import { CrashPoints } from '../support/crash-points.ts';
import { converged, mark, type ClusterRef } from '../support/converge.ts';
import { NS, STEP_TIMEOUT, healingSandbox, type Cluster } from '../support/healing-sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NAME = 'crashspace';
const QUOTA = 16 * 1024 * 1024;
const BIG = 'x'.repeat(128 * 1024);
const CHURN = 'y'.repeat(64 * 1024);
const MIB = 1024 * 1024;
const FN = 'reconcile-cluster';

interface EventLike {
  reason?: string;
  message?: string;
  /** How many times the same Event was said (etcdfn counts repeats on one Event). */
  count?: number;
  involvedObject?: { name?: string; kind?: string };
  metadata: { name?: string; resourceVersion?: string };
}

describe('a crash in space maintenance converges (etcd 3.5.16, chaos on)', { timeout: 3_000_000 }, () => {
  const crashPoints = CrashPoints.inTempDir('etcdfn-crash-space-', () => world.running().restarts());
  const world = healingSandbox(47, { crashDir: crashPoints.dir, tickSeconds: 5 });
  const { start, stop, kube, running, pods, describeWorld } = world;
  before(start);
  after(async () => {
    await stop();
    crashPoints.remove();
  });
  const ref = (): ClusterRef => ({ kube: kube(), namespace: NS, name: NAME });
  const hosts = async () =>
    (await pods(NAME)).flatMap(p => (p.status?.podIP ? [`http://${p.status.podIP}:2379`] : []));
  async function withClient<T>(fn: (c: Etcd3) => Promise<T>): Promise<T> {
    const client = new Etcd3({ hosts: await hosts(), dialTimeout: 2000 });
    try {
      return await fn(client);
    } finally {
      client.close();
    }
  }
  const defragEvents = async (): Promise<EventLike[]> =>
    (await kube().list<EventLike & Cluster>('v1', 'Event', NS))
      .filter(e => e.involvedObject?.name === NAME && e.reason === 'MemberDefragmented')
      .sort((a, b) => Number(a.metadata.resourceVersion) - Number(b.metadata.resourceVersion));
  /** Each member's unused bytes (dbSize - dbSizeInUse), asked of the member itself. */
  async function unused(): Promise<Map<string, number>> {
    const out = new Map<string, number>();
    for (const pod of await pods(NAME)) {
      const client = new Etcd3({ hosts: `http://${pod.status?.podIP}:2379`, dialTimeout: 2000 });
      try {
        const s = await client.maintenance.status();
        out.set(pod.metadata.name ?? '', Number(s.dbSize) - Number(s.dbSizeInUse));
      } catch {
        // not answering now
      } finally {
        client.close();
      }
    }
    return out;
  }
  async function armAndAwait(point: CrashPoint, restarts: number, fault: () => Promise<void>): Promise<void> {
    await crashPoints.crashThrough(point, fault, {
      fn: FN,
      restartsBefore: restarts,
      timeoutMs: STEP_TIMEOUT,
      describe: describeWorld(NAME),
    });
  }
  async function healthy(since: Awaited<ReturnType<typeof mark>>): Promise<Cluster> {
    const done = await converged(ref(), {
      replicas: 3,
      since,
      timeoutMs: STEP_TIMEOUT,
      describe: describeWorld(NAME),
      also: async c =>
        c.status?.operation ? `an operation is left: ${JSON.stringify(c.status.operation)}` : undefined,
    });
    const alarms = await withClient(c =>
      c.maintenance.alarm({ action: 'Get', memberID: '0', alarm: 'None' }),
    );
    assert.deepEqual(alarms.alarms, [], 'no alarm left');
    await withClient(c => c.put('writable').value(String(Date.now())).exec());
    assert.equal(await withClient(c => c.getAll().prefix('keep/').count()), 100, 'every kept key');
    return done;
  }

  it('a 3-member cluster with a 16 MiB quota and keys', async () => {
    await world.create(NAME, 3, { options: { quotaBackendBytes: QUOTA } });
    await world.converged(NAME, 3);
    await world.writeKeys(NAME, 'keep/', 100);
  });

  for (const point of ['cluster:space-compacted', 'cluster:member-defragmented'] as CrashPoint[]) {
    it(`NOSPACE recovery: crash after ${point}`, async () => {
      const restarts = running().restarts()[FN] ?? 0;
      const since = await mark(ref());
      await armAndAwait(point, restarts, async () => {
        let refused: unknown;
        await withClient(async c => {
          for (let i = 0; i < 2000 && refused === undefined; i++) {
            await c
              .put('fill')
              .value(`${i}:${BIG}`)
              .exec()
              .catch((err: unknown) => {
                refused = err;
              });
          }
        });
        assert.match(String(refused), /database space exceeded/, 'etcd refused a write for space');
      });
      await waitFor(
        'a write accepted again',
        async () =>
          withClient(c => c.put('after').value('yes').exec()).then(
            () => true,
            () => false,
          ),
        { timeoutMs: STEP_TIMEOUT, intervalMs: 1000 },
        describeWorld(NAME),
      );
      await healthy(since);
    });
  }

  for (const point of ['cluster:defrag-claimed', 'cluster:defrag-member-done'] as CrashPoint[]) {
    it(`defragmentation policy: crash after ${point}`, async t => {
      const restarts = running().restarts()[FN] ?? 0;
      // By name and count: the same Event said again is counted on one Event (count grows).
      const seen = new Map((await defragEvents()).map(e => [e.metadata.name, e.count ?? 1]));
      const since = await mark(ref());
      const policy = (defrag: unknown) =>
        kube().mergePatch<Cluster>(
          { apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: NAME },
          { spec: { maintenance: defrag === null ? null : { defrag } } },
        );
      // No policy while the churn runs, so no member is defragmented halfway through it.
      assert.equal((await policy(null)).kind, 'written');
      await armAndAwait(point, restarts, async () => {
        await withClient(async c => {
          for (let round = 0; round < 3; round++) {
            await Promise.all(
              Array.from({ length: 40 }, (_, i) => c.put(`churn/${i}`).value(`${round}${CHURN}`).exec()),
            );
            await c.delete().prefix('churn/').exec();
          }
          const revision = Number((await c.put('mark').value('1').exec()).header.revision);
          await c.kv.compact({ revision: String(revision), physical: true });
          // A follower counts the pages a compaction freed as in use until later writes commit.
          for (let i = 0; i < 30; i++) {
            await c.put('after-compaction').value(String(i)).exec();
            await sleep(100);
          }
        });
        const patched = await policy({ threshold: { unusedFraction: '0.3', minUnusedBytes: '1Mi' } });
        assert.equal(patched.kind, 'written');
      });
      await waitFor(
        'every member below the threshold, no claim left',
        async () => {
          const u = await unused();
          const c = await world.cluster(NAME);
          return u.size === 3 && [...u.values()].every(b => b <= MIB) && !c.status?.operation;
        },
        { timeoutMs: STEP_TIMEOUT, intervalMs: 1000 },
        async () => `${JSON.stringify([...(await unused())])}\n${await describeWorld(NAME)()}`,
      );
      await healthy(since);
      const fresh = (await defragEvents()).flatMap(e =>
        Array.from({ length: (e.count ?? 1) - (seen.get(e.metadata.name) ?? 0) }, () => e),
      );
      const names = fresh.map(e => /^defragmented (\S+):/.exec(e.message ?? '')?.[1] ?? '');
      t.diagnostic(fresh.map(e => e.message).join(' | '));
      assert.equal(new Set(names).size, 3, `each member defragmented: ${names.join(', ')}`);
      assert.equal(names.length, 3, `each member once: ${names.join(', ')}`);
    });
  }
});
