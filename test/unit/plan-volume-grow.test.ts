// Growing volumes, decided without I/O: reconcile-member's resize-pvc step and what its status says
// (shared/plan/member/volume-growth.ts), reconcile-cluster's grow-volumes step and progress, and the
// settled database figures in status.members (shared/plan/space/volume-growth.ts).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { EtcdMember, EtcdMemberStatus } from '../../shared/api/etcd-member.ts';
import { findCondition } from '../../shared/conditions.ts';
import {
  freshFigures,
  memberFigures,
  planVolumeGrowth,
  settled,
} from '../../shared/plan/space/volume-growth.ts';
import { planMember } from '../../shared/plan/member/plan.ts';
import { refusalMessage, refusedStatus, volumeStatus } from '../../shared/plan/member/volume-growth.ts';
import * as cw from '../support/cluster-world.ts';
import { NOW, member, pod, pvc, running, self } from '../support/member-world.ts';

const MIN = 60_000;

function claim(
  m: EtcdMember,
  o: {
    requested?: string;
    capacity?: string;
    phase?: string;
    conditions?: string[];
    className?: string;
  } = {},
): V1PersistentVolumeClaim {
  const base = pvc(m);
  return {
    ...base,
    spec: {
      accessModes: ['ReadWriteOnce'],
      resources: { requests: { storage: o.requested ?? '1Gi' } },
      storageClassName: o.className ?? 'standard',
    },
    status: {
      phase: o.phase ?? 'Bound',
      ...(o.phase !== 'Pending' && { capacity: { storage: o.capacity ?? o.requested ?? '1Gi' } }),
      ...(o.conditions && { conditions: o.conditions.map(type => ({ type, status: 'True' })) }),
    },
  };
}

/** A voter with its ID and version known and a ready Pod: its Pod has nothing to do. */
const steady = (size: string, status: EtcdMemberStatus = {}) =>
  member(
    { storage: { size, medium: '' } },
    {
      memberID: '8e9e05c52164694d',
      isVoter: true,
      role: 'voter',
      version: '3.5.16',
      podUID: 'pod-uid',
      podName: 'demo-1',
      ...status,
    },
  );
const refusedAt = (minutesAgo: number, size = '2Gi') => ({
  volume: {
    requested: '1Gi',
    capacity: '1Gi',
    refused: { size, message: 'no', at: new Date(NOW.getTime() - minutesAgo * MIN).toISOString() },
  },
});

describe('reconcile-member: growing its PVC', () => {
  const rows: {
    name: string;
    m: EtcdMember;
    pvc?: (m: EtcdMember) => V1PersistentVolumeClaim;
    noPod?: boolean;
    action: string;
    size?: string;
  }[] = [
    {
      name: 'the PVC asks for less than the member: grow it',
      m: steady('2Gi'),
      action: 'resize-pvc',
      size: '2Gi',
    },
    {
      name: 'the PVC already asks for it',
      m: steady('2Gi'),
      pvc: m => claim(m, { requested: '2Gi', capacity: '1Gi' }),
      action: 'none',
    },
    {
      name: 'bytes and Gi compare as quantities',
      m: steady(String(2 * 1024 ** 3)),
      pvc: m => claim(m, { requested: '2Gi' }),
      action: 'none',
    },
    {
      name: 'a PVC not bound yet is not grown',
      m: steady('2Gi'),
      pvc: m => claim(m, { phase: 'Pending' }),
      action: 'none',
    },
    { name: 'the Pod comes first: no Pod, create it', m: steady('2Gi'), noPod: true, action: 'create-pod' },
    {
      name: 'refused 5 minutes ago for this size: not asked again yet',
      m: steady('2Gi', refusedAt(5)),
      action: 'none',
    },
    {
      name: 'refused 11 minutes ago: asked again',
      m: steady('2Gi', refusedAt(11)),
      action: 'resize-pvc',
      size: '2Gi',
    },
    {
      name: 'refused for 2Gi, now 3Gi: asked at once',
      m: steady('3Gi', refusedAt(1)),
      action: 'resize-pvc',
      size: '3Gi',
    },
    {
      name: 'Memory medium has no PVC to grow',
      m: member({ storage: { size: '2Gi', medium: 'Memory' } }, steady('2Gi').status),
      pvc: () => undefined as never,
      action: 'none',
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const p = planMember(
        running(row.m, {
          pvc: row.pvc ? row.pvc(row.m) : claim(row.m),
          ...(!row.noPod && { pod: pod(row.m, { role: 'voter' }) }),
          self: self(),
        }),
      );
      assert.equal(p.action.kind, row.action, JSON.stringify(p.action));
      if (row.size) {
        assert.deepEqual(p.action, { kind: 'resize-pvc', name: 'data-demo-1', from: '1Gi', size: row.size });
        assert.deepEqual(
          p.events.map(e => `${e.type} ${e.reason}: ${e.message}`),
          [`Normal GrowingVolume: growing PVC data-demo-1 from 1Gi to ${row.size}`],
        );
      }
    });
  }
});

