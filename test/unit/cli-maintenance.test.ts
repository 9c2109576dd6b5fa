// `kubectl etcdfn health` and `defrag`: the health verdict per member and for the cluster, and the
// order (followers first, the leader last) and refusals of a defragmentation.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { parse } from 'yaml';
import { defragOrder } from '../../cli/defrag.ts';
import { structuredOutput } from '../../cli/format.ts';
import { healthView, renderHealth, type HealthAnswers } from '../../cli/health.ts';
import type { AlarmsResult, EndpointStatus, HealthResult } from '../../shared/etcd/index.ts';

const IDS = ['8e9e05c52164694d', '91bc3c398fb3c146', 'fd422379fda50e48'];
const members = ['demo-0', 'demo-1', 'demo-2'].map((name, i) => ({
  name,
  endpoint: `http://127.0.1.${i + 2}:2379`,
}));

/** Member i's status; `leader` null for a member that knows no leader. */
function ok(i: number, leader: string | null = IDS[1] ?? null): EndpointStatus {
  return {
    kind: 'ok',
    endpoint: members[i].endpoint,
    status: {
      endpoint: members[i].endpoint,
      memberId: IDS[i],
      clusterId: 'cdf818194e3a8c32',
      leaderId: leader ?? undefined,
      isLeader: IDS[i] === leader,
      isLearner: false,
      version: '3.5.16',
      raftTerm: 3,
      raftIndex: 100,
      raftAppliedIndex: 100,
      dbSize: 1_000_000 * (i + 1),
      dbSizeInUse: 500_000,
      errors: [],
    },
  };
}
const read: HealthResult = { kind: 'ok', revision: 42 };
const noAlarm: AlarmsResult = { kind: 'ok', alarms: [] };

function answers(over: Partial<HealthAnswers> = {}): HealthAnswers {
  return { statuses: [ok(0), ok(1), ok(2)], reads: [read, read, read], alarms: noAlarm, ...over };
}

describe('health view', () => {
  it('is healthy when every member answers, knows the leader and serves a linearizable read', () => {
    const v = healthView('demo', 'prod', members, answers());
    assert.equal(v.healthy, true);
    assert.equal(v.leaderId, IDS[1]);
    assert.deepEqual(
      v.members.map(m => [m.name, m.healthy, m.leader, m.revision]),
      [
        ['demo-0', true, false, 42],
        ['demo-1', true, true, 42],
        ['demo-2', true, false, 42],
      ],
    );
    assert.match(renderHealth(v), /Healthy\.$/);
  });

  const unhealthy: [string, Partial<HealthAnswers>, RegExp][] = [
    [
      'a member that does not answer',
      {
        statuses: [ok(0), ok(1), { kind: 'unavailable', endpoint: members[2].endpoint, message: 'refused' }],
      },
      /demo-2: refused/,
    ],
    ['a member that knows no leader', { statuses: [ok(0), ok(1), ok(2, null)] }, /demo-2: knows no leader/],
    [
      'a member whose linearizable read fails',
      { reads: [read, read, { kind: 'unavailable', message: 'request timed out' }] },
      /demo-2: linearizable read failed: request timed out/,
    ],
    [
      'an active NOSPACE alarm',
      { alarms: { kind: 'ok', alarms: [{ memberId: IDS[0], alarm: 'NOSPACE' }] } },
      /alarm NOSPACE on demo-0: writes are refused; free space with `kubectl etcdfn compact`/,
    ],
    [
      'alarms that cannot be read',
      { alarms: { kind: 'unavailable', message: 'no leader' } },
      /alarms unknown: no leader/,
    ],
  ];
  for (const [name, over, says] of unhealthy) {
    it(`is not healthy with ${name}, and says why`, () => {
      const v = healthView('demo', 'prod', members, answers(over));
      assert.equal(v.healthy, false);
      const text = renderHealth(v);
      assert.match(text, says);
      assert.match(text, /NOT HEALTHY\.$/);
    });
  }

  it('puts each alarm on the member that raised it', () => {
    const alarms: AlarmsResult = { kind: 'ok', alarms: [{ memberId: IDS[2], alarm: 'NOSPACE' }] };
    const v = healthView('demo', 'prod', members, answers({ alarms }));
    assert.deepEqual(
      v.members.map(m => m.alarms),
      [[], [], ['NOSPACE']],
    );
  });

  it('prints JSON and YAML that parse back to the same view', () => {
    const v = healthView('demo', 'prod', members, answers());
    assert.deepEqual(JSON.parse(structuredOutput('json', v)!), v);
    assert.deepEqual(parse(structuredOutput('yaml', v)!), v);
    assert.equal(structuredOutput('text', v), undefined);
    assert.equal(structuredOutput(undefined, v), undefined);
  });
});

describe('defragmentation order', () => {
  it('takes followers first, by name, and the leader last', () => {
    const order = defragOrder(healthView('demo', 'prod', members, answers()));
    assert.equal(order.kind, 'order');
    assert.deepEqual(order.kind === 'order' && order.members.map(m => m.name), [
      'demo-0',
      'demo-2',
      'demo-1',
    ]);
  });

  it('takes one member when asked, leader or not', () => {
    const order = defragOrder(healthView('demo', 'prod', members, answers()), 'demo-1');
    assert.deepEqual(order.kind === 'order' && order.members.map(m => m.name), ['demo-1']);
  });

  it('goes ahead under NOSPACE: freeing space is what it is for', () => {
    const alarms: AlarmsResult = { kind: 'ok', alarms: [{ memberId: IDS[0], alarm: 'NOSPACE' }] };
    assert.equal(defragOrder(healthView('demo', 'prod', members, answers({ alarms }))).kind, 'order');
  });

  const refusals: [string, Partial<HealthAnswers>, string | undefined, RegExp][] = [
    [
      'a member is unhealthy (never take out the last healthy voters)',
      {
        statuses: [ok(0), ok(1), { kind: 'unavailable', endpoint: members[2].endpoint, message: 'refused' }],
      },
      undefined,
      /not every member is healthy \(demo-2: refused\)/,
    ],
    [
      'a CORRUPT alarm is active',
      { alarms: { kind: 'ok', alarms: [{ memberId: IDS[0], alarm: 'CORRUPT' }] } },
      undefined,
      /CORRUPT alarm/,
    ],
    ['alarms are unknown', { alarms: { kind: 'unavailable', message: 'x' } }, undefined, /alarms unknown/],
    [
      'the member named does not run',
      {},
      'demo-9',
      /no running member "demo-9" \(members: demo-0, demo-1, demo-2\)/,
    ],
  ];
  for (const [name, over, only, says] of refusals) {
    it(`is refused when ${name}`, () => {
      const order = defragOrder(healthView('demo', 'prod', members, answers(over)), only);
      assert.equal(order.kind, 'refused');
      assert.match(order.kind === 'refused' ? order.reason : '', says);
    });
  }
});
