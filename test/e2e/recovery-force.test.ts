// Quorum loss on the sandbox with real etcd 3.5.16 and chaos on: a 3-member cluster with 300 keys
// loses two members for good (their Pods and PVCs deleted). (a) Under the default policy the
// cluster reports QuorumLost with each member named, and nothing changes over two resync ticks.
// (b) With spec.recovery.policy ForceNewCluster the survivor is restarted alone with
// --force-new-cluster (once: its final Pod has no such flag), the lost members are removed and two
// new members join: 3/3 again, the survivor's member ID kept, two new IDs, all 300 keys readable,
// and status.forceNewCluster says what happened, step by step.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import type { ForceNewClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { NS, STEP_TIMEOUT, healingSandbox } from '../support/healing-sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NAME = 'force';
const KEYS = 300;
const TICK = 'dev.knative.sources.ping';

describe(
  'quorum loss: ReportOnly reports, ForceNewCluster recovers (etcd 3.5.16, chaos on)',
  { timeout: 900_000 },
  () => {
    const world = healingSandbox(41);
    const {
      start,
      stop,
      kube,
      running,
      clusterRef,
      cluster,
      members,
      pods,
      withEtcd,
      describeWorld,
      mark,
      converged,
    } = world;
    before(start);
    after(stop);

    let survivor = '';
    let survivorID = '';
    let survivorPodUID = '';
    let lost: string[] = [];
    let before3 = new Map<string, string>();
    let clusterID = '';

    const deleteNow = (kind: string, name: string) =>
      kube().delete({ apiVersion: 'v1', kind, namespace: NS, name }, { gracePeriodSeconds: 0 });
    const podOf = async (name: string) => (await pods(NAME)).find(p => p.metadata.name === name);
    const etcdCommand = async (name: string): Promise<string[]> => {
      const pod = (await podOf(name)) as unknown as
        { spec?: { containers?: { name: string; command?: string[] }[] } } | undefined;
      return pod?.spec?.containers?.find(c => c.name === 'etcd')?.command ?? [];
    };

    it('a 3-member cluster with 300 keys loses two members for good', async t => {
      await world.create(NAME, 3);
      const formed = await converged(NAME, 3);
      before3 = formed.ids;
      clusterID = formed.cluster.status?.clusterID ?? '';
      await world.writeKeys(NAME, 'k/', KEYS);
      [survivor, ...lost] = [...before3.keys()].sort();
      survivorID = before3.get(survivor) ?? '';
      survivorPodUID = (await podOf(survivor))?.metadata.uid ?? '';
      assert.ok(survivorID && survivorPodUID && lost.length === 2);
      for (const victim of lost) {
        await deleteNow('Pod', victim);
        await deleteNow('PersistentVolumeClaim', `data-${victim}`);
      }
      t.diagnostic(`survivor ${survivor} (${survivorID}); lost ${lost.join(', ')}; cluster ID ${clusterID}`);
    });

    it('(a) ReportOnly: QuorumLost names each member, and two resync ticks later nothing has changed', async () => {
      const reported = await waitFor(
        'QuorumLost naming each member',
        async () => {
          const c = await cluster(NAME);
          const available = c.status?.conditions?.find(x => x.type === 'Available');
          const message = available?.message ?? '';
          const named = lost.every(v =>
            new RegExp(`${v} \\(ID ${before3.get(v)}\\) data lost`).test(message),
          );
          return available?.reason === 'QuorumLost' &&
            named &&
            message.includes(`${survivor} (ID ${survivorID})`)
            ? message
            : false;
        },
        { timeoutMs: STEP_TIMEOUT, intervalMs: 500 },
        describeWorld(NAME),
      );
      assert.match(reported, /etcdfn changes nothing while quorum is lost/);
      assert.match(reported, /set spec\.recovery\.policy: ForceNewCluster/);
      // Two ticks (every 10 s here; chaos may deliver one twice, so 20 s must pass as well).
      const ticks = running().delivered('reconcile-cluster', TICK);
      const since = Date.now();
      await waitFor(
        'two resync ticks answered by reconcile-cluster',
        async () =>
          running().delivered('reconcile-cluster', TICK) >= ticks + 2 && Date.now() - since >= 20_000,
        { timeoutMs: 120_000, intervalMs: 500 },
      );
      const c = await cluster(NAME);
      assert.equal(c.status?.forceNewCluster, undefined, 'no recovery recorded');
      assert.equal(c.status?.conditions?.find(x => x.type === 'Available')?.reason, 'QuorumLost');
      const now = await members(NAME);
      assert.deepEqual(now.map(m => m.metadata.name).sort(), [...before3.keys()].sort(), 'the same members');
      assert.ok(
        now.every(m => !m.metadata.deletionTimestamp),
        'none being deleted',
      );
      const kept = now.find(m => m.metadata.name === survivor);
      assert.equal(kept?.status?.memberID, survivorID);
      assert.equal(kept?.spec.forceNewCluster, undefined);
      assert.equal((await podOf(survivor))?.metadata.uid, survivorPodUID, "the survivor's Pod untouched");
      assert.ok(!(await etcdCommand(survivor)).includes('--force-new-cluster'));
    });

    it('(b) ForceNewCluster: 3/3 again, the survivor keeps its ID, two new IDs, all 300 keys', async t => {
      const began = Date.now();
      const since = await mark(NAME);
      await kube().mergePatch(clusterRef(NAME), { spec: { recovery: { policy: 'ForceNewCluster' } } });
      const steps: string[] = [];
      let forcedCommand: string[] = [];
      const done = await waitFor(
        'the recovery Done',
        async () => {
          const record = (await cluster(NAME)).status?.forceNewCluster;
          if (record && steps.at(-1) !== record.step) steps.push(record.step);
          if (record?.step === 'Forcing' || record?.step === 'Removing') {
            const command = await etcdCommand(survivor);
            if (command.includes('--force-new-cluster')) forcedCommand = command;
          }
          return record?.step === 'Done' ? record : false;
        },
        { timeoutMs: STEP_TIMEOUT, intervalMs: 250 },
        describeWorld(NAME),
      );
      const after = await converged(NAME, 3, since, [survivor]);
      const seconds = Math.round((Date.now() - began) / 1000);

      // The survivor kept its member ID; the two others are new members with new IDs.
      assert.equal(after.ids.size, 3);
      assert.equal(after.ids.get(survivor), survivorID, "the survivor's member ID is kept");
      const newcomers = [...after.ids.keys()].filter(n => n !== survivor);
      assert.equal(newcomers.length, 2);
      for (const n of newcomers) {
        assert.ok(!before3.has(n), `${n} is a new member (names are never reused)`);
        assert.ok(![...before3.values()].includes(after.ids.get(n) ?? ''), `${n} has a new ID`);
      }
      assert.equal(await withEtcd(NAME, c => c.getAll().prefix('k/').count()), KEYS, 'all keys readable');

      // What status recorded, and the flag gone from the survivor's Pod.
      const record: ForceNewClusterStatus = done;
      assert.equal(record.member, survivor);
      assert.equal(record.memberID, survivorID);
      assert.deepEqual(record.lost, lost);
      assert.equal(record.previousClusterID, clusterID);
      assert.match(record.reason ?? '', new RegExp(`highest raft index .*${survivor} \\d+`));
      assert.ok(steps.includes('Forcing') && steps.at(-1) === 'Done', `steps seen: ${steps.join(' → ')}`);
      assert.ok(forcedCommand.includes('--force-new-cluster'), 'the survivor was started with the flag');
      assert.ok(
        !(await etcdCommand(survivor)).includes('--force-new-cluster'),
        'and its Pod no longer has it',
      );
      const recovered = after.cluster.status?.conditions?.find(c => c.type === 'QuorumRecovery');
      assert.equal(recovered?.reason, 'Recovered');
      assert.equal(
        after.cluster.status?.conditions?.find(c => c.type === 'Available')?.reason,
        'QuorumHealthy',
      );
      const reasons = new Set(
        (
          await kube().list<KubeObject & { reason?: string; involvedObject?: { name?: string } }>(
            'v1',
            'Event',
            NS,
          )
        )
          .filter(e => e.involvedObject?.name === NAME)
          .map(e => e.reason),
      );
      for (const r of [
        'QuorumLossDetected',
        'ForcingNewCluster',
        'NewClusterForced',
        'LostMembersRemoved',
        'Recovered',
      ])
        assert.ok(reasons.has(r), `Event ${r}`);
      t.diagnostic(
        `${seconds}s from the policy to 3/3; steps ${steps.join(' → ')}; ${survivor} kept ${survivorID}; new ${newcomers.map(n => `${n} ${after.ids.get(n)}`).join(', ')}; cluster ID ${record.previousClusterID} → ${record.clusterID}`,
      );
    });
  },
);
