// The order of a rolling upgrade (3.5.16 → 3.5.17, 3 members) and of a scale-down (5 → 3), seen
// from etcd itself, not from the operator's status: every member's own endpoint is asked in a tight
// loop for its ID, its leader, its version and its member list (test/support/etcd-order.ts), and
// every change is recorded with a sequence number. Asserted on that record: followers are touched
// first and a member is touched only after leadership has moved off it (its own last word names
// another leader, or — when its loop missed that moment on a loaded machine — another member named
// another leader at a higher raft term than any it was seen leading in, before it was touched), and
// at no step do fewer voters than a quorum answer healthy.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { API_VERSION } from '../../shared/api/group.ts';
import { toDecimalId } from '../../shared/etcd/ids.ts';
import { KubeObjects } from '../../shared/k8s/objects.ts';
import { beforeCreation, converged, mark, type Mark } from '../support/converge.ts';
import {
  handedOver,
  replay,
  sampleMembers,
  show,
  type EtcdSampler,
  type Seen,
} from '../support/etcd-order.ts';
import { kubectl } from '../support/kubectl.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const NAME = 'order';

describe('order seen from etcd: rolling upgrade and scale-down (chaos on)', { timeout: 1_200_000 }, () => {
  let sandbox: FullSandbox;
  let kube: KubeObjects;
  let sampler: EtcdSampler | undefined;

  before(async () => {
    sandbox = await startFullSandbox({ chaos: true, chaosSeed: 17, tickSeconds: 5 });
    kube = new KubeObjects(sandbox.kc);
  });
  after(async () => {
    await sampler?.stop();
    await sandbox?.stop();
  });

  const probe = () => ({ kube, namespace: NS, name: NAME });
  const describeWorld = () => sandbox.output().slice(-3000);
  const reached = (replicas: number, since: Mark, version?: string) =>
    converged(probe(), { replicas, since, version, timeoutMs: 300_000, describe: describeWorld });

  /** The latest word of each member, once every one of `names` answers healthy with `check`. */
  const settled = (names: string[], check: (s: Seen, all: Seen[]) => boolean = () => true) =>
    waitFor(
      `${names.join(', ')} answer in the sampler`,
      async () => {
        const latest = new Map<string, Seen>();
        for (const s of sampler!.log()) latest.set(s.member, s);
        const all = names.map(n => latest.get(n));
        const ok = all.every(s => s?.answers && s.leader && check(s, all as Seen[]));
        return ok ? (all as Seen[]) : false;
      },
      { timeoutMs: 120_000, intervalMs: 100 },
      () => show(sampler!.log()).slice(-4000),
    );
  const names = (n: number) => Array.from({ length: n }, (_, i) => `${NAME}-${i}`);

  it('rolling upgrade: followers first, the leader last after leadership moved, quorum throughout', async t => {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: NAME, namespace: NS },
      spec: { replicas: 3, version: '3.5.16', storage: { size: '1Gi' } },
    });
    assert.equal(created.kind, 'created');
    await reached(3, beforeCreation(), '3.5.16');
    sampler = await sampleMembers(sandbox.kc, NS, NAME);
    await settled(names(3), s => s.version === '3.5.16');

    const from = sampler.next();
    const since = await mark(probe());
    await kubectl(
      sandbox.kubeconfig,
      'patch',
      'etcdcluster',
      NAME,
      '-n',
      NS,
      '--type=merge',
      '-p',
      '{"spec":{"version":"3.5.17"}}',
    );
    await reached(3, since, '3.5.17');
    await settled(names(3), s => s.version === '3.5.17');

    const log = sampler.log();
    const seen = replay(log, from, '3.5.16');
    const record = `\n${show(log, from)}`;
    t.diagnostic(
      `${log.length - from} changes seen from etcd; touched in order: ${seen.touches.map(x => x.member).join(', ')}`,
    );
    assert.deepEqual(seen.touches.map(x => x.member).sort(), names(3), `each member touched once${record}`);
    assert.ok(seen.leaderAtStart?.member, `a leader when the upgrade began${record}`);
    assert.equal(
      seen.touches.at(-1)?.member,
      seen.leaderAtStart.member,
      `the leader is upgraded last${record}`,
    );
    for (const touch of seen.touches) {
      const evidence = handedOver(touch);
      t.diagnostic(`${touch.member} touched at #${touch.seq}: ${evidence ?? 'no evidence of a handover'}`);
      assert.ok(evidence, `${touch.member} no longer led when touched (#${touch.seq})${record}`);
    }
    assert.deepEqual(seen.quorumLost, [], `a quorum of voters healthy at every step${record}`);
    assert.deepEqual(
      seen.fewest,
      { healthy: 2, voters: 3 },
      `one member down at a time, never more${record}`,
    );
  });

  it('scale-down 5 → 3: the leading member loses leadership before it is removed, quorum throughout', async t => {
    assert.ok(sampler, 'the sampler runs (first test)');
    let since = await mark(probe());
    await kubectl(sandbox.kubeconfig, 'scale', 'etcdcluster', NAME, '--replicas=5', '-n', NS);
    await reached(5, since, '3.5.17');
    // Leadership onto the newest member, the first the scale-down removes, so it must be moved.
    const five = await settled(names(5));
    const newest = five[4];
    const leader = five.find(s => s.id === s.leader) ?? five.find(s => s.id === five[0].leader);
    assert.ok(leader, `a leader among the five${show(sampler.log()).slice(-3000)}`);
    if (leader.member !== newest.member) {
      const client = new Etcd3({ hosts: `http://${sampler.ipOf(leader.member)}:2379`, dialTimeout: 2000 });
      try {
        await client.maintenance.moveLeader({ targetID: toDecimalId(newest.id!) });
      } finally {
        client.close();
      }
    }
    await settled(names(5), s => s.leader === newest.id);

    const from = sampler.next();
    since = await mark(probe());
    await kubectl(sandbox.kubeconfig, 'scale', 'etcdcluster', NAME, '--replicas=3', '-n', NS);
    await reached(3, since, '3.5.17');
    await settled(names(3));

    const log = sampler.log();
    const seen = replay(log, from);
    const record = `\n${show(log, from)}`;
    t.diagnostic(
      `${log.length - from} changes seen from etcd; touched in order: ${seen.touches.map(x => x.member).join(', ')}`,
    );
    assert.equal(
      seen.leaderAtStart?.member,
      newest.member,
      `${newest.member} led when the scale-down began${record}`,
    );
    assert.deepEqual(
      seen.touches.map(x => x.member).sort(),
      [`${NAME}-3`, `${NAME}-4`],
      `only the two newest members touched${record}`,
    );
    for (const touch of seen.touches) {
      const evidence = handedOver(touch);
      t.diagnostic(`${touch.member} touched at #${touch.seq}: ${evidence ?? 'no evidence of a handover'}`);
      assert.ok(evidence, `${touch.member} no longer led when touched (#${touch.seq})${record}`);
    }
    assert.deepEqual(seen.quorumLost, [], `a quorum of voters healthy at every step${record}`);
  });
});