describe('reconcile-member: status.volume and VolumeExpanded', () => {
  const plan = (m: EtcdMember, c: V1PersistentVolumeClaim) =>
    planMember(running(m, { pvc: c, pod: pod(m, { role: 'voter' }), self: self() }));

  it('mirrors the PVC while it grows: requested, capacity, the resize condition', () => {
    const m = steady('2Gi');
    const p = plan(
      m,
      claim(m, { requested: '2Gi', capacity: '1Gi', conditions: ['FileSystemResizePending'] }),
    );
    assert.deepEqual(p.status.volume, {
      requested: '2Gi',
      capacity: '1Gi',
      resizing: 'FileSystemResizePending',
    });
    const c = findCondition(p.status.conditions, 'VolumeExpanded');
    assert.equal(c?.status, 'False');
    assert.equal(c?.reason, 'FileSystemResizePending');
    assert.equal(
      c?.message,
      "growing PVC data-demo-1 from 1Gi to 2Gi: the volume is larger; its file system grows while the member's Pod runs",
    );
    assert.equal(p.statusChanged, true);
  });

  it('Resizing, then asked but not started, each say so', () => {
    const m = steady('2Gi');
    const resizing = plan(m, claim(m, { requested: '2Gi', capacity: '1Gi', conditions: ['Resizing'] }));
    assert.equal(findCondition(resizing.status.conditions, 'VolumeExpanded')?.reason, 'Resizing');
    const asked = plan(m, claim(m, { requested: '2Gi', capacity: '1Gi' }));
    assert.equal(findCondition(asked.status.conditions, 'VolumeExpanded')?.reason, 'Growing');
  });

  it('grown: True Expanded; a member that never grew has no such condition', () => {
    const m = steady('2Gi', {
      conditions: [
        {
          type: 'VolumeExpanded',
          status: 'False',
          reason: 'Resizing',
          message: 'x',
          lastTransitionTime: '2026-11-22T09:00:00Z',
        },
      ],
    });
    const grown = plan(m, claim(m, { requested: '2Gi', capacity: '2Gi' }));
    const c = findCondition(grown.status.conditions, 'VolumeExpanded');
    assert.deepEqual([c?.status, c?.reason, c?.message], ['True', 'Expanded', 'PVC data-demo-1 has 2Gi']);
    const plain = steady('1Gi');
    const never = plan(plain, claim(plain));
    assert.equal(findCondition(never.status.conditions, 'VolumeExpanded'), undefined);
    assert.deepEqual(never.status.volume, { requested: '1Gi', capacity: '1Gi' });
  });

  it('a steady member whose volume is recorded is not rewritten', () => {
    const m = steady('1Gi');
    const first = plan(m, claim(m));
    const again = plan({ ...m, status: first.status }, claim(m));
    assert.equal(again.statusChanged, false);
  });

  it('a refusal is kept while the PVC asks for less than the refused size, dropped once granted', () => {
    const m = steady('2Gi', refusedAt(1));
    assert.equal(volumeStatus(running(m, { pvc: claim(m) }))?.refused?.size, '2Gi');
    assert.equal(
      volumeStatus(running(m, { pvc: claim(m, { requested: '2Gi', capacity: '1Gi' }) }))?.refused,
      undefined,
    );
  });
});

