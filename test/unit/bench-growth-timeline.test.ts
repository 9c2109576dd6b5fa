// The lifecycle benchmark's scale-up timeline (test/bench/growth-timeline.ts): each new member's
// steps at the poll they were first seen, members that were there before left out, and the gaps.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { GrowthTimeline, type PodSeen } from '../bench/growth-timeline.ts';

const member = (name: string, wired = true, voter = false): EtcdMember =>
  ({
    metadata: { name },
    spec: { clusterName: 'demo', initialCluster: wired ? `${name}=http://x:2380` : '' },
    status: voter ? { isVoter: true } : {},
  }) as unknown as EtcdMember;

const pod = (name: string, phase: string, ready = false): PodSeen => ({
  metadata: { name },
  status: { phase, conditions: [{ type: 'Ready', status: ready ? 'True' : 'False' }] },
});

describe('bench: growth timeline', () => {
  it("records each new member's steps when first seen, and the gaps between them", () => {
    const t = new GrowthTimeline();
    t.existing([member('demo-0', true, true)]);
    t.observe(0.1, [member('demo-0', true, true), member('demo-1', false)], []);
    t.observe(0.3, [member('demo-1')], [pod('demo-1', 'Pending')]);
    t.observe(0.5, [member('demo-1')], [pod('demo-1', 'Running')]);
    t.observe(0.9, [member('demo-1', true, true)], [pod('demo-1', 'Running', true)]);
    t.observe(1.0, [member('demo-1', true, true), member('demo-2', false)], [pod('demo-1', 'Running', true)]);
    assert.deepEqual(
      t.members().map(m => m.member),
      ['demo-1', 'demo-2'],
    );
    assert.deepEqual(t.members()[0]?.steps, {
      member: 0.1,
      added: 0.3,
      pod: 0.3,
      running: 0.5,
      ready: 0.9,
      voter: 0.9,
    });
    const gaps = t.gaps();
    assert.equal(gaps.get('new member 1: added → pod'), 0);
    assert.ok(Math.abs((gaps.get('new member 1: pod → running') ?? NaN) - 0.2) < 1e-9);
    assert.ok(Math.abs((gaps.get('new member 1 voter → new member 2 created') ?? NaN) - 0.1) < 1e-9);
    assert.equal(gaps.has('new member 2: member → added'), false);
  });
  it('for an apply, when every member had reached each step: the latest member, only steps all reached', () => {
    const t = new GrowthTimeline();
    t.observe(0.2, [member('demo-0'), member('demo-1')], [pod('demo-0', 'Pending')]);
    t.observe(
      0.4,
      [member('demo-0'), member('demo-1')],
      [pod('demo-0', 'Running'), pod('demo-1', 'Pending')],
    );
    t.observe(
      1.4,
      [member('demo-0', true, true), member('demo-1')],
      [pod('demo-0', 'Running', true), pod('demo-1', 'Running')],
    );
    assert.deepEqual(
      [...t.allReached()],
      [
        ['member', 0.2],
        ['added', 0.2],
        ['pod', 0.4],
        ['running', 1.4],
      ],
    );
    assert.deepEqual([...new GrowthTimeline().allReached()], []);
  });
});
