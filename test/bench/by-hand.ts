// The etcd clusters the lifecycle benchmark times by hand, in the same run as the operator, with the
// same etcd release as the Pods (POD_VERSION: the release an EtcdCluster runs when it names none), the
// Pods' raft timings (etcd's defaults), fsync and flags, so a ratio compares the operator with etcd,
// not two configurations. The release matters: etcd's strict reconfiguration check lets a memberAdd
// through once every voter (3.5.16) or, from later 3.5 patches and in 3.6, a quorum of voters
// counting the new member (3.5.35, 3.6.16) has been connected 5 s, so on 3.6 a fifth member is added
// at once after the fourth's promotion and on 3.5.16 it waits:
//   - a static --initial-cluster of N members started at once (what etcd can do for an empty cluster);
//   - the learner sequence: a seed started new, then each further member memberAdd-ed as a learner
//     (retrying "unhealthy cluster" until etcd's strict reconfiguration check, 5 s of connection to
//     every voter, lets it through), started existing, promoted as soon as etcd calls it in sync;
//   - the remove sequence: memberRemove of a member, then its process stopped, one at a time.
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_ETCD_VERSION } from '../../shared/api/defaults.ts';
import { etcdMinor, VERSION_FLAGS } from '../../shared/builders/etcd-flags.ts';
import type { EtcdAdapter, EtcdMember } from '../../shared/etcd/index.ts';
import { etcdRelease } from '../support/etcd-binaries.ts';
import { EtcdTestCluster, probeStatus, type RaftTimings } from '../support/etcd-process.ts';

/**
 * The etcd release of the benchmark's EtcdClusters (sandbox-cluster.ts) and of its clusters by hand:
 * what a user gets who names no version.
 */
export const POD_VERSION = DEFAULT_ETCD_VERSION;
/** etcd's defaults, which the operator's Pods run with (no --heartbeat-interval/--election-timeout). */
const POD_RAFT: RaftTimings = { heartbeatMs: 100, electionMs: 1000 };
/** The flags of the Pods' release (shared/builders/etcd-flags.ts) that change how a member starts. */
const POD_FLAGS = [...VERSION_FLAGS[etcdMinor(POD_VERSION)].flags];
/** A little more than etcd's HealthInterval (5 s), which a memberAdd after a promotion waits for. */
export const SETTLE_MS = 6_000;
/** How often the by-hand procedure retries memberAdd, promote and remove. */
export const POLL_MS = 50;
export const STEP_TIMEOUT_MS = 180_000;

export const secondsSince = (start: number): number => (performance.now() - start) / 1000;

export interface Baseline {
  /** Where the etcd data dirs go (inside the benchmark's work dir). */
  dir: string;
  /** Clusters running now, for an interrupt to stop. */
  clusters: Set<EtcdTestCluster>;
  etcd: EtcdAdapter;
  say: (line: string) => void;
}

/**
 * EtcdTestCluster.start with the Pods' raft timings, fsync and flags, its temp dir under
 * `baseline.dir`: the constructor makes that dir with os.tmpdir() synchronously, before start()
 * first awaits, so TMPDIR points there for the call only. An interrupted start then leaves nothing
 * behind once the work dir is removed.
 */
export async function startBaseline(baseline: Baseline, names: string[]): Promise<EtcdTestCluster> {
  const saved = process.env.TMPDIR;
  process.env.TMPDIR = baseline.dir;
  let starting: Promise<EtcdTestCluster>;
  try {
    starting = EtcdTestCluster.start({
      minor: '3.5',
      binaries: etcdRelease(POD_VERSION),
      size: names.length,
      names,
      raft: POD_RAFT,
      unsafeNoFsync: false,
      extraArgs: POD_FLAGS,
    });
  } finally {
    if (saved === undefined) delete process.env.TMPDIR;
    else process.env.TMPDIR = saved;
  }
  const cluster = await starting;
  baseline.clusters.add(cluster);
  return cluster;
}

export async function stopBaseline(baseline: Baseline, cluster: EtcdTestCluster): Promise<void> {
  await cluster.cleanup();
  baseline.clusters.delete(cluster);
}

