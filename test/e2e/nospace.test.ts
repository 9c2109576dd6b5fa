// NOSPACE for real on the sandbox (etcd 3.5.16): a 3-member cluster with a 16 MiB quota is filled
// by a writer until etcd refuses writes with "database space exceeded"; the operator notices on
// its tick, compacts, defragments the members one at a time (the leader last) and disarms, and the
// writer's puts are accepted again with every acknowledged key still there.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects } from '../../shared/k8s/objects.ts';
import { beforeCreation, converged, mark, type Cluster } from '../support/converge.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const NAME = 'full';
const QUOTA = 16 * 1024 * 1024;
const VALUE = 'x'.repeat(128 * 1024);

interface EventLike {
  reason?: string;
  message?: string;
  involvedObject?: { name?: string; kind?: string };
  metadata: { creationTimestamp?: string; name?: string };
}

describe('NOSPACE recovery (etcd 3.5.16 on the sandbox)', { timeout: 1_200_000 }, () => {
  let sandbox: FullSandbox;
  let kube: KubeObjects;
  const ref = () => ({ kube, namespace: NS, name: NAME });
  const describeWorld = () => sandbox.output().slice(-4000);

  before(async () => {
    sandbox = await startFullSandbox({ tickSeconds: 5, startTimeoutMs: 300_000 });
    kube = new KubeObjects(sandbox.kc);
  });
  after(async () => {
    await sandbox?.stop();
  });

  async function client(c: Cluster): Promise<Etcd3> {
    const pods = await kube.list<{ metadata: { name?: string }; status?: { podIP?: string } } & Cluster>(
      'v1',
      'Pod',
      NS,
      `etcdfn.io/cluster=${NAME}`,
    );
    const hosts = pods.flatMap(p => (p.status?.podIP ? [`http://${p.status.podIP}:2379`] : []));
    assert.ok(hosts.length > 0, `no Pod IP for ${c.metadata.name}`);
    return new Etcd3({ hosts });
  }

  const clusterEvents = async (): Promise<EventLike[]> =>
    (await kube.list<EventLike & Cluster>('v1', 'Event', NS)).filter(
      e => e.involvedObject?.kind === 'EtcdCluster' && e.involvedObject.name === NAME,
    );

  it('fills the quota until writes are refused, then the operator gives writes back with every key kept', async () => {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: NAME, namespace: NS },
      spec: { replicas: 3, version: '3.5.16', options: { quotaBackendBytes: QUOTA } },
    });
    assert.equal(created.kind, 'created');
    const ready = await converged(ref(), {
      replicas: 3,
      since: beforeCreation(),
      timeoutMs: 300_000,
      describe: describeWorld,
    });
    const etcd = await client(ready);
    try {
      const kept = new Map<string, string>();
      for (let i = 0; i < 50; i++) {
        await etcd.put(`keep/${i}`).value(`v${i}`).exec();
        kept.set(`keep/${i}`, `v${i}`);
      }
      let lastAcked = -1;
      let refused: unknown;
      for (let i = 0; i < 2000 && refused === undefined; i++) {
        try {
          await etcd.put('churn').value(`${i}:${VALUE}`).exec();
          lastAcked = i;
        } catch (err) {
          refused = err;
        }
      }
      assert.match(String(refused), /database space exceeded/, 'etcd refused a write for space');
      const since = await mark(ref());

      // The operator's recovery, seen as etcd accepting a write again (the writer retries).
      await waitFor(
        'a write accepted again',
        async () => {
          try {
            await etcd.put('after').value('yes').exec();
            return true;
          } catch {
            return false;
          }
        },
        { timeoutMs: 300_000, intervalMs: 1000 },
        describeWorld,
      );
      for (const [key, value] of kept) assert.equal(await etcd.get(key).string(), value, key);
      const churn = Number((await etcd.get('churn').string())?.split(':')[0]);
      // etcd stores the put that crossed the quota before refusing it; no acknowledged put is lost.
      assert.ok(
        churn === lastAcked || churn === lastAcked + 1,
        `churn ${churn}, last acknowledged ${lastAcked}`,
      );

      const events = await clusterEvents();
      const reasons = events.map(e => e.reason);
      for (const reason of ['NoSpace', 'SpaceCompacted', 'AlarmDisarmed']) {
        assert.ok(reasons.includes(reason), `an Event ${reason}: ${reasons.join(', ')}`);
      }
      const defrags = events.filter(e => e.reason === 'MemberDefragmented');
      assert.ok(defrags.length >= 3, `three MemberDefragmented Events: ${JSON.stringify(defrags)}`);
      assert.match(defrags[0]?.message ?? '', /^defragmented full-\d+: [\d.]+ MiB → [\d.]+ MiB$/);

      // The cluster is healthy again on fresh evidence: status written after the refusal.
      const back = await converged(ref(), {
        replicas: 3,
        since,
        timeoutMs: 300_000,
        describe: describeWorld,
      });
      const progressing = back.status?.conditions?.find(c => c.type === 'Progressing');
      assert.equal(progressing?.reason, 'Reconciled', JSON.stringify(progressing));
    } finally {
      etcd.close();
    }
  });
});
