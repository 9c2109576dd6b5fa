// The act layer's NOSPACE recovery (shared/reconcile/cluster-space.ts, reached through act's
// recover-space step) against a real 3-member etcd 3.5 with a 2 MiB quota, filled until etcd raises
// NOSPACE. etcd's own alarm list is read after every call the recovery makes: the alarm must stay
// raised through the compaction and every member's defragmentation and be disarmed only at the end
// (disarmed earlier, etcd takes writes into a file still full of free pages), and a recovery that
// cannot defragment a member must leave it raised. The Kubernetes side is a recording fake (Events).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { createEtcdAdapter, type EtcdAdapter } from '../../shared/etcd/adapter.ts';
import { act } from '../../shared/reconcile/cluster-act.ts';
import { contextWith, names, RecordingKube, stateWith } from '../support/act-fakes.ts';
import { EtcdTestCluster } from '../support/etcd-process.ts';

const QUOTA = 2 * 1024 * 1024;
const VALUE = 'x'.repeat(64 * 1024);

/** NOSPACE is raised (by one member or more: each raises its own), and nothing else. */
const nospaceOnly = (alarms: string[]) => alarms.length > 0 && alarms.every(a => a === 'NOSPACE');

interface Step {
  call: string;
  nospace: boolean;
}

/** The real adapter, with etcd's alarm list read (from `probe`) after each call that changes etcd. */
function watchingAdapter(raw: EtcdAdapter, probe: () => string[], steps: Step[]): EtcdAdapter {
  const nospace = async () => {
    const alarms = await raw.listAlarms(probe());
    assert.equal(alarms.kind, 'ok', JSON.stringify(alarms));
    return alarms.kind === 'ok' && alarms.alarms.some(a => a.alarm === 'NOSPACE');
  };
  const record = async <R>(call: string, result: R): Promise<R> => {
    steps.push({ call, nospace: await nospace() });
    return result;
  };
  return {
    ...raw,
    compact: async e => record('compact', await raw.compact(e)),
    defragment: async e => record(`defragment ${e}`, await raw.defragment(e)),
    disarmAlarm: async (e, alarm) => record('disarm', await raw.disarmAlarm(e, alarm)),
  };
}

describe('NOSPACE recovery against real etcd 3.5', { timeout: 240_000 }, () => {
  let etcd: EtcdTestCluster;
  let client: Etcd3;
  const raw = createEtcdAdapter({ timeoutMs: 3000 });
  const kept = new Map<string, string>();

  const members = () => etcd.processes.map(p => ({ name: p.name, endpoint: p.clientURL }));
  const alarmsNow = async () => {
    const alarms = await raw.listAlarms(etcd.endpoints);
    assert.equal(alarms.kind, 'ok', JSON.stringify(alarms));
    return alarms.kind === 'ok' ? alarms.alarms.map(a => a.alarm) : [];
  };
  /** Writes until etcd refuses for lack of space. */
  const fill = async () => {
    let refused: unknown;
    for (let i = 0; i < 1000 && refused === undefined; i++) {
      try {
        await client.put('churn').value(`${i}:${VALUE}`);
      } catch (err) {
        refused = err;
      }
    }
    assert.match(String(refused), /database space exceeded/);
    assert.ok((await alarmsNow()).includes('NOSPACE'));
  };

  before(async () => {
    etcd = await EtcdTestCluster.start({
      minor: '3.5',
      size: 3,
      names,
      extraArgs: [`--quota-backend-bytes=${QUOTA}`],
    });
    client = new Etcd3({ hosts: etcd.endpoints });
    for (let i = 0; i < 10; i++) {
      await client.put(`keep/${i}`).value(`v${i}`);
      kept.set(`keep/${i}`, `v${i}`);
    }
  });
  after(async () => {
    client?.close();
    await etcd?.cleanup();
  });

  it('keeps NOSPACE raised through compaction and every defragmentation, disarms it last, and writes work again', async () => {
    await fill();
    const steps: Step[] = [];
    const kube = new RecordingKube();
    const ctx = contextWith(
      kube,
      watchingAdapter(raw, () => etcd.endpoints, steps),
    );
    const result = await act(ctx, stateWith([]), {
      kind: 'recover-space',
      members: members(),
      quotaBytes: QUOTA,
    });
    assert.equal(result.ok, true, JSON.stringify(result));
    assert.deepEqual(steps, [
      { call: 'compact', nospace: true },
      ...members().map(m => ({ call: `defragment ${m.endpoint}`, nospace: true })),
      // One NOSPACE per member that raised it; the last disarm clears the list.
      ...steps
        .filter(s => s.call === 'disarm')
        .map((_, i, all) => ({
          call: 'disarm',
          nospace: i < all.length - 1,
        })),
    ]);
    assert.ok(steps.some(s => s.call === 'disarm'));
    assert.deepEqual(await alarmsNow(), []);
    assert.deepEqual(kube.events, [
      'SpaceCompacted',
      ...members().map(() => 'MemberDefragmented'),
      'AlarmDisarmed',
    ]);
    await client.put('after-recovery').value('yes');
    for (const [key, value] of kept) assert.equal(await client.get(key).string(), value);
  });

  it('leaves NOSPACE raised when a member cannot be defragmented, and asks for a retry', async () => {
    await client.delete().key('after-recovery');
    await fill();
    const down = etcd.process(names[2] ?? '');
    await down.stop({ force: true });
    const steps: Step[] = [];
    const kube = new RecordingKube();
    const ctx = contextWith(
      kube,
      watchingAdapter(raw, () => etcd.endpoints, steps),
    );
    const result = await act(ctx, stateWith([]), {
      kind: 'recover-space',
      members: members(),
      quotaBytes: QUOTA,
    });
    assert.equal(result.ok, false, JSON.stringify(result));
    assert.match(JSON.stringify(result), new RegExp(`${names[2]} does not answer`));
    assert.ok(!steps.some(s => s.call === 'disarm'), JSON.stringify(steps));
    assert.ok(
      steps.every(s => s.nospace),
      JSON.stringify(steps),
    );
    assert.ok(nospaceOnly(await alarmsNow()));
    const live = new Etcd3({ hosts: etcd.endpoints });
    try {
      await assert.rejects(live.put('while-raised').value('no').exec(), /database space exceeded/);
    } finally {
      live.close();
    }
  });

  it('leaves NOSPACE raised when the defragmented data alone would fill the quota, and says so', async () => {
    // The quota the step is given is below what one member holds after defragmentation.
    const running = members().filter(m => m.name !== names[2]);
    assert.ok(nospaceOnly(await alarmsNow()));
    const steps: Step[] = [];
    const ctx = contextWith(
      new RecordingKube(),
      watchingAdapter(raw, () => etcd.endpoints, steps),
    );
    const result = await act(ctx, stateWith([]), {
      kind: 'recover-space',
      members: running,
      quotaBytes: 64 * 1024,
    });
    assert.equal(result.ok, false, JSON.stringify(result));
    assert.match(JSON.stringify(result), /the live data alone .* fills the 0\.1 MiB quota/);
    assert.ok(!steps.some(s => s.call === 'disarm'), JSON.stringify(steps));
    assert.ok(nospaceOnly(await alarmsNow()));
  });
});
