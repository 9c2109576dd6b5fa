// Each minor's row of the flag table (shared/builders/etcd-flags.ts), started for real: a 3-member
// cluster of every release a member can run, with the flags the builder gives a member of that
// release (the addresses, names and data directory are the harness's own). etcd must start, elect
// a leader, serve, run the initial corruption check the flags ask for, and warn about no flag.
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { etcdFlags } from '../../shared/builders/etcd-flags.ts';
import { ETCD_MINORS, etcdBinaries, type EtcdMinor } from '../support/etcd-binaries.ts';
import { EtcdTestCluster, initialClusterFlag } from '../support/etcd-process.ts';

/** Flags the harness sets itself (addresses, identity, data directory, logger). */
const HARNESS = [
  '--name',
  '--data-dir',
  '--listen-peer-urls',
  '--listen-client-urls',
  '--advertise-client-urls',
  '--initial-advertise-peer-urls',
  '--initial-cluster',
  '--initial-cluster-token',
  '--initial-cluster-state',
  '--listen-metrics-urls',
  '--logger',
];

function builderFlags(version: string): string[] {
  const member: EtcdMember = {
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdMember',
    metadata: { name: 'demo-0', namespace: 'default' },
    spec: {
      clusterName: 'demo',
      version,
      storage: { size: '1Gi' },
      initialCluster: 'demo-0=http://demo-0.demo.default.svc:2380',
      clusterToken: 't',
      bootstrap: true,
      options: { autoCompactionMode: 'periodic', autoCompactionRetention: '1h' },
    },
  };
  return etcdFlags(member, { namespace: 'default', clusterFormed: false }).filter(
    f => !HARNESS.includes(f.split('=')[0] ?? ''),
  );
}

// 3.4 too: an existing 3.4 cluster still runs until it is upgraded away from it.
for (const minor of ['3.4', ...ETCD_MINORS] as EtcdMinor[]) {
  describe(`etcd ${minor} starts with the builder's flags for it`, { timeout: 120_000 }, () => {
    let cluster: EtcdTestCluster | undefined;
    after(async () => cluster?.cleanup());

    it('forms a cluster, serves, runs the initial corruption check, warns about no flag', async () => {
      const version = etcdBinaries(minor).version;
      const flags = builderFlags(version);
      assert.ok(
        flags.some(f => f.startsWith('--snapshot-count=')),
        flags.join(' '),
      );
      cluster = await EtcdTestCluster.start({ minor, size: 3, extraArgs: flags });
      const client = new Etcd3({ hosts: cluster.endpoints });
      try {
        await client.put('k').value('v').exec();
        assert.equal(await client.get('k').string(), 'v');
        const status = await client.maintenance.status();
        assert.equal(status.version, version);
      } finally {
        client.close();
      }
      for (const member of cluster.running()) {
        const logs = member.logs();
        assert.doesNotMatch(
          logs,
          /deprecated|unknown flag|will be decommissioned/i,
          `${member.name}: ${logs}`,
        );
      }
      // The initial corruption check runs when a member starts again on its data: it compares its
      // hash with the peers' before it serves.
      const m1 = cluster.process('m1');
      await m1.stop();
      const again = await cluster.startMember(m1.slot, {
        state: 'existing',
        initialCluster: initialClusterFlag(
          cluster
            .running()
            .map(p => p.slot)
            .concat(m1.slot),
        ),
        dataDir: m1.dataDir,
      });
      assert.match(again.logs(), /initial corruption check/i, `m1 restarted: ${again.logs()}`);
    });
  });
}
