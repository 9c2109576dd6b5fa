// The NOSPACE recovery's act step (shared/reconcile/cluster-space.ts) over a scripted fake of the etcd
// adapter: what it does when etcd fails at each call (real etcd cannot be made to fail on cue; the
// happy path and the order against real etcd are test/integration/cluster-space-etcd.test.ts). Every
// failure before the end leaves the alarm raised (no disarm) and answers a retry naming the cause;
// only NOSPACE is ever disarmed, never CORRUPT; the Events say what was done.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { Alarm } from '../../shared/etcd/maintenance.ts';
import { recoverSpace } from '../../shared/reconcile/cluster-space.ts';
import { cluster, contextWith, RecordingKube } from '../support/act-fakes.ts';

const MiB = 1024 * 1024;
const QUOTA = 8 * MiB;
const members = [
  { name: 'demo-1', endpoint: 'http://demo-1:2379' },
  { name: 'demo-0', endpoint: 'http://demo-0:2379' },
];
const action = { kind: 'recover-space' as const, members, quotaBytes: QUOTA };
const fail = (message: string) => ({ kind: 'unavailable' as const, message });
const NOSPACE: Alarm = { memberId: '00000000000000a1', alarm: 'NOSPACE' };
const CORRUPT: Alarm = { memberId: '00000000000000a0', alarm: 'CORRUPT' };

/** An etcd that answers every call the recovery makes; `overrides` script the failures. */
function fakeEtcd(overrides: Partial<EtcdAdapter> = {}) {
  const calls: string[] = [];
  const sizes = new Map<string, number>(members.map(m => [m.endpoint, 7 * MiB]));
  const status = (endpoint: string) => ({
    kind: 'ok' as const,
    status: { dbSize: sizes.get(endpoint) ?? 0 },
  });
  const base = {
    compact: () => (
      calls.push('compact'),
      Promise.resolve({ kind: 'ok', revision: 42, alreadyCompacted: false })
    ),
    memberStatus: (e: string) => (calls.push(`status ${e}`), Promise.resolve(status(e))),
    defragment: (e: string) => {
      calls.push(`defragment ${e}`);
      sizes.set(e, 1 * MiB);
      return Promise.resolve({ kind: 'ok' });
    },
    healthRead: (e: readonly string[]) => (
      calls.push(`health ${e.join()}`),
      Promise.resolve({ kind: 'ok', revision: 42 })
    ),
    listAlarms: () => (calls.push('alarms'), Promise.resolve({ kind: 'ok', alarms: [NOSPACE, CORRUPT] })),
    disarmAlarm: (_e: readonly string[], alarm: Alarm) => {
      calls.push(`disarm ${alarm.alarm} ${alarm.memberId}`);
      return Promise.resolve({ kind: 'ok', alarms: [] });
    },
  } as unknown as EtcdAdapter;
  return { etcd: { ...base, ...overrides }, calls };
}

async function run(overrides: Partial<EtcdAdapter> = {}) {
  const kube = new RecordingKube();
  const { etcd, calls } = fakeEtcd(overrides);
  const result = await recoverSpace(contextWith(kube, etcd), cluster, action);
  return { result, calls, kube };
}

describe('recoverSpace (act) over a fake etcd', () => {
  it('compacts, defragments each member in the planned order after it serves again, then disarms NOSPACE only', async () => {
    const { result, calls, kube } = await run();
    assert.deepEqual(result, {
      ok: true,
      summary: 'recovered from NOSPACE: compacted, defragmented 2 member(s), disarmed',
    });
    assert.deepEqual(calls, [
      'compact',
      'status http://demo-1:2379',
      'defragment http://demo-1:2379',
      'health http://demo-1:2379',
      'status http://demo-1:2379',
      'status http://demo-0:2379',
      'defragment http://demo-0:2379',
      'health http://demo-0:2379',
      'status http://demo-0:2379',
      'alarms',
      'disarm NOSPACE 00000000000000a1',
    ]);
    assert.deepEqual(
      kube.eventObjects.map(e => [e.type, e.reason, e.message, e.reportingInstance]),
      [
        ['Normal', 'SpaceCompacted', "compacted etcd's history before revision 42", 'reconcile-cluster'],
        ['Normal', 'MemberDefragmented', 'defragmented demo-1: 7 MiB → 1 MiB', 'reconcile-cluster'],
        ['Normal', 'MemberDefragmented', 'defragmented demo-0: 7 MiB → 1 MiB', 'reconcile-cluster'],
        ['Normal', 'AlarmDisarmed', 'NOSPACE disarmed: etcd accepts writes again', 'reconcile-cluster'],
      ],
    );
  });

  const failures: [string, Partial<EtcdAdapter>, RegExp][] = [
    [
      'compaction fails',
      { compact: () => Promise.resolve(fail('compact refused')) },
      /^compacting: compact refused$/,
    ],
    [
      'a member does not answer before its defragmentation',
      { memberStatus: () => Promise.resolve(fail('no route')) },
      /^demo-1 does not answer: no route$/,
    ],
    [
      'a defragmentation fails',
      { defragment: () => Promise.resolve(fail('defrag timed out')) },
      /^defragmenting demo-1: defrag timed out$/,
    ],
    [
      'reading the alarms fails',
      { listAlarms: () => Promise.resolve(fail('gone')) },
      /^reading alarms: gone$/,
    ],
    [
      'disarming fails',
      { disarmAlarm: () => Promise.resolve(fail('leader changed')) },
      /^disarming NOSPACE: leader changed$/,
    ],
  ];
  for (const [what, overrides, reason] of failures) {
    it(`stops with NOSPACE still raised when ${what}, naming the cause`, async () => {
      const { result, calls } = await run(overrides);
      assert.equal(result.ok, false);
      assert.match(result.ok ? '' : result.reason, reason);
      assert.ok(!calls.some(c => c.startsWith('disarm')), calls.join('\n'));
    });
  }

  it('stops when a member answers no more after its defragmentation', async () => {
    let asked = 0;
    const { result, calls } = await run({
      memberStatus: () =>
        Promise.resolve(asked++ === 0 ? { kind: 'ok', status: { dbSize: 7 * MiB } } : fail('down')),
    } as Partial<EtcdAdapter>);
    assert.deepEqual(result, { ok: false, reason: 'demo-1 does not answer: down' });
    assert.ok(!calls.some(c => c.startsWith('disarm')));
  });

  it('stops when a defragmented member does not serve reads again in time', async t => {
    let clock = Date.now();
    // untilServing's deadline: each reading of the clock is a minute later.
    t.mock.method(Date, 'now', () => (clock += 61_000));
    const { result, calls } = await run({ healthRead: () => Promise.resolve(fail('no leader')) });
    assert.deepEqual(result, {
      ok: false,
      reason: 'demo-1 did not serve reads again after its defragmentation',
    });
    assert.ok(!calls.some(c => c.startsWith('disarm') || c === 'defragment http://demo-0:2379'));
  });
});
