// reconcile-member's decision about the member's own Pod (shared/plan/member/pod-plan.ts), row by
// row: the exact step and its reason, the Ready condition and the Events a person reads. Written
// against the mutants StrykerJS left alive (npm run mutation -- shared/plan/member/pod-plan.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1ContainerStatus, V1Pod } from '@kubernetes/client-node';
import type { EtcdMember, EtcdMemberStatus } from '../../shared/api/etcd-member.ts';
import { planMember } from '../../shared/plan/member/plan.ts';
import {
  isBeingDeleted,
  isPodReady,
  isPodTerminal,
  ownershipOf,
  podEtcdVersion,
  podJoinSettings,
  podNotReadyMessage,
} from '../../shared/plan/member/pod.ts';
import { ID, NOW, PEER, cluster, member, pod, ready, running, self } from '../support/member-world.ts';

const voter: EtcdMemberStatus = { memberID: ID, isVoter: true, role: 'voter' };

/** etcd exiting again and again for a reason that is not about its data (a bad option). */
function looping(m: EtcdMember, restarts = 5): V1Pod {
  const finished = new Date(NOW.getTime() - 1000);
  const etcd: V1ContainerStatus = {
    name: 'etcd',
    image: 'quay.io/coreos/etcd:v3.5.16',
    imageID: '',
    ready: false,
    restartCount: restarts,
    state: { waiting: { reason: 'CrashLoopBackOff' } },
    lastState: {
      terminated: {
        exitCode: 1,
        message: '{"level":"fatal","msg":"error parsing CompactionRetention","error":"invalid duration"}',
        startedAt: new Date(finished.getTime() - 2000),
        finishedAt: finished,
      },
    },
  };
  const p = pod(m, {
    role: 'voter',
    status: { phase: 'Running', conditions: [{ type: 'Ready', status: 'False' }], containerStatuses: [etcd] },
  });
  return { ...p, spec: { containers: [{ name: 'etcd', image: etcd.image, command: ['etcd'] }] } };
}

/** The four exits reconcile-member saw before the one looping() shows, 10 s apart. */
const EARLIER: EtcdMemberStatus['restarts'] = {
  podUID: 'pod-uid',
  restartCount: 4,
  exits: [4, 3, 2, 1].map(k => ({
    at: new Date(NOW.getTime() - 1000 - k * 10_000).toISOString(),
    exitCode: 1,
  })),
};

const LOOP_MESSAGE =
  "etcd in Pod demo-1 keeps exiting (5 exits with code 1 within 1 min, 5 restarts): error parsing CompactionRetention: invalid duration; not a data problem, so the member is not replaced while a new one would fail the same way: fix the cause in the EtcdCluster's spec (an option etcd refuses? spec.options, spec.resources), and the member is then replaced by one with the new settings";

const readyOf = (p: ReturnType<typeof planMember>) => {
  const r = ready(p);
  return [r?.status, r?.reason, r?.message];
};

describe('planPod: a member running as it should', () => {
  it('ready, labelled with its role, its ID known: nothing to do, said as such', () => {
    const m = member({}, voter);
    const p = planMember(running(m, { pod: pod(m, { role: 'voter' }) }));
    assert.deepEqual(p.action, { kind: 'none', reason: 'demo-1: nothing to do' });
    assert.deepEqual(readyOf(p), ['True', 'PodReady', 'etcd member is ready']);
    assert.deepEqual(p.events, []);
  });

  it('a Pod whose labels were all removed gets its role label back', () => {
    const m = member({}, voter);
    const bare = pod(m, { role: 'voter' });
    delete bare.metadata?.labels;
    const p = planMember(running(m, { pod: bare }));
    assert.deepEqual(p.action, {
      kind: 'patch-pod-metadata',
      name: 'demo-1',
      labels: { 'etcdfn.io/role': 'voter' },
      reason: 'labelling Pod demo-1 etcdfn.io/role=voter, as etcd counts it',
    });
  });

  it('role not known (etcd not asked yet): a role label the Pod carries is left as it is', () => {
    // buildMemberPod labels a member with a recorded ID a learner; until etcd says, nothing changes.
    const m = member({}, { memberID: ID });
    const p = planMember(running(m, { pod: pod(m, { role: 'learner', ready: false }) }));
    assert.equal(p.status.role, undefined);
    assert.deepEqual(p.action, { kind: 'none', reason: 'demo-1: waiting for its Pod to be ready' });
  });
});

