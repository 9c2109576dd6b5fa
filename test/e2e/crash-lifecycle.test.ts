// Crash tests on the sandbox with real etcd 3.5.16: for every side effect of bootstrap, scale-up,
// scale-down and pause/resume, the function that carried it out is killed (SIGKILL, through the crash
// points of shared/runtime/crash.ts) just after it, and a new instance of the function is started on
// the same port. Only normal events follow (the bridge's delivery retries, the tick): the cluster
// must still reach its target, with etcd's member list equal to the EtcdMember set, no learner, no
// duplicate member, no Pod or PVC without its member, no operation left in status, and the keys
// written at the start all still there.
//
// One armed point at a time; one cluster walked through 1 → 2 → 1 cycles for the scale points, and a
// fresh single-member cluster per bootstrap point. The bridge delivers with chaos (duplicates,
// reordering, delays, parallel delivery), so a crash also kills whatever else was in flight.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { createEtcdAdapter } from '../../shared/etcd/adapter.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { CRASH_POINTS, type CrashPoint } from '../../shared/runtime/crash.ts';
import { CrashPoints } from '../support/crash-points.ts';
import { beforeCreation, converged as convergedAfter, mark, type Mark } from '../support/converge.ts';
import { kubectl } from '../support/kubectl.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const MAIN = 'crash';
const KEYS = 200;
const STEP_TIMEOUT = 90_000;
type Cluster = EtcdCluster & KubeObject;
type Member = EtcdMember & KubeObject;
interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}
interface PdbLike extends KubeObject {
  spec?: { minAvailable?: number };
}

/** Each bootstrap point is crashed through on a new single-member cluster. */
const BOOTSTRAP: CrashPoint[] = [
  'cluster:service-ensured',
  'cluster:status-written',
  'cluster:claimed',
  'cluster:member-created',
  'cluster:operation-cleared',
  'member:status-written',
  'member:pvc-created',
  'member:pod-created',
  'cluster:cluster-id-latched',
  'cluster:pdb-ensured',
];

type Drive = 'scale' | 'lead-then-scale' | 'delete-leading-member';
interface Step {
  phase: string;
  point?: CrashPoint;
  replicas: number;
  drive: Drive;
}
const up = (point: CrashPoint): Step => ({ phase: 'scale-up 1 → 2', point, replicas: 2, drive: 'scale' });
const down = (point?: CrashPoint, drive: Drive = 'scale'): Step => ({
  phase: drive === 'lead-then-scale' ? 'scale-down 2 → 1 of the leader' : 'scale-down 2 → 1',
  ...(point && { point }),
  replicas: 1,
  drive,
});

/** The main cluster's walk: every scale-up point on a 1 → 2, every scale-down point on a 2 → 1. */
const SCALING: Step[] = [
  up('cluster:claimed'),
  down('cluster:member-deleted'),
  up('cluster:member-created'),
  down('finalize:removed-from-etcd'),
  up('cluster:learner-added'),
  down('finalize:finalizer-removed'),
  up('cluster:member-wired'),
  down('cluster:leader-moved', 'lead-then-scale'),
  up('cluster:operation-cleared'),
  down('cluster:pdb-ensured'),
  up('member:pvc-created'),
  down('cluster:status-written'),
  up('member:pod-created'),
  {
    phase: 'replacing a deleted leading member (2 → 2)',
    point: 'finalize:leader-moved',
    replicas: 2,
    drive: 'delete-leading-member',
  },
  down(),
  up('cluster:promoted'),
  down(),
  up('cluster:member-marked-voter'),
  down(),
  up('member:pod-labelled'),
  down(),
  up('member:status-written'),
  down(),
  up('cluster:pdb-ensured'),
  down(),
];

