// Which spec.version a running cluster may adopt, against what its members are set to and run:
// etcd's one-minor-at-a-time rule (up and down) and the minimum patch its upgrade guides ask for
// before the next minor (3.5.26 before 3.6, 3.6.11 before 3.7). A refusal leaves the locked target
// alone and says which patch to go to first.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import { findCondition } from '../../shared/conditions.ts';
import { planCluster } from '../../shared/plan/cluster/plan.ts';
import { isMinorDowngrade, versionRefusal } from '../../shared/plan/upgrade/version-moves.ts';
import { cluster, etcdOf, locked, member, membership, state } from '../support/cluster-world.ts';

/**
 * A reached 3-member cluster whose members are set to and run `running` (one may lag: `laggard`),
 * whose raft logs hold nothing of etcd 3.5 (the 3.7 guard of upgrade/wal-guard.ts has its own table).
 */
function world(wanted: string, running: string, laggard?: string) {
  const members = [0, 1, 2].map(i => {
    const m = member(i);
    const version = i === 2 && laggard ? laggard : running;
    m.spec.version = version;
    m.status = { ...m.status, version };
    return m;
  });
  const status: EtcdClusterStatus = locked(3, {
    clusterID: 'c0ffee0000000001',
    legacyRaftEntries: { upToIndex: 0 },
  });
  status.observed = { ...status.observed!, version: running };
  return state(cluster({ version: wanted }, status), members, {
    etcd: etcdOf([0, 1, 2].map(i => membership(i))),
  });
}

