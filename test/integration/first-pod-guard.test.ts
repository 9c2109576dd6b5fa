// The empty-data guard of a member's FIRST Pod, against real etcd (3.4 and 3.5). A member's Pod gives
// etcd its join settings through ETCD_INITIAL_CLUSTER / ETCD_INITIAL_CLUSTER_STATE, read from the
// Pod's annotations (shared/builders/pod.ts); a kubelet builds the environment again at each
// in-place restart, and reconcile-member sets the annotations to the guard's once the member has run.
// Here, etcd is started with those variables as a kubelet would, before and after the patch:
// - not armed (the settings a first Pod is created with): etcd with a wiped data directory does not
//   refuse to start. It asks its peers, finds its own name and peer URL in the membership and starts
//   under its old member ID with no data (it may then die of a raft log behind the cluster's, or
//   run empty, as a wiped seed on `new` does): the gap this guard closes;
// - armed (only itself, `existing`): with its data it rejoins and serves; wiped, it refuses before
//   it joins, in words plan/member/failure.ts reads as DataDirEmpty, for a joiner and for the seed.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { afterEach, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import {
  INITIAL_CLUSTER_ANNOTATION,
  INITIAL_CLUSTER_ENV,
  INITIAL_CLUSTER_STATE_ANNOTATION,
  INITIAL_CLUSTER_STATE_ENV,
} from '../../shared/builders/etcd-flags.ts';
import { startFailure } from '../../shared/plan/member/failure.ts';
import { ETCD_MINORS } from '../support/etcd-binaries.ts';
import {
  EtcdTestCluster,
  initialClusterFlag,
  sleep,
  waitForLeader,
  type EtcdProcess,
  type EtcdSlot,
} from '../support/etcd-process.ts';

/** A member that has not recorded hasData: only the Pod's own settings can say it ran. */
const member = (name: string): EtcdMember => ({
  apiVersion: 'etcdfn.io/v1alpha1',
  kind: 'EtcdMember',
  metadata: { name, namespace: 'prod' },
  spec: {
    clusterName: 'demo',
    version: '3.5.16',
    storage: { size: '1Gi' },
    initialCluster: 'x',
    clusterToken: 't',
  },
  status: { memberID: '1' },
});

/** The member's Pod as a kubelet reports it after etcd exited with `logs`, its join settings in annotations. */
function exitedPod(
  name: string,
  join: { initialCluster: string; state: string },
  logs: string,
  code: number,
): V1Pod {
  const fromAnnotation = (env: string, annotation: string) => ({
    name: env,
    valueFrom: { fieldRef: { fieldPath: `metadata.annotations['${annotation}']` } },
  });
  return {
    metadata: {
      name,
      annotations: {
        [INITIAL_CLUSTER_ANNOTATION]: join.initialCluster,
        [INITIAL_CLUSTER_STATE_ANNOTATION]: join.state,
      },
    },
    spec: {
      containers: [
        {
          name: 'etcd',
          command: ['etcd'],
          env: [
            fromAnnotation(INITIAL_CLUSTER_ENV, INITIAL_CLUSTER_ANNOTATION),
            fromAnnotation(INITIAL_CLUSTER_STATE_ENV, INITIAL_CLUSTER_STATE_ANNOTATION),
          ],
        },
      ],
    },
    status: {
      containerStatuses: [
        {
          name: 'etcd',
          image: 'etcd',
          imageID: '',
          ready: false,
          restartCount: 1,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode: code, message: logs.slice(-2048) } },
        },
      ],
    },
  };
}

/** etcd refuses a second member while the first is not yet in sync ("unhealthy cluster"): try again. */
async function addMember(client: Etcd3, peerURL: string): Promise<void> {
  for (let attempt = 0; ; attempt++) {
    try {
      await client.cluster.memberAdd({ peerURLs: [peerURL] });
      return;
    } catch (err) {
      if (attempt > 60) throw err;
      await sleep(250);
    }
  }
}

const DATA_DIR_EMPTY = /could not retrieve cluster information from the given URLs|error validating peerURLs/;

