// The empty-data guard of etcdFlags against real etcd (3.4 and 3.5): a member that has run starts
// with only itself in --initial-cluster and state `existing`. With its data, etcd ignores both and
// rejoins; with its data directory wiped, etcd refuses to start (it must never join under its old
// member ID with no data), and the words it exits with are the ones reconcile-member recognises.
import assert from 'node:assert/strict';
import { rmSync } from 'node:fs';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { startFailure } from '../../shared/plan/member/failure.ts';
import { ETCD_MINORS } from '../support/etcd-binaries.ts';
import {
  EtcdTestCluster,
  initialClusterFlag,
  waitForLeader,
  type EtcdProcess,
} from '../support/etcd-process.ts';

const member: EtcdMember = {
  apiVersion: 'etcdfn.io/v1alpha1',
  kind: 'EtcdMember',
  metadata: { name: 'm3', namespace: 'prod' },
  spec: {
    clusterName: 'demo',
    version: '3.5.16',
    storage: { size: '1Gi' },
    initialCluster: 'x',
    clusterToken: 't',
  },
  status: { memberID: '1', hasData: true },
};

/** The member's Pod as a kubelet reports it after etcd exited with `logs` (FallbackToLogsOnError). */
function exitedPod(guardFlags: string[], logs: string, exitCode: number): V1Pod {
  return {
    metadata: { name: 'm3' },
    spec: { containers: [{ name: 'etcd', command: ['etcd', ...guardFlags] }] },
    status: {
      containerStatuses: [
        {
          name: 'etcd',
          image: 'etcd',
          imageID: '',
          ready: false,
          restartCount: 1,
          state: { waiting: { reason: 'CrashLoopBackOff' } },
          lastState: { terminated: { exitCode, message: logs.slice(-2048) } },
        },
      ],
    },
  };
}

for (const minor of ETCD_MINORS) {
  describe(`empty-data guard against etcd ${minor}`, () => {
    let cluster: EtcdTestCluster;
    let client: Etcd3;

    before(async () => {
      cluster = await EtcdTestCluster.start({ minor, size: 3 });
      client = new Etcd3({ hosts: cluster.endpoints.slice(0, 2) });
      await client.put('before-the-fault').value('kept');
    });

    after(async () => {
      client?.close();
      await cluster?.cleanup();
    });

    const guard = (p: EtcdProcess): { state: 'existing'; initialCluster: string; dataDir: string } => ({
      state: 'existing',
      initialCluster: `${p.name}=${p.peerURL}`,
      dataDir: p.dataDir,
    });

    it('with its data, a guarded member rejoins and serves what was written', async () => {
      const m3 = cluster.process('m3');
      await m3.stop();
      const again = await cluster.startMember(m3.slot, guard(m3));
      await waitForLeader(cluster.running());
      const own = new Etcd3({ hosts: [again.clientURL] });
      try {
        assert.equal(await own.get('before-the-fault').string(), 'kept');
      } finally {
        own.close();
      }
    });

    it('with its data directory wiped, a guarded member refuses to start, in words reconcile-member reads as DataDirEmpty', async () => {
      const m3 = cluster.process('m3');
      await m3.stop();
      rmSync(m3.dataDir, { recursive: true, force: true });
      const wiped = await cluster.startMember(m3.slot, { ...guard(m3), wait: false });
      const exit = await wiped.exited;
      assert.notEqual(exit.code, 0, 'etcd must not run on an empty data directory under its member ID');
      const flags = [`--initial-cluster=m3=${m3.peerURL}`, '--initial-cluster-state=existing'];
      const seen = startFailure(member, exitedPod(flags, wiped.logs(), exit.code ?? 1));
      assert.equal(seen?.kind, 'data', wiped.logs().slice(-500));
      assert.equal(seen?.kind === 'data' && seen.reason, 'DataDirEmpty');
      // The survivors still hold the data.
      assert.equal(await client.get('before-the-fault').string(), 'kept');
    });

    // A static bootstrap's initial member starts `new` until it is seen running (etcdFlags): if it
    // ran unseen and comes back on an empty directory, etcd itself refuses, with no record of ours.
    it('an initial member that ran, started new with the whole list on a wiped directory, refuses in words read as DataDirEmpty', async () => {
      const m3 = cluster.process('m3');
      if (m3.running) await m3.stop();
      rmSync(m3.dataDir, { recursive: true, force: true });
      const initialCluster = initialClusterFlag(['m1', 'm2', 'm3'].map(n => cluster.process(n)));
      const wiped = await cluster.startMember(m3.slot, {
        state: 'new',
        initialCluster,
        dataDir: m3.dataDir,
        wait: false,
      });
      const exit = await wiped.exited;
      assert.notEqual(exit.code, 0, 'etcd must not run on an empty data directory under its member ID');
      const flags = [`--initial-cluster=${initialCluster}`, '--initial-cluster-state=new'];
      const unseen: EtcdMember = { ...member, status: { memberID: '1' } };
      const seen = startFailure(unseen, exitedPod(flags, wiped.logs(), exit.code ?? 1));
      assert.equal(seen?.kind === 'data' && seen.reason, 'DataDirEmpty', wiped.logs().slice(-500));
      assert.match(seen?.message ?? '', /has already been bootstrapped/);
      assert.equal(await client.get('before-the-fault').string(), 'kept');
    });
  });
}
