// The act layer's etcd steps (shared/reconcile/cluster-act.ts, plan/space/nospace-alarm.ts) against real etcd:
// promoting a learner (cluster-space-etcd.test.ts has the NOSPACE recovery). The plan decides when;
// this checks that what the act layer then does to etcd, and records, is safe: a learner that has
// not caught up is never recorded as a voter. The Kubernetes side is a plain recording fake (only
// the writes the step makes); etcd is real, asked directly for its member list after each step.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { createEtcdAdapter } from '../../shared/etcd/adapter.ts';
import { act } from '../../shared/reconcile/cluster-act.ts';
import {
  contextWith,
  mappedAdapter,
  memberObject,
  NAME,
  names,
  RecordingKube,
  stateWith,
} from '../support/act-fakes.ts';
import { EtcdTestCluster, sleep, type EtcdSlot } from '../support/etcd-process.ts';

describe('promote against real etcd 3.5', { timeout: 120_000 }, () => {
  let etcd: EtcdTestCluster;
  const slots = new Map<string, EtcdSlot>();
  const raw = createEtcdAdapter({ timeoutMs: 3000 });
  let learner: EtcdSlot;
  let learnerId = '';

  before(async () => {
    etcd = await EtcdTestCluster.start({ minor: '3.5', size: 3, names });
    for (const proc of etcd.processes) slots.set(proc.name, proc.slot);
    learner = await etcd.reserve(`${NAME}-3`);
    slots.set(learner.name, learner);
    // etcd refuses a membership change until every voter has been connected for 5 s.
    let added = await raw.addLearner(etcd.endpoints, learner.peerURL);
    for (let i = 0; i < 200 && added.kind === 'unhealthy-cluster'; i++) {
      await sleep(100);
      added = await raw.addLearner(etcd.endpoints, learner.peerURL);
    }
    assert.equal(added.kind, 'ok', JSON.stringify(added));
    learnerId = added.kind === 'ok' ? added.member.id : '';
  });
  after(() => etcd?.cleanup());

  const listed = async () => {
    const list = await raw.listMembers(etcd.endpoints);
    assert.equal(list.kind, 'ok', JSON.stringify(list));
    return list.kind === 'ok' ? list.members : [];
  };
  const state = () =>
    stateWith([...names.map(n => memberObject(n, true)), memberObject(learner.name, false)]);

  /** The mapped adapter, counting the promote calls it passes on. */
  const counting = () => {
    const inner = mappedAdapter(raw, slots);
    const calls = { promote: 0 };
    return {
      calls,
      etcd: {
        ...inner,
        promote: (e: readonly string[], id: string) => (calls.promote++, inner.promote(e, id)),
      },
    };
  };

  it('a learner whose etcd has not caught up stays a learner, is not recorded as a voter, and the step is retried', async () => {
    const kube = new RecordingKube();
    const { calls, etcd: adapter } = counting();
    const ctx = contextWith(kube, adapter);
    const result = await act(ctx, state(), { kind: 'promote', member: learner.name, id: learnerId });
    assert.equal(result.ok, false, JSON.stringify(result));
    assert.match(JSON.stringify(result), /still catching up/);
    assert.deepEqual(kube.voterMarks, []);
    // Asked as often as ETCDFN_PROMOTE_ATTEMPTS allows (3 here), no more.
    assert.equal(calls.promote, 3);
    const entry = (await listed()).find(m => m.id === learnerId);
    assert.equal(entry?.isLearner, true, JSON.stringify(entry));
  });

  it('once the learner runs and catches up, it is promoted in etcd and recorded as a voter', async () => {
    await etcd.startMember(learner, {
      state: 'existing',
      initialCluster: [...slots.values()].map(s => `${s.name}=${s.peerURL}`).join(','),
    });
    const kube = new RecordingKube();
    const ctx = contextWith(kube, mappedAdapter(raw, slots), 200);
    const result = await act(ctx, state(), { kind: 'promote', member: learner.name, id: learnerId });
    assert.deepEqual(result, { ok: true, summary: `promoted ${learner.name} to voter` });
    assert.deepEqual(kube.statusPatches, [{ name: learner.name, patch: { isVoter: true, role: 'voter' } }]);
    const entry = (await listed()).find(m => m.id === learnerId);
    assert.equal(entry?.isLearner, false, JSON.stringify(entry));
  });

  it('a repeated promote (etcd: not a learner) records the voter again and changes nothing in etcd', async () => {
    const before = await listed();
    const kube = new RecordingKube();
    const ctx = contextWith(kube, mappedAdapter(raw, slots));
    const result = await act(ctx, state(), { kind: 'promote', member: learner.name, id: learnerId });
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.deepEqual(kube.voterMarks, [learner.name]);
    assert.deepEqual(await listed(), before);
  });

  it('a promote etcd refuses for another reason (no such member) is retried at once, recording nothing', async () => {
    const before = await listed();
    const kube = new RecordingKube();
    const { calls, etcd: adapter } = counting();
    const ctx = contextWith(kube, adapter);
    const result = await act(ctx, state(), { kind: 'promote', member: 'demo-9', id: '00000000000000ff' });
    assert.equal(result.ok, false, JSON.stringify(result));
    assert.match(JSON.stringify(result), /promoting demo-9: .*member not found/);
    assert.equal(calls.promote, 1);
    assert.deepEqual(kube.voterMarks, []);
    assert.deepEqual(await listed(), before);
  });
});
