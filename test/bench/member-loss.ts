// Benchmark (not a test): how long etcdfn takes from losing a member's data to a cluster at full
// size again, per storage medium, on the sandbox with real etcd 3.5 (no chaos).
//
//   npm run bench -- member-loss              (BENCH_MEMBER_LOSS_RUNS=7 for seven rounds; at least 5)
//
// One 3-member cluster per medium. Each round, with the cluster at full size and settled:
//   - Memory: a follower's Pod is deleted (grace 0), its data with it;
//   - PVC: a follower's Pod and its PVC are deleted (grace 0): "PVC deleted with its Pod".
// The clock runs from the fault to the first read (every 100 ms) where the cluster's status says
// full size again: readyMembers = 3, no replacement in progress, and the MemberReplacement condition
// Replaced for this round's member. Not timed, then checked against etcd itself: 3 started voters,
// the lost member's ID gone. The figure is reconcile-member noticing (Pod or PVC event), the
// quorum-guarded replacement (claim, removal from etcd, a new learner, its Pod, promotion) and the
// events between them; etcd's own 5 s health interval after a promotion is not in it (each round
// waits SETTLE_MS first).
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { findCondition } from '../../shared/conditions.ts';
import { toHexId } from '../../shared/etcd/ids.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { beforeCreation, converged } from '../support/converge.ts';
import { startFullSandbox } from '../support/sandbox.ts';

export interface MemberLossRow {
  measurement: string;
  median: number;
  min: number;
  max: number;
  unit: string;
  runs: string;
  detail: string;
  /** Every round's seconds, for the summary table (test/bench/summary.ts). */
  samples: number[];
}

const NS = 'default';
const MIN_RUNS = 5;
/** A little more than etcd's HealthInterval (5 s), which a memberAdd after a promotion waits for. */
const SETTLE_MS = 6_000;
const STEP_TIMEOUT_MS = 240_000;
type Cluster = EtcdCluster & KubeObject;
type Medium = 'Memory' | 'PVC';

interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}

export async function benchMemberLoss(
  opts: { runs?: number; progress?: (line: string) => void } = {},
): Promise<MemberLossRow[]> {
  // An explicit count (the quick mode's) wins; otherwise at least MIN_RUNS.
  const runs = opts.runs ?? Math.max(MIN_RUNS, Number(process.env.BENCH_MEMBER_LOSS_RUNS ?? MIN_RUNS));
  const say = opts.progress ?? ((line: string) => console.error(`[member-loss] ${line}`));
  say('starting the sandbox…');
  const sandbox = await startFullSandbox({ chaos: false, tickSeconds: 60, startTimeoutMs: 480_000 });
  const kube = new KubeObjects(sandbox.kc);
  try {
    const rows: MemberLossRow[] = [];
    for (const medium of ['Memory', 'PVC'] as const) {
      const seconds = await rounds(kube, medium, runs, say);
      const sorted = [...seconds].sort((a, b) => a - b);
      rows.push({
        measurement: `member loss → full size (${medium}, 3 members)`,
        median: round(median(sorted)),
        min: round(sorted[0] ?? NaN),
        max: round(sorted.at(-1) ?? NaN),
        unit: 's',
        runs: seconds.map(s => s.toFixed(1)).join(' '),
        samples: seconds,
        detail:
          medium === 'Memory'
            ? 'follower Pod deleted (grace 0); goal ≤ 15 s'
            : 'follower Pod and PVC deleted (grace 0); goal ≤ 15 s',
      });
    }
    return rows;
  } finally {
    await sandbox.stop();
  }
}

async function rounds(
  kube: KubeObjects,
  medium: Medium,
  runs: number,
  say: (line: string) => void,
): Promise<number[]> {
  const name = medium === 'Memory' ? 'loss-mem' : 'loss-pvc';
  const storage = medium === 'Memory' ? { size: '256Mi', medium: 'Memory' } : { size: '1Gi' };
  const created = await kube.create({
    apiVersion: API_VERSION,
    kind: 'EtcdCluster',
    metadata: { name, namespace: NS },
    spec: { replicas: 3, version: '3.5.16', storage },
  });
  assert.equal(created.kind, 'created');
  const ref = { kube, namespace: NS, name };
  await converged(ref, { replicas: 3, since: beforeCreation(), timeoutMs: STEP_TIMEOUT_MS });
  const seconds: number[] = [];
  for (let round = 1; round <= runs; round++) {
    await sleep(SETTLE_MS);
    const before = await etcdIds(kube, name);
    const victim = [...before.ids.keys()].sort().find(n => n !== before.leader);
    assert.ok(victim, 'a follower to lose');
    const oldID = before.ids.get(victim);
    const started = performance.now();
    await kube.delete(
      { apiVersion: 'v1', kind: 'Pod', namespace: NS, name: victim },
      { gracePeriodSeconds: 0 },
    );
    if (medium === 'PVC') {
      await kube.delete({
        apiVersion: 'v1',
        kind: 'PersistentVolumeClaim',
        namespace: NS,
        name: `data-${victim}`,
      });
    }
    await fullSizeAgain(kube, name, victim);
    const took = (performance.now() - started) / 1000;
    // Not timed: etcd agrees.
    const after = await etcdIds(kube, name);
    assert.equal(after.ids.size, 3, `3 members in etcd after round ${round}`);
    assert.ok(![...after.ids.values()].includes(oldID ?? ''), `the lost member ID ${oldID} is gone`);
    seconds.push(took);
    say(`${medium} round ${round}/${runs}: ${victim} (${oldID}) lost → full size in ${took.toFixed(1)} s`);
  }
  await kube.delete({ apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name });
  return seconds;
}

/** The cluster's own status says full size again, with this round's member replaced. */
async function fullSizeAgain(kube: KubeObjects, name: string, victim: string): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const read = await kube.get<Cluster>({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      namespace: NS,
      name,
    });
    const status = read.kind === 'found' ? read.object.status : undefined;
    const replaced = findCondition(status?.conditions, 'MemberReplacement');
    if (
      status?.readyMembers === 3 &&
      !status.replacement &&
      replaced?.reason === 'Replaced' &&
      new RegExp(`replaced member ${victim}[ ,]`).test(replaced.message)
    )
      return;
    if (Date.now() > deadline)
      throw new Error(
        `${name}: not at full size ${STEP_TIMEOUT_MS} ms after losing ${victim}: ${JSON.stringify(status)}`,
      );
    await sleep(100);
  }
}

/** etcd's members by name → hex ID, and the leader's name, through the ready Pods. */
async function etcdIds(
  kube: KubeObjects,
  name: string,
): Promise<{ ids: Map<string, string>; leader: string }> {
  const pods = await kube.list<PodLike>('v1', 'Pod', NS, `etcdfn.io/cluster=${name}`);
  const hosts = pods
    .filter(p => p.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True'))
    .map(p => `http://${p.status?.podIP}:2379`);
  const client = new Etcd3({ hosts, dialTimeout: 2000 });
  try {
    const list = await client.cluster.memberList({ linearizable: true });
    const status = await client.maintenance.status();
    const ids = new Map(list.members.filter(m => m.name !== '').map(m => [m.name, toHexId(m.ID)]));
    const leader = [...ids].find(([, id]) => id === toHexId(status.leader))?.[0] ?? '';
    return { ids, leader };
  } finally {
    client.close();
  }
}

function median(sorted: number[]): number {
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? 0) + (sorted[mid] ?? 0)) / 2;
}

const round = (n: number): number => Math.round(n * 10) / 10;