describe('planPod: a crash loop is reported once, and never replaces the member', () => {
  const rows: { name: string; before?: EtcdMemberStatus['conditions']; events: boolean }[] = [
    {
      name: 'first seen while Ready said the Pod was not ready: a Warning',
      before: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'PodNotReady',
          message: 'Pod demo-1 is Running',
          lastTransitionTime: '2026-11-22T09:00:00Z',
        },
      ],
      events: true,
    },
    { name: 'first seen, no condition recorded yet: a Warning', before: [], events: true },
    {
      name: 'already reported (Ready says CrashLooping): no second Warning',
      before: [
        {
          type: 'Ready',
          status: 'False',
          reason: 'CrashLooping',
          message: 'an older loop',
          lastTransitionTime: '2026-11-22T09:00:00Z',
        },
      ],
      events: false,
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const m = member({}, { ...voter, conditions: row.before, restarts: EARLIER });
      const p = planMember(running(m, { pod: looping(m) }));
      assert.deepEqual(p.action, { kind: 'none', reason: 'demo-1: waiting for its Pod to be ready' });
      assert.deepEqual(readyOf(p), ['False', 'CrashLooping', LOOP_MESSAGE]);
      assert.equal(p.status.dataLoss, undefined);
      assert.deepEqual(
        p.events,
        row.events ? [{ type: 'Warning', reason: 'MemberCrashLooping', message: LOOP_MESSAGE }] : [],
      );
    });
  }
});

describe('planPod: an upgrade', () => {
  it('is announced with a Normal UpgradingMember Event', () => {
    const m = member({ version: '3.5.16' }, { ...voter, version: '3.4.23' });
    const old = pod(m, { role: 'voter' });
    const p = planMember(
      running(m, {
        pod: { ...old, spec: { containers: [{ name: 'etcd', image: 'quay.io/coreos/etcd:v3.4.23' }] } },
        self: self({ version: '3.4.23' }),
      }),
    );
    const message = 'upgrading demo-1 from etcd 3.4.23 to 3.5.16: replacing its Pod, keeping its data';
    assert.deepEqual(p.events, [{ type: 'Normal', reason: 'UpgradingMember', message }]);
    assert.deepEqual(readyOf(p), ['False', 'Upgrading', message]);
  });
});

describe('planPod: creating the Pod', () => {
  it('says the Pod is not created yet', () => {
    const m = member({}, voter);
    const p = planMember(running(m));
    assert.equal(p.action.kind, 'create-pod');
    assert.deepEqual(readyOf(p), ['False', 'PodNotReady', 'Pod demo-1 not created yet']);
  });

  it('a cluster with no status yet has not formed: the seed starts a new cluster', () => {
    const m = member({ bootstrap: true, initialCluster: `demo-1=${PEER}` });
    const c = cluster();
    delete c.status;
    const p = planMember(running(m, { cluster: c }));
    if (p.action.kind !== 'create-pod') return assert.fail(p.action.kind);
    assert.equal(p.action.clusterFormed, false);
    assert.equal(podJoinSettings(p.action.pod)?.state, 'new');
  });

  it("a restoring seed's fetch and commit steps run the operator's image, under the S3 allow-list", () => {
    const m = member({
      bootstrap: true,
      initialCluster: `demo-1=${PEER}`,
      restore: {
        source: {
          s3: {
            endpoint: 'https://s3.example.com',
            bucket: 'backups',
            key: 'demo/snap.db',
            credentialsSecretRef: { name: 's3-creds' },
          },
        },
      },
    });
    const p = planMember(
      running(m, {
        cluster: cluster({}),
        operatorImage: 'registry.local/etcdfn:9.9.9',
        s3AllowedEndpoints: 's3.example.com',
        s3DeniedRanges: '10.96.0.0/12,10.244.0.0/16',
      }),
    );
    if (p.action.kind !== 'create-pod') return assert.fail(p.action.kind);
    const init = p.action.pod.spec?.initContainers ?? [];
    assert.deepEqual(
      init.map(c => [c.name, c.image]),
      [
        ['restore-fetch', 'registry.local/etcdfn:9.9.9'],
        ['restore', 'quay.io/coreos/etcd:v3.5.16'],
        ['restore-commit', 'registry.local/etcdfn:9.9.9'],
      ],
    );
    assert.deepEqual(
      init[0]?.env?.find(e => e.name === 'ETCDFN_S3_ALLOWED_ENDPOINTS'),
      { name: 'ETCDFN_S3_ALLOWED_ENDPOINTS', value: 's3.example.com' },
    );
    // Issue 29 (security 1): the cluster's denied ranges reach the fetch step too.
    assert.deepEqual(
      init[0]?.env?.find(e => e.name === 'ETCDFN_S3_DENIED_RANGES'),
      { name: 'ETCDFN_S3_DENIED_RANGES', value: '10.96.0.0/12,10.244.0.0/16' },
    );
  });
});

