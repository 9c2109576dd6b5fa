// Quorum-loss recovery by restore (spec.recovery.policy RestoreLatestSnapshot) on the sandbox, with
// real etcd 3.5.16, the real functions, the event bridge and s3rver on loopback. A 3-member cluster
// with the policy holds keys A, is snapshotted (Complete, Verified), then gets keys B; two of its
// members lose their Pods and volumes at once, for good. Quorum is lost; past the grace etcdfn restores
// the snapshot in place on its own: 3/3 again, keys A on every member, keys B on none, status and an
// Event name the snapshot, its revision and time, and later reconciles restore nothing again. Then a
// second cluster with the policy and no verified snapshot of its own (the first one's does not count)
// loses quorum the same way: it reports RecoveryBlocked, saying what to do, and changes nothing.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { beforeCreation, converged, mark } from '../support/converge.ts';
import { s3rverSecret, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';
import { clusterIdOf, condition, podIPs, type Cluster } from './restore-support.ts';

const NS = 'default';
const NAME = 'rescue';
const BARE = 'bare';
const BUCKET = 'etcd-backups';
const SECRET = 'recovery-s3';
const A = 300;
const B = 100;
const POLICY = { recovery: { policy: 'RestoreLatestSnapshot' } };

type Snapshot = EtcdSnapshot & KubeObject;
type Member = EtcdMember & KubeObject;
interface EventLike extends KubeObject {
  reason?: string;
  /** How many times the same Event was said (etcdfn counts repeats on one Event). */
  count?: number;
  message?: string;
  involvedObject?: { kind?: string; name?: string };
}

describe('quorum-loss recovery by restore (sandbox, etcd 3.5.16, s3rver)', { timeout: 900_000 }, () => {
  let sandbox: FullSandbox;
  let s3: TestS3;
  let kube: KubeObjects;
  const ref = (kind: string, name: string, apiVersion = API_VERSION) => ({
    apiVersion,
    kind,
    namespace: NS,
    name,
  });
  const clusterRef = (name: string) => ({ kube, namespace: NS, name });
  const getCluster = async (name = NAME): Promise<Cluster> => {
    const read = await kube.get<Cluster>(ref('EtcdCluster', name));
    assert.equal(read.kind, 'found');
    return read.object;
  };
  const describeWorld = (name: string) => async () =>
    `cluster: ${JSON.stringify((await getCluster(name)).status)}\n${sandbox.output().slice(-4000)}`;
  const memberNames = async (name: string): Promise<string[]> =>
    (await kube.list<Member>(API_VERSION, 'EtcdMember', NS, `etcdfn.io/cluster=${name}`))
      .map(m => m.metadata.name ?? '')
      .sort();
  /** Every time an Event was said, repeats included. */
  const said = (events: EventLike[]): number => events.reduce((n, e) => n + (e.count ?? 1), 0);
  const clusterEvents = async (name: string, reason: string): Promise<EventLike[]> =>
    (await kube.list<EventLike>('v1', 'Event', NS)).filter(
      e => e.involvedObject?.kind === 'EtcdCluster' && e.involvedObject.name === name && e.reason === reason,
    );

  async function put(ip: string, prefix: string, count: number): Promise<void> {
    const client = new Etcd3({ hosts: `http://${ip}:2379` });
    try {
      for (let n = 0; n < count; n += 50) {
        const ops = [];
        for (let k = n; k < Math.min(count, n + 50); k++)
          ops.push(client.put(`${prefix}${k}`).value(`v${k}`));
        await client
          .if(`${prefix}${n}`, 'Create', '>', -1)
          .then(...ops)
          .commit();
      }
    } finally {
      client.close();
    }
  }

  /** What one member holds itself (serializable reads): the keys under a/ and b/. */
  async function keysOn(ip: string): Promise<{ a: number; b: number }> {
    const client = new Etcd3({ hosts: `http://${ip}:2379` });
    try {
      const a = await client.getAll().prefix('a/').serializable(true).count();
      const b = await client.getAll().prefix('b/').serializable(true).count();
      return { a, b };
    } finally {
      client.close();
    }
  }

  async function create(name: string): Promise<void> {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name, namespace: NS },
      spec: { replicas: 3, version: '3.5.16', ...POLICY },
    });
    assert.equal(created.kind, 'created', JSON.stringify(created));
    await converged(clusterRef(name), {
      replicas: 3,
      since: beforeCreation(),
      timeoutMs: 240_000,
      describe: describeWorld(name),
    });
  }

  /** Two members lose their Pods and volumes at once, for good: no quorum is left. */
  async function loseTwo(name: string): Promise<string[]> {
    const victims = [`${name}-1`, `${name}-2`];
    await Promise.all(
      victims.flatMap(v => [
        kube.delete(ref('PersistentVolumeClaim', `data-${v}`, 'v1')),
        kube.delete(ref('Pod', v, 'v1'), { gracePeriodSeconds: 0 }),
      ]),
    );
    return victims;
  }

  before(async () => {
    // Not 127.0.0.1: a Pod's 127.0.0.1 is the Pod itself on the sandbox (as on a real node).
    s3 = await startS3rver([BUCKET], undefined, '127.0.0.2');
    sandbox = await startFullSandbox({ tickSeconds: 5, startTimeoutMs: 300_000 });
    kube = new KubeObjects(sandbox.kc);
    assert.equal((await kube.create(s3rverSecret(SECRET, NS))).kind, 'created');
  });
  after(async () => {
    await sandbox?.stop();
    await s3?.stop();
  });

  let snapshot: Snapshot;
  let oldClusterId: string;

  it('a 3-member cluster with the policy: keys A, a verified snapshot, then keys B', async () => {
    await create(NAME);
    const [ip] = await podIPs(kube, NS, NAME);
    assert.ok(ip);
    await put(ip, 'a/', A);
    oldClusterId = await clusterIdOf(ip);
    const made = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshot',
      metadata: { name: 'before-loss', namespace: NS },
      spec: {
        clusterRef: { name: NAME },
        destination: {
          s3: {
            endpoint: s3.endpoint,
            bucket: BUCKET,
            key: `${NAME}/`,
            credentialsSecretRef: { name: SECRET },
          },
        },
      },
    });
    assert.equal(made.kind, 'created');
    snapshot = await waitFor(
      'EtcdSnapshot before-loss Complete and Verified',
      async () => {
        const read = await kube.get<Snapshot>(ref('EtcdSnapshot', 'before-loss'));
        const s = read.kind === 'found' ? read.object : undefined;
        if (s?.status?.phase === 'Failed') throw new Error(`snapshot failed: ${JSON.stringify(s.status)}`);
        const verified = s?.status?.conditions?.some(c => c.type === 'Verified' && c.status === 'True');
        return s?.status?.phase === 'Complete' && verified ? s : false;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
    );
    await put(ip, 'b/', B);
    assert.deepEqual(await keysOn(ip), { a: A, b: B });
  });

  it('two members lost for good: QuorumLost names the snapshot, then it is restored in place (keys A back, keys B gone, 3/3)', async t => {
    const since = await mark(clusterRef(NAME));
    const seen: string[] = [];
    const quorumLostMessages = new Set<string>();
    let watching = true;
    const watcher = (async () => {
      while (watching) {
        const c = await getCluster().catch(() => undefined);
        const available = condition(c, 'Available');
        if (available?.reason === 'QuorumLost') quorumLostMessages.add(available.message);
        const r = condition(c, 'Restored');
        const step = `${available?.reason ?? '-'}|${r ? `${r.status}/${r.reason}` : '-'}`;
        if (seen.at(-1) !== step) seen.push(step);
        await new Promise(res => setTimeout(res, 250));
      }
    })();
    const started = Date.now();
    const victims = await loseTwo(NAME);
    let cluster: Cluster;
    try {
      cluster = await converged(clusterRef(NAME), {
        replicas: 3,
        since,
        timeoutMs: 300_000,
        describe: describeWorld(NAME),
        also: async c => {
          const record = c.status?.inPlaceRestore;
          if (!record?.requestID.startsWith('recovery-')) return 'no recovery recorded yet';
          return record.step === 'Done' ? undefined : `recovery at step ${record.step}`;
        },
      });
    } finally {
      watching = false;
      await watcher;
    }
    t.diagnostic(
      `${((Date.now() - started) / 1000).toFixed(1)} s from the loss to 3/3; seen: ${seen.join(' → ')}`,
    );

    // Before the restore started, QuorumLost said what would happen, and when.
    const countdown = [...quorumLostMessages].find(m => m.includes('unless a majority is ready again by'));
    assert.match(
      countdown ?? [...quorumLostMessages].join('\n'),
      /spec.recovery.policy is RestoreLatestSnapshot: unless a majority is ready again by .*, etcdfn restores EtcdSnapshot before-loss \(revision \d+, taken .*\) in place and every write made after it is lost/,
    );
    const record = cluster.status!.inPlaceRestore!;
    const artifact = snapshot.status!.artifact!;
    assert.equal(record.snapshot, 'before-loss');
    assert.equal(record.requestID, `recovery-${cluster.status?.inPlaceRestore?.previousClusterID}`);
    assert.equal(BigInt(`0x${record.previousClusterID}`), BigInt(`0x${oldClusterId}`));
    assert.equal(record.recovery?.policy, 'RestoreLatestSnapshot');
    assert.equal(record.recovery?.revision, artifact.revision);
    assert.equal(record.recovery?.snapshotTime, snapshot.status?.completionTime);
    assert.deepEqual(record.recovery?.dataLost, victims);
    assert.match(
      condition(cluster, 'Restored')?.message ?? '',
      /restored EtcdSnapshot before-loss \(request recovery-[0-9a-f]+\) in place/,
    );
    const [event] = await clusterEvents(NAME, 'QuorumLossRecovery');
    assert.ok(event, 'a QuorumLossRecovery Event');
    assert.match(
      event.message ?? '',
      new RegExp(
        `restoring EtcdSnapshot before-loss \\(revision ${artifact.revision}, taken ${snapshot.status?.completionTime}\\) in place .*every write made after it is lost`,
      ),
    );

    const ips = await podIPs(kube, NS, NAME);
    assert.equal(ips.length, 3);
    const newId = await clusterIdOf(ips[0]);
    assert.notEqual(newId, oldClusterId, 'a new etcd cluster ID');
    for (const ip of ips)
      assert.deepEqual(await keysOn(ip), { a: A, b: 0 }, `member ${ip}: keys A back, keys B gone`);
    assert.deepEqual(await memberNames(NAME), [`${NAME}-3`, `${NAME}-4`, `${NAME}-5`]);
  });

  it('a further reconcile restores nothing again', async () => {
    const before = (await getCluster()).status?.inPlaceRestore;
    const TICK = 'dev.knative.sources.ping';
    const ticks = sandbox.delivered('reconcile-cluster', TICK);
    await waitFor(
      'two resync ticks answered by reconcile-cluster',
      async () => sandbox.delivered('reconcile-cluster', TICK) >= ticks + 2,
      { timeoutMs: 60_000, intervalMs: 500 },
    );
    const cluster = await getCluster();
    assert.deepEqual(cluster.status?.inPlaceRestore, before);
    assert.equal(cluster.status?.ready, '3/3');
    assert.deepEqual(await memberNames(NAME), [`${NAME}-3`, `${NAME}-4`, `${NAME}-5`]);
    assert.equal(said(await clusterEvents(NAME, 'QuorumLossRecovery')), 1);
  });

  it('no verified snapshot of its own: RecoveryBlocked says what to do, and nothing changes', async () => {
    await create(BARE);
    const members = await memberNames(BARE);
    await loseTwo(BARE);
    const blocked = await waitFor(
      `${BARE}: Progressing RecoveryBlocked`,
      async () => {
        const c = await getCluster(BARE);
        return condition(c, 'Progressing')?.reason === 'RecoveryBlocked' ? c : false;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
      describeWorld(BARE),
    );
    assert.match(
      condition(blocked, 'Progressing')?.message ?? '',
      /no verified EtcdSnapshot of this cluster to restore .*so etcdfn changes nothing. What you can do/,
    );
    assert.equal(condition(blocked, 'Available')?.reason, 'QuorumLost');
    assert.match(condition(blocked, 'Available')?.message ?? '', /no verified EtcdSnapshot of this cluster/);
    assert.equal(blocked.status?.inPlaceRestore, undefined);
    assert.deepEqual(await memberNames(BARE), members, 'no member deleted or added');
    // reconcile-cluster writes its Event after the status write that carries the condition.
    const blockedEvents = await waitFor(
      `${BARE}: a RecoveryBlocked Event`,
      async () => {
        const events = await clusterEvents(BARE, 'RecoveryBlocked');
        return said(events) > 0 ? events : false;
      },
      { timeoutMs: 30_000, intervalMs: 500 },
      describeWorld(BARE),
    );
    assert.equal(said(blockedEvents), 1, 'one RecoveryBlocked Event');
    assert.equal(said(await clusterEvents(BARE, 'QuorumLossRecovery')), 0);
  });
});