for (const minor of ETCD_MINORS) {
  describe(`first Pod's empty-data guard against etcd ${minor} (join settings from the environment)`, () => {
    let cluster: EtcdTestCluster | undefined;
    let slots: EtcdSlot[] = [];

    afterEach(async () => {
      await cluster?.cleanup();
      cluster = undefined;
    });

    /** The etcdfn way: a seed, then members added one by one that join with the full list (from env). */
    async function form(): Promise<EtcdTestCluster> {
      const c = await EtcdTestCluster.start({ minor, size: 1 });
      cluster = c;
      slots = [c.process('m1').slot];
      const client = new Etcd3({ hosts: c.endpoints });
      try {
        for (const name of ['m2', 'm3']) {
          const slot = await c.reserve(name);
          await addMember(client, slot.peerURL);
          slots.push(slot);
          await c.startMember(slot, {
            state: 'existing',
            initialCluster: initialClusterFlag(slots),
            joinFromEnv: true,
          });
        }
        await waitForLeader(c.running());
        for (let n = 0; n < 50; n++) await client.put(`before/${n}`).value('kept');
      } finally {
        client.close();
      }
      return c;
    }

    const guard = (p: EtcdProcess) => ({
      state: 'existing' as const,
      initialCluster: `${p.name}=${p.peerURL}`,
    });

    async function wipeAndRestart(
      c: EtcdTestCluster,
      name: string,
      join: { state: 'new' | 'existing'; initialCluster: string },
    ): Promise<{ proc: EtcdProcess; exit: Awaited<EtcdProcess['exited']> | undefined }> {
      const old = c.process(name);
      await old.stop();
      rmSync(old.dataDir, { recursive: true, force: true });
      const proc = await c.startMember(old.slot, {
        ...join,
        dataDir: old.dataDir,
        wait: false,
        joinFromEnv: true,
      });
      const exit = await Promise.race([proc.exited, sleep(5_000).then(() => undefined)]);
      return { proc, exit };
    }

    it('not armed (a first Pod as created): a wiped joiner is not refused; it starts under its old member ID', async () => {
      const c = await form();
      const { proc, exit } = await wipeAndRestart(c, 'm3', {
        state: 'existing',
        initialCluster: initialClusterFlag(slots),
      });
      const logs = proc.logs();
      assert.doesNotMatch(logs, DATA_DIR_EMPTY, 'etcd did not refuse at start');
      // It joined as the old member: either it still runs, or raft found its log behind the cluster's.
      assert.ok(
        exit === undefined || /tocommit\(\d+\) is out of range/.test(logs),
        `etcd ${minor} exited for another reason: ${logs.slice(-800)}`,
      );
    });

    it('not armed: a wiped seed on its first settings (itself, new) is not refused either', async () => {
      const c = await form();
      const m1 = c.process('m1');
      const { proc } = await wipeAndRestart(c, 'm1', { state: 'new', initialCluster: `m1=${m1.peerURL}` });
      assert.doesNotMatch(proc.logs(), DATA_DIR_EMPTY, 'etcd did not refuse at start');
    });

    it('armed, with its data: the member rejoins and serves what was written', async () => {
      const c = await form();
      const m3 = c.process('m3');
      await m3.stop();
      const again = await c.startMember(m3.slot, { ...guard(m3), dataDir: m3.dataDir, joinFromEnv: true });
      await waitForLeader(c.running());
      const own = new Etcd3({ hosts: [again.clientURL] });
      try {
        assert.equal(await own.get('before/7').string(), 'kept');
      } finally {
        own.close();
      }
    });

    for (const name of ['m3', 'm1']) {
      it(`armed, ${name === 'm1' ? 'the seed' : 'a joiner'} wiped: etcd refuses before it joins, read as DataDirEmpty`, async () => {
        const c = await form();
        const join = guard(c.process(name));
        const { proc, exit } = await wipeAndRestart(c, name, join);
        const done = exit ?? (await Promise.race([proc.exited, sleep(20_000).then(() => undefined)]));
        assert.ok(done, `etcd ${minor} still runs on an empty data directory: ${proc.logs().slice(-800)}`);
        assert.notEqual(done.code, 0);
        const seen = startFailure(member(name), exitedPod(name, join, proc.logs(), done.code ?? 1));
        assert.equal(seen?.kind === 'data' && seen.reason, 'DataDirEmpty', proc.logs().slice(-800));
        // The others still hold the data.
        const others = new Etcd3({ hosts: c.endpoints });
        try {
          assert.equal(await others.get('before/7').string(), 'kept');
        } finally {
          others.close();
        }
      });
    }
  });
}