/** memberAdd as a learner, start its process (state existing), promote once in sync. */
async function joinAsLearner(
  cluster: EtcdTestCluster,
  etcd: EtcdAdapter,
  name: string,
  start: number,
  say: (line: string) => void,
): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  const slot = await cluster.reserve(name);
  let added: { id: string; members: EtcdMember[] } | undefined;
  let refused = 0;
  while (!added) {
    const result = await etcd.addLearner(cluster.endpoints, slot.peerURL);
    if (result.kind === 'ok') added = { id: result.member.id, members: result.members };
    else if (result.kind !== 'unhealthy-cluster' || Date.now() > deadline)
      throw new Error(`memberAdd ${name} (learner): ${result.kind}: ${result.message}`);
    else {
      refused++;
      await sleep(POLL_MS);
    }
  }
  const at = () => `+${secondsSince(start).toFixed(2).padStart(6)} s`;
  say(`    ${at()}  ${name} added as a learner (${refused} × unhealthy cluster before)`);
  const { id, members } = added;
  const initialCluster = members.map(m => `${m.id === id ? name : m.name}=${m.peerURLs[0] ?? ''}`).join(',');
  const proc = await cluster.startMember(slot, { state: 'existing', initialCluster, wait: false });
  for (;;) {
    const result = await etcd.promote(cluster.endpoints, id);
    if (result.kind === 'ok' || result.kind === 'not-a-learner') {
      say(`    ${at()}  ${name} promoted`);
      return;
    }
    if (!proc.running) throw new Error(`etcd member ${name} exited:\n${proc.logs()}`);
    const transient = result.kind === 'learner-not-in-sync' || result.kind === 'unavailable';
    if (!transient || Date.now() > deadline)
      throw new Error(`promote ${name}: ${result.kind}: ${result.message}`);
    await sleep(POLL_MS);
  }
}

/** Every running member answers, none is a learner, and all name the same leader. */
export async function allVoters(cluster: EtcdTestCluster, size: number): Promise<void> {
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (;;) {
    const members = cluster.running();
    const statuses = await Promise.all(members.map(m => probeStatus(m.clientURL)));
    const leaders = new Set(statuses.map(s => s?.leader ?? '0'));
    if (
      members.length === size &&
      statuses.every(s => s && !s.isLearner) &&
      leaders.size === 1 &&
      !leaders.has('0')
    )
      return;
    if (Date.now() > deadline) throw new Error(`the ${size} members by hand did not all become voters`);
    await sleep(POLL_MS);
  }
}

/** Seconds until `n` members started at once with a static --initial-cluster agree on a leader. */
export async function staticCluster(baseline: Baseline, n: number): Promise<number> {
  const names = Array.from({ length: n }, (_, i) => `static-${i + 1}`);
  const start = performance.now();
  const cluster = await startBaseline(baseline, names);
  const seconds = secondsSince(start);
  await stopBaseline(baseline, cluster);
  return seconds;
}

/** A seed (hand-1) started new; resolves once it has a leader (itself). */
export async function startSeed(baseline: Baseline): Promise<{ cluster: EtcdTestCluster; seconds: number }> {
  const start = performance.now();
  const cluster = await startBaseline(baseline, ['hand-1']);
  const seconds = secondsSince(start);
  baseline.say(`    +${seconds.toFixed(2).padStart(6)} s  hand-1 (seed) has a leader`);
  return { cluster, seconds };
}

/** Learners hand-(k+1)…hand-n joined one at a time, then seconds until all n are voters. */
export async function growTo(
  baseline: Baseline,
  cluster: EtcdTestCluster,
  n: number,
  start = performance.now(),
): Promise<number> {
  for (let k = cluster.running().length + 1; k <= n; k++)
    await joinAsLearner(cluster, baseline.etcd, `hand-${k}`, start, baseline.say);
  await allVoters(cluster, n);
  return secondsSince(start);
}

/**
 * The hand-run scale-down: the newest members, one at a time, memberRemove-d (retried while etcd
 * refuses it as unsafe) and their process stopped; seconds until the n left agree on a leader.
 */
export async function shrinkTo(baseline: Baseline, cluster: EtcdTestCluster, n: number): Promise<number> {
  const start = performance.now();
  const deadline = Date.now() + STEP_TIMEOUT_MS;
  for (let k = cluster.running().length; k > n; k--) {
    const name = `hand-${k}`;
    const listed = await baseline.etcd.listMembers(cluster.endpoints);
    if (listed.kind !== 'ok') throw new Error(`member list before removing ${name}: ${listed.kind}`);
    const id = listed.members.find(m => m.name === name)?.id;
    if (!id) throw new Error(`${name} is not in etcd's member list`);
    for (;;) {
      const result = await baseline.etcd.remove(cluster.endpoints, id);
      if (result.kind === 'ok' || result.kind === 'member-not-found') break;
      const transient = result.kind === 'unhealthy-cluster' || result.kind === 'unavailable';
      if (!transient || Date.now() > deadline) throw new Error(`remove ${name}: ${result.kind}`);
      await sleep(POLL_MS);
    }
    await cluster.process(name).stop();
    baseline.say(`    +${secondsSince(start).toFixed(2).padStart(6)} s  ${name} removed and stopped`);
  }
  await allVoters(cluster, n);
  return secondsSince(start);
}
