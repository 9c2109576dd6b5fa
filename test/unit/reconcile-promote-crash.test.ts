// Where the crash tests can stop a promotion (shared/reconcile/cluster-act.ts's promote): the point
// `cluster:promoted` fires only once etcd has promoted the learner, before the member is recorded as
// a voter; `cluster:member-marked-voter` fires after that record. test/e2e/crash-lifecycle.test.ts
// arms each and expects the cluster to converge from exactly that state; a point that fired on a
// refusal, or never, would make those tests check a crash that cannot happen (or none at all).
// etcd is a scripted fake here (the real promote is test/integration/cluster-act-etcd.test.ts); the
// process is not really killed: process.kill is replaced and the step left hanging where it died.
import assert from 'node:assert/strict';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, afterEach, before, describe, it, mock } from 'node:test';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import { act } from '../../shared/reconcile/cluster-act.ts';
import { contextWith, memberObject, NAME, names, RecordingKube, stateWith } from '../support/act-fakes.ts';

const LEARNER = `${NAME}-3`;
const state = () => stateWith([...names.map(n => memberObject(n, true)), memberObject(LEARNER, false)]);

type PromoteAnswer = Awaited<ReturnType<EtcdAdapter['promote']>>;
const PROMOTED: PromoteAnswer = { kind: 'ok', member: undefined, members: [] };
const NOT_A_LEARNER: PromoteAnswer = { kind: 'not-a-learner', message: 'member is not a learner' };

describe('crash points of a promotion', { timeout: 30_000 }, () => {
  let dir = '';
  const saved = process.env.ETCDFN_CRASH_DIR;
  before(() => {
    dir = mkdtempSync(join(tmpdir(), 'etcdfn-crash-'));
    process.env.ETCDFN_CRASH_DIR = dir;
  });
  after(() => {
    if (saved === undefined) delete process.env.ETCDFN_CRASH_DIR;
    else process.env.ETCDFN_CRASH_DIR = saved;
    rmSync(dir, { recursive: true, force: true });
  });
  afterEach(() => {
    mock.restoreAll();
    rmSync(join(dir, 'cluster:promoted'), { force: true });
    rmSync(join(dir, 'cluster:member-marked-voter'), { force: true });
  });

  /**
   * Promote with etcd answering `answers` in turn, `point` armed. Resolves with how the step ended:
   * killed (with the signal) or returned (with its result), and what was recorded by then.
   */
  async function promoteWith(point: string, answers: PromoteAnswer[]) {
    writeFileSync(join(dir, point), '');
    let killed: (signal: unknown) => void = () => {};
    const death = new Promise<{ killed: unknown }>(resolve => {
      killed = signal => resolve({ killed: signal });
    });
    mock.method(process, 'kill', (pid: number, signal: unknown) => {
      assert.equal(pid, process.pid);
      killed(signal);
      return true;
    });
    const kube = new RecordingKube();
    const calls: string[] = [];
    const etcd = {
      promote: (_e: readonly string[], id: string) => {
        calls.push(id);
        return Promise.resolve(answers[Math.min(calls.length, answers.length) - 1]);
      },
    } as unknown as EtcdAdapter;
    const step = act(contextWith(kube, etcd), state(), { kind: 'promote', member: LEARNER, id: 'a3' });
    const end = await Promise.race([step.then(result => ({ result })), death]);
    return { end, kube, calls, armed: existsSync(join(dir, point)) };
  }

  it('cluster:promoted fires right after etcd promoted the learner, before it is recorded as a voter', async () => {
    const { end, kube, armed } = await promoteWith('cluster:promoted', [PROMOTED]);
    assert.deepEqual(end, { killed: 'SIGKILL' });
    assert.equal(armed, false, 'the point disarms itself so it fires once');
    assert.deepEqual(kube.voterMarks, []);
  });

  it('cluster:promoted does not fire when etcd answers that the member is already a voter', async () => {
    const { end, kube, armed } = await promoteWith('cluster:promoted', [NOT_A_LEARNER]);
    assert.deepEqual(end, { result: { ok: true, summary: `promoted ${LEARNER} to voter` } });
    assert.equal(armed, true);
    assert.deepEqual(kube.voterMarks, [LEARNER]);
  });

  it('cluster:promoted does not fire while etcd refuses a learner that has not caught up', async () => {
    const { end, calls, armed } = await promoteWith('cluster:promoted', [
      {
        kind: 'learner-not-in-sync',
        message: 'can only promote a learner member which is in sync with leader',
      },
    ] as PromoteAnswer[]);
    assert.equal('result' in end && end.result.ok, false);
    assert.equal(calls.length, 3);
    assert.equal(armed, true);
  });

  it('cluster:member-marked-voter fires after the voter is recorded, on a first promotion and on a repeated one', async () => {
    for (const answer of [PROMOTED, NOT_A_LEARNER]) {
      const { end, kube, armed } = await promoteWith('cluster:member-marked-voter', [answer]);
      assert.deepEqual(end, { killed: 'SIGKILL' }, answer.kind);
      assert.equal(armed, false);
      assert.deepEqual(kube.voterMarks, [LEARNER]);
      mock.restoreAll();
    }
  });
});