describe('reconcile-member: the API server refused', () => {
  const api =
    'persistentvolumeclaims "data-demo-1" is forbidden: only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize';
  const refusal = {
    claim: 'data-demo-1',
    className: 'fixed',
    from: '1Gi',
    size: '2Gi',
    apiMessage: api,
    now: NOW,
  };

  it('names the class and what to do', () => {
    assert.equal(
      refusalMessage(refusal),
      `the API server refused to grow PVC data-demo-1 from 1Gi to 2Gi: ${api}. StorageClass fixed does not allow volume expansion: if its provisioner can grow volumes, set allowVolumeExpansion: true on it (kubectl patch storageclass fixed -p '{"allowVolumeExpansion":true}') and etcdfn tries again within about 10 minutes (at its next resync); otherwise the member keeps its 1Gi volume and runs on as before; for larger volumes on another StorageClass, restore a snapshot into a new EtcdCluster`,
    );
    assert.match(
      refusalMessage({ ...refusal, className: '' }),
      /has no StorageClass \(a statically provisioned volume\), which cannot grow/,
    );
    assert.equal(
      refusalMessage({ ...refusal, apiMessage: 'something else' }),
      'the API server refused to grow PVC data-demo-1 from 1Gi to 2Gi: something else; etcdfn tries again in 10 minutes',
    );
  });

  it('records size, words and time, the condition, and a Warning Event only the first time', () => {
    const m = steady('2Gi');
    const first = refusedStatus(m, refusal);
    assert.deepEqual(first.status.volume?.refused, {
      size: '2Gi',
      message: refusalMessage(refusal),
      at: '2026-11-22T10:00:00Z',
    });
    const c = findCondition(first.status.conditions, 'VolumeExpanded');
    assert.deepEqual([c?.status, c?.reason], ['False', 'VolumeExpansionRefused']);
    assert.deepEqual(
      first.events.map(e => `${e.type} ${e.reason}`),
      ['Warning VolumeExpansionRefused'],
    );
    const later = new Date(NOW.getTime() + 11 * MIN);
    const again = refusedStatus({ ...m, status: first.status }, { ...refusal, now: later });
    assert.deepEqual(again.events, []);
    assert.equal(again.status.volume?.refused?.at, '2026-11-22T10:11:00Z');
  });
});

describe('reconcile-cluster: grow-volumes and its progress', () => {
  const grown = (size: string) =>
    cw.cluster(
      { storage: { size, medium: '' } },
      cw.locked(3, { clusterID: 'c', observed: { ...cw.observed(3), storage: { size, medium: '' } } }),
    );
  const withSize = (m: EtcdMember, size: string, volume?: EtcdMemberStatus['volume']) => ({
    ...m,
    spec: { ...m.spec, storage: { size } },
    status: { ...m.status, ...(volume && { volume }) },
  });
  const three = () => [cw.member(0), cw.member(1), cw.member(2, { dormant: true })];

  it('members below the target, running or paused, get the size in one step', () => {
    const step = planVolumeGrowth(cw.state(grown('2Gi'), three()));
    assert.deepEqual(step?.action, {
      kind: 'grow-volumes',
      members: ['demo-0', 'demo-1', 'demo-2'],
      size: '2Gi',
    });
    assert.equal(step?.progress.reason, 'GrowingVolumes');
    assert.equal(step?.events?.[0]?.reason, 'GrowingVolumes');
  });

  it('sizes set, PVCs not there yet: waits, naming each short volume', () => {
    const members = three().map((m, i) =>
      withSize(
        m,
        '2Gi',
        i === 0
          ? { requested: '2Gi', capacity: '1Gi', resizing: 'FileSystemResizePending' }
          : { requested: '2Gi', capacity: '2Gi' },
      ),
    );
    const step = planVolumeGrowth(cw.state(grown('2Gi'), members));
    assert.equal(step?.action.kind, 'wait');
    assert.equal(
      step?.progress.message,
      "growing the members' volumes to 2Gi: waiting for data-demo-0 at 1Gi (FileSystemResizePending)",
    );
  });

  it("refused: not progressing, VolumeExpansionRefused with the member's words, a Warning once", () => {
    const refused = {
      requested: '1Gi',
      capacity: '1Gi',
      refused: {
        size: '2Gi',
        message: 'StorageClass fixed does not allow volume expansion',
        at: '2026-11-22T09:59:00Z',
      },
    };
    const members = three().map((m, i) =>
      withSize(m, '2Gi', i < 2 ? refused : { requested: '2Gi', capacity: '2Gi' }),
    );
    const step = planVolumeGrowth(cw.state(grown('2Gi'), members));
    assert.deepEqual(step?.progress, {
      active: false,
      reason: 'VolumeExpansionRefused',
      message: 'demo-0: StorageClass fixed does not allow volume expansion (also refused for demo-1)',
    });
    assert.equal(step?.events?.length, 1);
    const c = grown('2Gi');
    c.status!.conditions = [
      {
        type: 'Progressing',
        status: 'False',
        reason: 'VolumeExpansionRefused',
        message: step.progress.message,
        lastTransitionTime: '2026-11-22T09:59:00Z',
      },
    ];
    assert.deepEqual(planVolumeGrowth(cw.state(c, members))?.events, []);
  });

  it('nothing to do: all grown, a new member not bound yet, or Memory', () => {
    const members = three().map(m => withSize(m, '2Gi', { requested: '2Gi', capacity: '2Gi' }));
    assert.equal(planVolumeGrowth(cw.state(grown('2Gi'), members)), undefined);
    const fresh = three().map(m => withSize(m, '2Gi', { requested: '2Gi' }));
    assert.equal(planVolumeGrowth(cw.state(grown('2Gi'), fresh)), undefined);
    const memory = grown('2Gi');
    memory.status!.observed!.storage.medium = 'Memory';
    assert.equal(planVolumeGrowth(cw.state(memory, three())), undefined);
  });
});