describe('podNotReadyMessage: why a Pod is not ready, in the words of its status', () => {
  const m = member();
  const c = (o: Partial<V1ContainerStatus>): V1ContainerStatus => ({
    name: 'etcd',
    image: 'quay.io/coreos/etcd:v3.5.16',
    imageID: '',
    ready: false,
    restartCount: 0,
    ...o,
  });
  const rows: { name: string; status?: V1Pod['status']; deleting?: boolean; message: string }[] = [
    { name: 'no status yet', status: {}, message: 'Pod demo-1 is Pending' },
    { name: 'being deleted', deleting: true, message: 'Pod demo-1 is being deleted' },
    {
      name: 'a Pod-level reason alone',
      status: { phase: 'Failed', reason: 'Evicted' },
      message: 'Pod demo-1 is Failed; Evicted',
    },
    {
      name: 'not scheduled, the scheduler giving no words',
      status: { phase: 'Pending', conditions: [{ type: 'PodScheduled', status: 'False' }] },
      message: 'Pod demo-1 is Pending; not scheduled: Unschedulable',
    },
    {
      name: 'scheduled: nothing said about it',
      status: {
        phase: 'Pending',
        conditions: [{ type: 'PodScheduled', status: 'True', reason: 'Scheduled', message: 'ok' }],
      },
      message: 'Pod demo-1 is Pending',
    },
    {
      name: "another condition's False is not the scheduler's",
      status: {
        phase: 'Running',
        conditions: [{ type: 'Ready', status: 'False', reason: 'ContainersNotReady' }],
      },
      message: 'Pod demo-1 is Running',
    },
    {
      name: 'the etcd container, whatever its place in the list',
      status: {
        phase: 'Running',
        containerStatuses: [
          c({ name: 'sidecar', ready: true, state: { running: {} } }),
          c({ state: { waiting: { reason: 'ImagePullBackOff' } } }),
        ],
      },
      message: 'Pod demo-1 is Running; container etcd waiting: ImagePullBackOff',
    },
    {
      name: 'no etcd container listed: the first one',
      status: { phase: 'Running', containerStatuses: [c({ name: 'other', state: { waiting: {} } })] },
      message: 'Pod demo-1 is Running; container other waiting: unknown reason',
    },
    {
      name: 'exited, with a reason',
      status: {
        phase: 'Running',
        containerStatuses: [c({ state: { terminated: { exitCode: 137, reason: 'OOMKilled' } } })],
      },
      message: 'Pod demo-1 is Running; container etcd exited: OOMKilled (code 137)',
    },
    {
      name: 'exited, with no reason',
      status: { phase: 'Running', containerStatuses: [c({ state: { terminated: { exitCode: 2 } } })] },
      message: 'Pod demo-1 is Running; container etcd exited: Error (code 2)',
    },
    {
      name: 'running and ready (another container is not): nothing about etcd',
      status: { phase: 'Running', containerStatuses: [c({ ready: true, state: { running: {} } })] },
      message: 'Pod demo-1 is Running',
    },
    {
      name: 'a container status with no state yet',
      status: { phase: 'Pending', containerStatuses: [c({})] },
      message: 'Pod demo-1 is Pending; container etcd running but not ready (etcd /health failing)',
    },
    {
      name: 'restarted once, no last exit known',
      status: {
        phase: 'Running',
        containerStatuses: [c({ ready: true, restartCount: 1, state: { running: {} } })],
      },
      message: 'Pod demo-1 is Running; restarted 1 time',
    },
    {
      name: 'a last exit but no restart: not said',
      status: {
        phase: 'Running',
        containerStatuses: [
          c({
            ready: true,
            state: { running: {} },
            lastState: { terminated: { exitCode: 1, reason: 'Error' } },
          }),
        ],
      },
      message: 'Pod demo-1 is Running',
    },
    {
      name: 'an init container not done (the restore steps)',
      status: {
        phase: 'Pending',
        initContainerStatuses: [
          c({ name: 'restore-fetch', ready: true }),
          c({ name: 'restore', ready: false }),
        ],
      },
      message: 'Pod demo-1 is Pending; init container restore not done',
    },
    {
      name: 'init containers all done',
      status: { phase: 'Pending', initContainerStatuses: [c({ name: 'restore-fetch', ready: true })] },
      message: 'Pod demo-1 is Pending',
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const p = pod(m, { deleting: row.deleting ?? false });
      assert.equal(
        podNotReadyMessage(row.status === undefined ? p : { ...p, status: row.status }),
        row.message,
      );
    });
  }
});

