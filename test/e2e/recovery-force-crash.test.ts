// Crash test for the ForceNewCluster recovery, on the sandbox with real etcd 3.5.16 and chaos on:
// a 3-member cluster with keys loses two members for good under the policy, and reconcile-cluster
// is killed (SIGKILL, through the crash points of shared/runtime/crash.ts) right after every side
// effect of the recovery, each time it passes one: every step recorded in status.forceNewCluster
// (Waiting, Forcing, Removing, Rejoining, Done), the survivor's flag set and unset, each lost member
// deleted. The points are armed again as soon as they fire, until the recovery is done. It must
// still end with 3/3, the survivor's member ID kept, two new IDs and every key readable.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { CrashPoint } from '../../shared/runtime/crash.ts';
import { CrashPoints } from '../support/crash-points.ts';
import { NS, STEP_TIMEOUT, healingSandbox } from '../support/healing-sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NAME = 'fcrash';
const KEYS = 200;
const POINTS: CrashPoint[] = [
  'cluster:force-step-written',
  'cluster:force-flag-set',
  'cluster:restore-member-deleted',
];

describe(
  'a crash after every side effect of a ForceNewCluster recovery converges (etcd 3.5.16, chaos on)',
  { timeout: 1_200_000 },
  () => {
    const crashPoints = CrashPoints.inTempDir('etcdfn-crash-force-', () => world.running().restarts());
    const world = healingSandbox(43, { crashDir: crashPoints.dir, tickSeconds: 5 });
    const { start, stop, kube, running, cluster, withEtcd, describeWorld, mark, converged } = world;
    before(start);
    after(async () => {
      await stop();
      crashPoints.remove();
    });

    it('3 members, 2 lost for good, reconcile-cluster killed after each step: 3/3, the survivor’s ID kept, all keys', async t => {
      await world.create(NAME, 3, { recovery: { policy: 'ForceNewCluster' } });
      const formed = await converged(NAME, 3);
      await world.writeKeys(NAME, 'k/', KEYS);
      const [survivor, ...lost] = [...formed.ids.keys()].sort();
      const survivorID = formed.ids.get(survivor ?? '') ?? '';
      const restarts = running().restarts()['reconcile-cluster'] ?? 0;
      // Arms each point again once it fired (its file is gone), until the recovery is done.
      const rearming = crashPoints.rearming(
        POINTS.map(p => [p, Infinity] as const),
        100,
      );
      const { fired } = rearming;
      try {
        const since = await mark(NAME);
        for (const victim of lost) {
          await kube().delete(
            { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: victim },
            { gracePeriodSeconds: 0 },
          );
          await kube().delete(
            { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: NS, name: `data-${victim}` },
            { gracePeriodSeconds: 0 },
          );
        }
        await waitFor(
          'the recovery Done',
          async () => (await cluster(NAME)).status?.forceNewCluster?.step === 'Done',
          { timeoutMs: STEP_TIMEOUT * 2, intervalMs: 250 },
          describeWorld(NAME),
        );
        // Done: disarmed, so no crash slows the convergence checked next.
        await rearming.stop();
        const after = await converged(NAME, 3, since, [survivor ?? '']);
        assert.equal(after.ids.size, 3);
        assert.equal(after.ids.get(survivor ?? ''), survivorID, "the survivor's member ID is kept");
        const newcomers = [...after.ids.keys()].filter(n => n !== survivor);
        for (const n of newcomers) {
          assert.ok(!formed.ids.has(n), `${n} is a new member`);
          assert.ok(![...formed.ids.values()].includes(after.ids.get(n) ?? ''), `${n} has a new ID`);
        }
        assert.equal(await withEtcd(NAME, c => c.getAll().prefix('k/').count()), KEYS);
        // Each kind of side effect crashed the function at least once (steps: Waiting, Forcing,
        // Removing, Rejoining and Done each bring a write; the flag goes on and off; two deletions).
        assert.ok((fired.get('cluster:force-step-written') ?? 0) >= 4, JSON.stringify([...fired]));
        assert.ok((fired.get('cluster:force-flag-set') ?? 0) >= 2, JSON.stringify([...fired]));
        assert.ok((fired.get('cluster:restore-member-deleted') ?? 0) >= 1, JSON.stringify([...fired]));
        const crashes = (running().restarts()['reconcile-cluster'] ?? 0) - restarts;
        assert.ok(crashes >= 7, `reconcile-cluster restarted ${crashes} times`);
        t.diagnostic(
          `crashes fired: ${[...fired].map(([p, n]) => `${p} ×${n}`).join(', ')}; reconcile-cluster restarted ${crashes}×; ${survivor} kept ${survivorID}; new ${newcomers.map(n => `${n} ${after.ids.get(n)}`).join(', ')}`,
        );
      } finally {
        await rearming.stop();
      }
    });
  },
);