describe('status.members: settled database figures', () => {
  const MIB = 1024 * 1024;
  const rows: [string, number | undefined, number | undefined, number | undefined][] = [
    ['first figure', undefined, 20480, 20480],
    ['no answer keeps the recorded one', 5 * MIB, undefined, 5 * MIB],
    ['a page more: kept', 5 * MIB, 5 * MIB + 4096, 5 * MIB],
    ['1 MiB on 100 MiB (1 %): kept', 100 * MIB, 101 * MIB, 100 * MIB],
    ['1 MiB on 10 MiB (10 %): taken', 10 * MIB, 11 * MIB, 11 * MIB],
    ['a small database that doubled but by less than 1 MiB: kept', 100_000, 200_000, 100_000],
    ['defragmented from 50 MiB to 2 MiB: taken', 50 * MIB, 2 * MIB, 2 * MIB],
  ];
  for (const [name, recorded, fresh, want] of rows)
    it(name, () => assert.equal(settled(recorded, fresh), want));

  it('a member entry carries its volume and the settled figures', () => {
    const m = {
      ...cw.member(0),
      status: { volume: { requested: '2Gi', capacity: '1Gi', resizing: 'Resizing' } },
    };
    const s = cw.state(cw.cluster(), [m]);
    s.dbSizes = { 'demo-0': { dbSize: 5 * MIB + 4096, dbSizeInUse: 3 * MIB } };
    assert.deepEqual(memberFigures(s, m, { name: 'demo-0', dbSize: 5 * MIB, dbSizeInUse: 1 * MIB }), {
      volume: { requested: '2Gi', capacity: '1Gi' },
      dbSize: 5 * MIB,
      dbSizeInUse: 3 * MIB,
    });
  });

  it('a status written anyway carries the figures of the moment; members etcd did not answer for keep theirs', () => {
    const status = {
      members: [
        { name: 'demo-0', dbSize: 5 * MIB, dbSizeInUse: MIB },
        { name: 'demo-1', dbSize: 7 * MIB, dbSizeInUse: 2 * MIB },
      ],
    };
    assert.deepEqual(
      freshFigures(status, { 'demo-0': { dbSize: 5 * MIB + 4096, dbSizeInUse: MIB + 8192 } }),
      {
        members: [
          { name: 'demo-0', dbSize: 5 * MIB + 4096, dbSizeInUse: MIB + 8192 },
          { name: 'demo-1', dbSize: 7 * MIB, dbSizeInUse: 2 * MIB },
        ],
      },
    );
    assert.equal(freshFigures(status, undefined), status);
  });
});
