// The empty-data guard of a member's first Pod (shared/plan/member/pod-plan.ts, metadataPatch): a
// Pod is built with etcd's join settings in its annotations (read through the downward API), so once
// the member has run, reconcile-member patches them to the guard's (only itself, `existing`) and an
// in-place restart of etcd on a wiped directory refuses, in words plan/member/failure.ts reads as
// DataDirEmpty, as a guarded Pod's would.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { EtcdMember, EtcdMemberStatus } from '../../shared/api/etcd-member.ts';
import { buildMemberPod } from '../../shared/builders/pod.ts';
import { startFailure } from '../../shared/plan/member/failure.ts';
import { planMember, type MemberState } from '../../shared/plan/member/plan.ts';
import { podJoinSettings } from '../../shared/plan/member/pod.ts';
import { CLUSTER_ID, ID, PEER, inEtcd, member, other, pod, running } from '../support/member-world.ts';

const FULL = `demo-0=http://demo-0.demo.prod.svc:2380,demo-1=${PEER}`;
const GUARD = {
  'etcdfn.io/initial-cluster': `demo-1=${PEER}`,
  'etcdfn.io/initial-cluster-state': 'existing',
};
const REASON =
  'arming the empty-data guard of Pod demo-1: demo-1 has run, so an in-place restart of its etcd on an ' +
  'empty data directory must refuse rather than rejoin under its member ID';

const ranVoter: EtcdMemberStatus = { memberID: ID, isVoter: true, role: 'voter', hasData: true };

/** The member's Pod as buildMemberPod made it for `built` (its status then), running and Ready. */
function builtPod(built: EtcdMember, o: { role?: string; ready?: boolean; deleting?: boolean } = {}): V1Pod {
  const made = buildMemberPod(built, { namespace: 'prod', clusterFormed: true, isVoter: true });
  const seen = pod(built, { role: o.role ?? 'voter', ready: o.ready, deleting: o.deleting });
  const labels = { ...made.metadata?.labels, ...(o.role && { 'etcdfn.io/role': o.role }) };
  return { ...made, metadata: { ...made.metadata, ...seen.metadata, labels }, status: seen.status };
}

/** A first Pod: built before the member had run (full list, no data recorded). */
const firstPod = (o: Parameters<typeof builtPod>[1] = {}): V1Pod =>
  builtPod(member({}, { memberID: ID, isVoter: true, role: 'voter' }), o);

interface Row {
  name: string;
  status: EtcdMemberStatus;
  pod: () => V1Pod;
  extra?: Partial<MemberState>;
  /** The patch expected, or the kind of action when none. */
  want: { labels?: Record<string, string>; annotations?: Record<string, string> } | { kind: string };
}

const rows: Row[] = [
  {
    name: 'a first Pod of a member that has run: its join settings become the guard’s',
    status: ranVoter,
    pod: () => firstPod(),
    want: { annotations: GUARD },
  },
  {
    name: 'the member is seen to have run in this very step (etcd lists it started): armed at once',
    status: { memberID: ID, isVoter: true, role: 'voter' },
    pod: () => firstPod(),
    extra: { etcd: { members: [other, inEtcd()], clusterId: CLUSTER_ID } },
    want: { annotations: GUARD },
  },
  {
    name: 'a learner that has not run yet: its first join still needs the full list',
    status: { memberID: ID, isVoter: false, role: 'learner' },
    pod: () => firstPod({ role: 'learner', ready: false }),
    extra: {
      etcd: {
        members: [other, inEtcd({ isLearner: true, started: false, name: '' })],
        clusterId: CLUSTER_ID,
      },
    },
    want: { kind: 'none' },
  },
  {
    name: 'a Pod already guarded (built after the member ran, or patched before): nothing to do',
    status: ranVoter,
    pod: () => builtPod(member({}, ranVoter)),
    want: { kind: 'none' },
  },
  {
    name: 'a Pod that takes its join settings as flags (built before they moved): nothing a patch could arm',
    status: ranVoter,
    pod: () => pod(member(), { role: 'voter' }),
    want: { kind: 'none' },
  },
  {
    name: 'role label missing too: one patch carries both',
    status: ranVoter,
    pod: () => {
      const p = firstPod();
      delete p.metadata?.labels?.['etcdfn.io/role'];
      return p;
    },
    want: { labels: { 'etcdfn.io/role': 'voter' }, annotations: GUARD },
  },
  {
    name: 'the Pod is being deleted: left alone, its successor is built guarded',
    status: ranVoter,
    pod: () => firstPod({ deleting: true }),
    want: { kind: 'wait' },
  },
];

describe('planPod: arming the empty-data guard of a member’s first Pod', () => {
  for (const row of rows) {
    it(row.name, () => {
      const m = member({ initialCluster: FULL }, row.status);
      const p = planMember(running(m, { pod: row.pod(), ...row.extra }));
      if ('kind' in row.want) {
        assert.equal(p.action.kind, row.want.kind, JSON.stringify(p.action));
        return;
      }
      const reasons = [
        ...(row.want.labels ? ['labelling Pod demo-1 etcdfn.io/role=voter, as etcd counts it'] : []),
        REASON,
      ];
      assert.deepEqual(p.action, {
        kind: 'patch-pod-metadata',
        name: 'demo-1',
        ...row.want,
        reason: reasons.join('; '),
      });
      assert.equal(p.status.hasData, true, 'armed only once the member is known to have run');
    });
  }

  it('a patched first Pod reads as guarded: the same refusal is DataDirEmpty even before hasData is recorded', () => {
    const p = firstPod();
    p.metadata = { ...p.metadata, annotations: { ...p.metadata?.annotations, ...GUARD } };
    assert.deepEqual(podJoinSettings(p), { initialCluster: `demo-1=${PEER}`, state: 'existing' });
    p.status = {
      containerStatuses: [
        {
          name: 'etcd',
          image: 'etcd',
          imageID: '',
          ready: false,
          restartCount: 1,
          lastState: {
            terminated: {
              exitCode: 1,
              message:
                '{"level":"fatal","msg":"discovery failed","error":"cannot fetch cluster info from peer urls: could not retrieve cluster information from the given URLs"}',
            },
          },
        },
      ],
    };
    const unrecorded = member({ initialCluster: FULL }, { memberID: ID });
    const seen = startFailure(unrecorded, p);
    assert.equal(seen?.kind === 'data' && seen.reason, 'DataDirEmpty', JSON.stringify(seen));
    const unarmed = firstPod();
    unarmed.status = p.status;
    assert.equal(
      startFailure(unrecorded, unarmed),
      undefined,
      'a first join refused the same way is no evidence',
    );
  });
});