describe('a crash after every side effect converges (etcd 3.5.16, chaos on)', { timeout: 2_400_000 }, () => {
  let sandbox: FullSandbox;
  let kube: KubeObjects;
  let crashPoints: CrashPoints;
  const etcd = createEtcdAdapter({ timeoutMs: 3000 });
  const covered = new Set<CrashPoint>();

  before(async () => {
    crashPoints = CrashPoints.inTempDir('etcdfn-crash-points-', () => sandbox.restarts());
    sandbox = await startFullSandbox({
      tickSeconds: 5,
      crashDir: crashPoints.dir,
      chaos: true,
      chaosSeed: 3,
    });
    kube = new KubeObjects(sandbox.kc);
  });
  after(async () => {
    await sandbox?.stop();
    crashPoints?.remove();
  });

  const clusterRef = (name: string) => ({
    apiVersion: API_VERSION,
    kind: 'EtcdCluster',
    namespace: NS,
    name,
  });
  const cluster = async (name: string) => {
    const read = await kube.get<Cluster>(clusterRef(name));
    assert.equal(read.kind, 'found');
    return (read as { object: Cluster }).object;
  };
  const selector = (name: string) => `etcdfn.io/cluster=${name}`;
  const members = (name: string) => kube.list<Member>(API_VERSION, 'EtcdMember', NS, selector(name));
  const pods = (name: string) => kube.list<PodLike>('v1', 'Pod', NS, selector(name));
  const pvcs = (name: string) => kube.list('v1', 'PersistentVolumeClaim', NS, selector(name));
  const endpoints = async (name: string) =>
    (await pods(name))
      .filter(p => p.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True'))
      .map(p => `http://${p.status?.podIP}:2379`);

  async function withEtcd<T>(name: string, fn: (client: Etcd3) => Promise<T>): Promise<T> {
    const hosts = await endpoints(name);
    assert.ok(hosts.length > 0, 'no ready member to talk to');
    const client = new Etcd3({ hosts, dialTimeout: 2000 });
    try {
      return await fn(client);
    } finally {
      client.close();
    }
  }

  const describeWorld = (name: string) => async () => {
    const c = await cluster(name).catch(() => undefined);
    const m = await members(name).catch(() => []);
    const p = await pods(name).catch(() => []);
    const fnLog = (() => {
      try {
        return readFileSync(join(sandbox.dir, 'logs', 'functions.log'), 'utf8').slice(-4000);
      } catch {
        return '';
      }
    })();
    return [
      `status: ${JSON.stringify(c?.status)}`,
      `members: ${m.map(x => `${x.metadata.name}${x.spec.dormant ? '(dormant)' : ''}${x.metadata.deletionTimestamp ? '(deleting)' : ''} ${JSON.stringify(x.status?.conditions?.map(y => y.message))}`).join(', ')}`,
      `pods: ${p.map(x => x.metadata.name).join(', ')}`,
      `restarts: ${JSON.stringify(sandbox.restarts())}`,
      `functions.log (tail):\n${fnLog}`,
    ].join('\n');
  };

  /**
   * The cluster reached `replicas` on evidence from after `since` (test/support/converge.ts: status
   * written since, Pods Ready, each member healthy on its own endpoint, etcd's members exactly the
   * running EtcdMembers by name and ID with no learner), and besides: every Pod and PVC belongs to an
   * EtcdMember, every Pod is labelled a voter, every member's status says voter, the PDB matches.
   */
  async function converged(
    name: string,
    replicas: number,
    since: Mark,
    version?: string,
    statusWritten = true,
  ): Promise<Cluster> {
    return convergedAfter(
      { kube, namespace: NS, name },
      {
        replicas,
        since,
        ...(version && { version }),
        statusWritten,
        timeoutMs: STEP_TIMEOUT,
        describe: describeWorld(name),
        also: async () => {
          const all = await members(name);
          const running = all.filter(m => !m.spec.dormant);
          const memberNames = new Set(all.map(m => m.metadata.name));
          const podList = await pods(name);
          const stray = podList.find(p => !running.some(m => m.metadata.name === p.metadata.name));
          if (stray) return `Pod ${stray.metadata.name} has no running EtcdMember`;
          const pvcList = await pvcs(name);
          const orphan = pvcList.find(p => !memberNames.has((p.metadata.name ?? '').replace(/^data-/, '')));
          if (orphan) return `PVC ${orphan.metadata.name} has no EtcdMember`;
          const pdb = await kube.get<PdbLike>({
            apiVersion: 'policy/v1',
            kind: 'PodDisruptionBudget',
            namespace: NS,
            name,
          });
          if (replicas === 0) return pdb.kind === 'not-found' ? undefined : 'a PDB is left while paused';
          if (podList.length !== replicas) return `${podList.length} Pods`;
          if (podList.some(p => p.metadata.labels?.['etcdfn.io/role'] !== 'voter'))
            return 'a Pod not labelled voter';
          if (pdb.kind !== 'found' || pdb.object.spec?.minAvailable !== Math.floor(replicas / 2) + 1)
            return 'the PDB does not match the voters';
          if (running.some(m => m.status?.isVoter !== true)) return 'an EtcdMember not marked voter';
          return undefined;
        },
      },
    );
  }

  /** The mark of a cluster, or of one about to be created. */
  const markOf = (name: string): Promise<Mark> =>
    mark({ kube, namespace: NS, name }).catch(() => beforeCreation());

  /**
   * Arms `point`, drives the scenario, and waits until the crash really happened. Returns the mark
   * taken before the drive: convergence must be shown on evidence from after it.
   */
  async function crashingAt(
    point: CrashPoint | undefined,
    drive: () => Promise<void>,
    name = MAIN,
  ): Promise<Mark> {
    const since = await markOf(name);
    if (!point) {
      await drive();
      return since;
    }
    await crashPoints.crashThrough(point, drive, { timeoutMs: STEP_TIMEOUT, describe: describeWorld(name) });
    covered.add(point);
    return since;
  }

  async function create(name: string, replicas: number, medium = '', version = '3.5.16'): Promise<void> {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name, namespace: NS },
      spec: { replicas, version, storage: { size: medium ? '256Mi' : '1Gi', medium } },
    });
    assert.equal(created.kind, 'created');
  }

  async function scale(name: string, replicas: number): Promise<void> {
    await kubectl(sandbox.kubeconfig, 'scale', 'etcdcluster', name, `--replicas=${replicas}`, '-n', NS);
  }

  async function keysIntact(): Promise<void> {
    const count = await withEtcd(MAIN, client => client.getAll().prefix('crash/').count());
    assert.equal(count, KEYS, 'every key written at the start is still there');
    assert.equal(await withEtcd(MAIN, client => client.get('crash/0123').string()), 'value-123');
  }

  /** The newest member of the main cluster (dormant or not), and its etcd ID. */
  async function newest(): Promise<{ name: string; id: string }> {
    const running = (await members(MAIN)).filter(m => !m.metadata.deletionTimestamp);
    const ordinal = (m: Member) => Number(/-(\d+)$/.exec(m.metadata.name ?? '')?.[1] ?? -1);
    const [last] = running.sort((a, b) => ordinal(b) - ordinal(a));
    assert.ok(last?.status?.memberID, 'the newest member has an etcd ID');
    return { name: last.metadata.name ?? '', id: last.status.memberID };
  }

  async function makeLeader(id: string): Promise<void> {
    await waitFor(`${id} leads`, async () => {
      const moved = await etcd.moveLeader(await endpoints(MAIN), id);
      return moved.kind === 'ok';
    });
  }

  async function driveStep(step: Step): Promise<void> {
    if (step.drive === 'scale') return scale(MAIN, step.replicas);
    const victim = await newest();
    await makeLeader(victim.id);
    if (step.drive === 'lead-then-scale') return scale(MAIN, step.replicas);
    const deleted = await kube.delete({
      apiVersion: API_VERSION,
      kind: 'EtcdMember',
      namespace: NS,
      name: victim.name,
    });
    assert.notEqual(deleted.kind, 'not-found');
  }

  BOOTSTRAP.forEach((point, i) => {
    it(`bootstrap: crash after ${point}`, async () => {
      // The first bootstrap makes the cluster the scaling steps walk on; the others are thrown away.
      const name = i === 0 ? MAIN : `boot-${i}`;
      const since = await crashingAt(point, () => create(name, 1), name);
      const c = await converged(name, 1, since);
      assert.match(c.status?.clusterID ?? '', /^[0-9a-f]{16}$/);
      if (name === MAIN) {
        await withEtcd(MAIN, async client => {
          for (let n = 0; n < KEYS; n++)
            await client
              .put(`crash/${String(n).padStart(4, '0')}`)
              .value(`value-${n}`)
              .exec();
        });
        await keysIntact();
      } else {
        assert.equal((await kube.delete(clusterRef(name))).kind, 'deleted');
      }
    });
  });

  it('the bootstrap clusters are gone before the scaling steps', async () => {
    await waitFor('the throw-away clusters gone', async () => {
      const left = await kube.list('v1', 'Pod', NS);
      const members = await kube.list(API_VERSION, 'EtcdMember', NS);
      return [...left, ...members].every(o => o.metadata.labels?.['etcdfn.io/cluster'] === MAIN);
    });
  });

  for (const step of SCALING) {
    it(`${step.phase}: ${step.point ? `crash after ${step.point}` : 'no crash'}`, async () => {
      const before = (await cluster(MAIN)).status?.clusterID;
      const since = await crashingAt(step.point, () => driveStep(step));
      const c = await converged(MAIN, step.replicas, since);
      assert.equal(c.status?.clusterID, before, 'the same etcd cluster');
      await keysIntact();
    });
  }

  it('orphan: crash after cluster:orphan-removed (an etcd member no EtcdMember stands for)', async () => {
    const since = await crashingAt('cluster:orphan-removed', async () => {
      const added = await etcd.addLearner(await endpoints(MAIN), 'http://orphan.crash.default.svc:2380');
      assert.equal(added.kind, 'ok');
    });
    // Removing an orphan changes nothing in status: the evidence is etcd's own list, read afresh.
    await converged(MAIN, 1, since, undefined, false);
    await keysIntact();
  });

  let pausedID = '';
  const pauseSteps: { what: string; point: CrashPoint; replicas: number }[] = [
    { what: 'pause 1 → 0', point: 'cluster:dormant-set', replicas: 0 },
    { what: 'resume 0 → 1', point: 'cluster:dormant-set', replicas: 1 },
    { what: 'pause 1 → 0', point: 'member:pod-deleted', replicas: 0 },
    { what: 'resume 0 → 1', point: 'member:pod-created', replicas: 1 },
  ];
  for (const step of pauseSteps) {
    it(`${step.what}: crash after ${step.point}`, async () => {
      const id = (await newest()).id;
      if (step.replicas === 0) pausedID = id;
      const before = (await cluster(MAIN)).status?.clusterID;
      const since = await crashingAt(step.point, () => scale(MAIN, step.replicas));
      const c = await converged(MAIN, step.replicas, since);
      assert.equal(c.status?.clusterID, before, 'the same etcd cluster');
      if (step.replicas === 0) {
        assert.equal((await pvcs(MAIN)).length, 1, 'the paused member keeps its PVC');
        return;
      }
      assert.equal((await newest()).id, pausedID, 'resumed with the same member ID');
      await keysIntact();
    });
  }

  it('a Memory-medium member whose Pod is gone is replaced (quorum-guarded, as a PVC member): crash after cluster:member-deleted', async () => {
    const name = 'mem';
    await create(name, 3, 'Memory');
    await converged(name, 3, beforeCreation());
    const lost = `${name}-2`;
    const since = await crashingAt(
      'cluster:member-deleted',
      async () => {
        const deleted = await kube.delete({ apiVersion: 'v1', kind: 'Pod', namespace: NS, name: lost });
        assert.equal(deleted.kind, 'deleted');
      },
      name,
    );
    await converged(name, 3, since);
    assert.ok(!(await members(name)).some(m => m.metadata.name === lost), `${lost} was replaced`);
    assert.equal((await kube.delete(clusterRef(name))).kind, 'deleted');
  });

  const upgradeSteps: { point: CrashPoint; name: string }[] = [
    { point: 'cluster:member-upgraded', name: 'upg-a' },
    { point: 'member:pod-deleted', name: 'upg-b' },
  ];
  for (const { point, name } of upgradeSteps) {
    it(`upgrade 3.5.16 → 3.5.17 of 3 members: crash after ${point}`, async () => {
      await create(name, 3, '', '3.5.16');
      const ids = new Map(
        (await converged(name, 3, beforeCreation())).status?.members?.map(m => [m.name, m.id]),
      );
      const since = await crashingAt(
        point,
        () =>
          kubectl(
            sandbox.kubeconfig,
            'patch',
            'etcdcluster',
            name,
            '-n',
            NS,
            '--type=merge',
            '-p',
            '{"spec":{"version":"3.5.17"}}',
          ).then(() => undefined),
        name,
      );
      const c = await converged(name, 3, since, '3.5.17');
      assert.deepEqual(new Map(c.status?.members?.map(m => [m.name, m.id])), ids, 'same members, same IDs');
      for (const m of await members(name)) assert.equal(m.spec.version, '3.5.17');
      assert.equal((await kube.delete(clusterRef(name))).kind, 'deleted');
    });
  }

  it('every crash point of the functions was crashed through', () => {
    const missing = CRASH_POINTS.filter(p => !covered.has(p));
    assert.deepEqual(missing, []);
  });
});