describe('isPodReady, isPodTerminal, isBeingDeleted', () => {
  const m = member();
  it('ready only with the Ready condition True, and not while being deleted', () => {
    const base = pod(m);
    assert.equal(isPodReady(base), true);
    assert.equal(isPodReady(pod(m, { deleting: true })), false);
    assert.equal(
      isPodReady({ ...base, status: { conditions: [{ type: 'PodScheduled', status: 'True' }] } }),
      false,
    );
    assert.equal(
      isPodReady({ ...base, status: { conditions: [{ type: 'Ready', status: 'False' }] } }),
      false,
    );
    assert.equal(isPodReady({ ...base, status: {} }), false);
    assert.equal(isPodReady({ metadata: base.metadata }), false);
    const scheduledAndReady = [
      { type: 'PodScheduled', status: 'True' },
      { type: 'Ready', status: 'True' },
    ];
    assert.equal(isPodReady({ ...base, status: { conditions: scheduledAndReady } }), true);
  });

  it('a null deletionTimestamp (as some clients send it) is not a deletion', () => {
    const p = pod(m);
    assert.equal(
      isBeingDeleted({ metadata: { ...p.metadata, deletionTimestamp: null as unknown as Date } }),
      false,
    );
    assert.equal(isBeingDeleted({}), false);
    assert.equal(isBeingDeleted(pod(m, { deleting: true })), true);
  });

  it('terminal only in Succeeded or Failed', () => {
    for (const phase of ['Succeeded', 'Failed']) assert.equal(isPodTerminal(pod(m, { phase })), true, phase);
    for (const phase of ['Pending', 'Running', 'Unknown'])
      assert.equal(isPodTerminal(pod(m, { phase })), false, phase);
    assert.equal(isPodTerminal({ ...pod(m), status: {} }), false);
    assert.equal(isPodTerminal({ metadata: pod(m).metadata }), false);
  });
});

describe('podEtcdVersion: the release an etcd image tag names', () => {
  const rows: [string, string | undefined][] = [
    ['quay.io/coreos/etcd:v3.5.16', '3.5.16'],
    ['registry.k8s.io/etcd:3.5.16-0', '3.5.16'],
    ['registry.local:5000/etcd:v3.4.23', '3.4.23'],
    ['etcd:v3.5.16-rc.1', '3.5.16'],
    ['etcd:v3.5.16@sha256:0123abcd', '3.5.16'],
    ['etcd:v3.10.0', '3.10.0'],
    ['etcd:v10.0.1', '10.0.1'],
    ['etcd:v3.5.16_debug', undefined],
    ['etcd:v3.5.16-', undefined],
    ['etcd:3.5', undefined],
    ['etcd:latest', undefined],
    ['etcd@sha256:abc', undefined],
    ['etcd:xv3.5.16', undefined],
  ];
  for (const [image, version] of rows) {
    it(`${image} → ${version ?? 'no version'}`, () => {
      const p = {
        ...pod(member()),
        spec: {
          containers: [
            { name: 'sidecar', image: 'busybox:1.36.1' },
            { name: 'etcd', image },
          ],
        },
      };
      assert.equal(podEtcdVersion(p), version);
    });
  }
  it('a Pod without an etcd container or spec names no version', () => {
    assert.equal(
      podEtcdVersion({
        ...pod(member()),
        spec: { containers: [{ name: 'sidecar', image: 'etcd:v3.5.16' }] },
      }),
      undefined,
    );
    assert.equal(podEtcdVersion(pod(member())), undefined);
  });
});

describe('ownershipOf: whose object carries the member’s name', () => {
  const m = member();
  it('ours by controller uid, stale with etcdfn’s cluster label, else foreign', () => {
    assert.equal(ownershipOf(pod(m), m), 'ours');
    assert.equal(ownershipOf(pod(m, { owner: 'stale' }), m), 'stale');
    assert.equal(ownershipOf(pod(m, { owner: 'foreign' }), m), 'foreign');
    assert.equal(ownershipOf({}, m), 'foreign');
    assert.equal(ownershipOf({ metadata: { name: 'demo-1' } }, m), 'foreign');
  });
});