const table: {
  running: string;
  laggard?: string;
  wanted: string;
  reason?: string;
  says?: RegExp;
  /** The roll-out to the locked target is not done: it goes on, the new spec waits for it. */
  rolling?: boolean;
}[] = [
  { running: '3.5.35', wanted: '3.6.16' },
  { running: '3.5.26', wanted: '3.6.0' },
  { running: '3.6.11', wanted: '3.7.3' },
  { running: '3.6.16', wanted: '3.7.3' },
  { running: '3.5.16', wanted: '3.5.35' },
  { running: '3.7.3', wanted: '3.6.16' },
  { running: '3.6.16', wanted: '3.5.35' },
  { running: '3.4.23', wanted: '3.5.35' },
  {
    running: '3.5.25',
    wanted: '3.6.16',
    reason: 'UpgradeNeedsNewerPatch',
    says: /^spec\.version 3\.6\.16 needs every member on etcd 3\.5\.26 or later first \(etcd's upgrade guide\) and member demo-0, which runs etcd 3\.5\.25: set spec\.version to 3\.5\.35 \(the newest 3\.5\), let it roll out, then set 3\.6\.16$/,
  },
  {
    running: '3.6.10',
    wanted: '3.7.0',
    reason: 'UpgradeNeedsNewerPatch',
    says: /etcd 3\.6\.11 or later first .* set spec\.version to 3\.6\.16 \(the newest 3\.6\)/,
  },
  // The spec moved to 3.5.35, then to 3.6 before the roll-out reached demo-2 (the CRD saw 3.5.35 → 3.6).
  {
    running: '3.5.35',
    laggard: '3.5.16',
    wanted: '3.6.16',
    reason: 'UpgradeNeedsNewerPatch',
    says: /member demo-2, which runs etcd 3\.5\.16/,
    rolling: true,
  },
  {
    running: '3.5.35',
    wanted: '3.7.3',
    reason: 'VersionSkipsMinor',
    says: /more than one minor release ahead/,
  },
  {
    running: '3.7.3',
    wanted: '3.5.35',
    reason: 'VersionSkipsMinor',
    says: /3\.5\.35 is more than one minor release behind member demo-0, which runs etcd 3\.7\.3; etcd downgrades one minor release at a time/,
  },
];

describe('versionRefusal: the version moves etcd allows, against the members', () => {
  for (const row of table) {
    const name = `${row.running}${row.laggard ? ` (demo-2 on ${row.laggard})` : ''} → ${row.wanted}: ${row.reason ?? 'adopted'}`;
    it(name, () => {
      const s = world(row.wanted, row.running, row.laggard);
      const refusal = versionRefusal(s);
      assert.equal(refusal?.reason, row.reason);
      if (row.says) assert.match(refusal?.message ?? '', row.says);
      const plan = planCluster(s);
      const progressing = findCondition(plan.status.conditions, 'Progressing');
      if (row.rolling) {
        assert.deepEqual(plan.action, {
          kind: 'upgrade-member',
          member: 'demo-2',
          from: row.laggard,
          version: row.running,
        });
      } else if (row.reason) {
        assert.deepEqual(plan.action, { kind: 'none' }, 'nothing is done');
        assert.equal(plan.status.observed?.version, row.running, 'the locked target stays');
        assert.equal(progressing?.reason, row.reason);
        assert.equal(progressing?.message, refusal?.message);
        assert.deepEqual(plan.events, [{ type: 'Warning', reason: row.reason, message: refusal?.message }]);
      } else {
        assert.equal(plan.status.observed?.version, row.wanted, 'the new target is locked');
      }
    });
  }

  it('isMinorDowngrade: one minor back only', () => {
    assert.equal(isMinorDowngrade('3.7.3', '3.6.16'), true);
    assert.equal(isMinorDowngrade('3.6.16', '3.5.35'), true);
    assert.equal(isMinorDowngrade('3.6.16', '3.6.1'), false);
    assert.equal(isMinorDowngrade('3.6.16', '3.7.3'), false);
    assert.equal(isMinorDowngrade(undefined, '3.6.16'), false);
  });
});

describe('an upgrade to a version whose image cannot be pulled (3.6.99, never released)', () => {
  const GOOD = '3.6.16';
  const BAD = '3.6.99';
  /** demo-2 was set to BAD first (the newest follower); its Pod cannot pull it. */
  function stuck(wanted: string, observed: string) {
    const members = [0, 1, 2].map(i => {
      const m = member(i);
      m.spec.version = i === 2 ? BAD : GOOD;
      m.status = { ...m.status, version: GOOD };
      return m;
    });
    const status: EtcdClusterStatus = locked(3, {
      clusterID: 'c0ffee0000000001',
      legacyRaftEntries: { upToIndex: 0 },
    });
    status.observed = { ...status.observed!, version: observed };
    const s = state(cluster({ version: wanted }, status), members, {
      etcd: etcdOf([0, 1, 2].map(i => membership(i))),
      ready: [0, 1],
    });
    const pod = s.pods.find(p => p.name === 'demo-2');
    assert.ok(pod);
    pod.problem = `ErrImagePull: failed to pull and unpack image "quay.io/coreos/etcd:v${BAD}": not found`;
    return s;
  }

  it('stops with a condition naming the version and what to do; nothing is changed', () => {
    const plan = planCluster(stuck(BAD, BAD));
    assert.deepEqual(plan.action, { kind: 'none' });
    const p = findCondition(plan.status.conditions, 'Progressing');
    assert.equal(p?.status, 'False');
    assert.equal(p?.reason, 'VersionNotPulled');
    assert.match(
      p?.message ?? '',
      /member demo-2 cannot pull etcd 3\.6\.99 \(ErrImagePull: .*not found\); check that 3\.6\.99 is a released etcd version/,
    );
    assert.match(
      p?.message ?? '',
      /set spec\.version to a released version \(the other members run 3\.6\.16\)/,
    );
  });

  it('a spec set back to a released version is taken at once, not after the deadline', () => {
    const plan = planCluster(stuck(GOOD, BAD));
    assert.equal(plan.status.observed?.version, GOOD);
    assert.equal(findCondition(plan.status.conditions, 'Progressing')?.reason, 'NewTarget');
  });

  it('then the stuck member is rolled to it first, though it is not ready (it is down already)', () => {
    const plan = planCluster(stuck(GOOD, GOOD));
    assert.deepEqual(plan.action, { kind: 'upgrade-member', member: 'demo-2', from: BAD, version: GOOD });
  });
});
