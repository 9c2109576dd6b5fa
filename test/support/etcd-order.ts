// What each etcd member says about itself, sampled in a tight loop per member on its own endpoint
// (its ID, its leader, its version, whether it is a learner, its local member list, or that it does
// not answer), keeping only the changes, each with a sequence number: an order of events seen from
// etcd, with no clock in it. The Pods are followed through a watch only to know where each member
// answers (a replaced Pod gets a new IP). `replay` then walks the changes in order to find when each
// member was first touched and to check quorum at every step.
import { setTimeout as sleep } from 'node:timers/promises';
import { CoreV1Api, Watch, type KubeConfig } from '@kubernetes/client-node';
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';
import { toHexId } from '../../shared/etcd/ids.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';

export interface Seen {
  seq: number;
  member: string;
  answers: boolean;
  id?: string;
  leader?: string;
  /** The raft term the member is in: a leader change (a transfer or an election) always raises it. */
  term?: number;
  version?: string;
  learner?: boolean;
  /** IDs of the voters in this member's own (serializable) member list. */
  voters?: string[];
  error?: string;
}

interface PodLike extends KubeObject {
  status?: { podIP?: string };
}

const key = (s: Omit<Seen, 'seq' | 'member'>) =>
  s.answers ? JSON.stringify([s.id, s.leader, s.term, s.version, s.learner, s.voters]) : 'down';

export interface EtcdSampler {
  /** Every change seen so far, in order. */
  log(): Seen[];
  /** The sequence number the next change will get (a mark in the log). */
  next(): number;
  /** Where a member answers now (its Pod's IP). */
  ipOf(member: string): string | undefined;
  stop(): Promise<void>;
}

export async function sampleMembers(
  kc: KubeConfig,
  namespace: string,
  cluster: string,
): Promise<EtcdSampler> {
  const labelSelector = `etcdfn.io/cluster=${cluster}`;
  const ips = new Map<string, string>();
  const last = new Map<string, string>();
  const changes: Seen[] = [];
  const loops: Promise<void>[] = [];
  let stopped = false;
  let failure: unknown;

  const record = (member: string, s: Omit<Seen, 'seq' | 'member'>) => {
    const k = key(s);
    if (last.get(member) === k) return;
    last.set(member, k);
    changes.push({ seq: changes.length, member, ...s });
  };

  async function loop(member: string): Promise<void> {
    let client: Etcd3 | undefined;
    let clientIp: string | undefined;
    while (!stopped) {
      const ip = ips.get(member);
      if (ip !== clientIp) {
        client?.close();
        clientIp = ip;
        client = ip
          ? new Etcd3({
              hosts: `http://${ip}:2379`,
              dialTimeout: 2000,
              faultHandling: { global: noop, host: () => noop },
            })
          : undefined;
      }
      if (!client) {
        record(member, { answers: false, error: 'no Pod' });
      } else {
        try {
          const st = await client.maintenance.status();
          const list = await client.cluster.memberList({ linearizable: false });
          record(member, {
            answers: true,
            id: toHexId(st.header.member_id),
            leader: st.leader === '0' ? undefined : toHexId(st.leader),
            term: Number(st.raftTerm),
            version: st.version,
            learner: (st as { isLearner?: boolean }).isLearner === true,
            voters: list.members
              .filter(m => !m.isLearner)
              .map(m => toHexId(m.ID))
              .sort(),
          });
        } catch (err) {
          if (ips.get(member) === clientIp) record(member, { answers: false, error: (err as Error).message });
        }
      }
      await sleep(10);
    }
    client?.close();
  }

  const seenPod = (pod: PodLike, deleted: boolean) => {
    const name = pod.metadata?.name ?? '';
    if (deleted) ips.delete(name);
    else if (pod.status?.podIP) ips.set(name, pod.status.podIP);
    if (!last.has(name) && !deleted) {
      last.set(name, '');
      loops.push(loop(name));
    }
  };
  const list = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace, labelSelector });
  for (const pod of list.items as PodLike[]) seenPod(pod, false);
  const request = await new Watch(kc).watch(
    `/api/v1/namespaces/${namespace}/pods`,
    { labelSelector, resourceVersion: list.metadata?.resourceVersion },
    (type: string, pod: PodLike) => seenPod(pod, type === 'DELETED'),
    // A watch that ends early may have missed a new Pod IP: that fails the reading.
    (err: unknown) => {
      if (!stopped) failure = err ?? new Error('the Pod watch ended before it was stopped');
    },
  );
  return {
    log: () => {
      if (failure)
        throw new Error(
          `the Pod watch failed: ${failure instanceof Error ? failure.message : JSON.stringify(failure)}`,
        );
      return [...changes];
    },
    next: () => changes.length,
    ipOf: member => ips.get(member),
    stop: async () => {
      stopped = true;
      request.abort();
      await Promise.all(loops);
    },
  };
}

// A member in an election has no leader for a moment yet is up: healthy means it answers as a voter.
const healthy = (s: Seen | undefined): s is Seen => !!s?.answers && !s.learner;

export interface Touch {
  member: string;
  seq: number;
  /** The member's own last word before it was touched (answering, not touched yet). */
  lastView?: Seen;
  /**
   * Another member's word, before the touch, that leadership had moved off this member: a leader
   * other than it at a higher term than any term it was seen leading in (by itself or another). It
   * completes the member's own word when its loop missed the moment between the transfer and the
   * stop (a loaded machine); etcd's own transfer on a graceful stop comes after the stopping member
   * has closed its client port, so it cannot stand in for a handover here.
   */
  movedBefore?: Seen;
}

/** Whether leadership had left the touched member before it was touched, and by whose word. */
export function handedOver(touch: Touch): string | undefined {
  const view = touch.lastView;
  if (view?.leader && view.leader !== view.id) return `its own last word (#${view.seq}) names ${view.leader}`;
  const moved = touch.movedBefore;
  if (moved) return `${moved.member} (#${moved.seq}) names leader ${moved.leader} at term ${moved.term}`;
  return undefined;
}

export interface Replay {
  /** Members in the order they were first touched after `from`. */
  touches: Touch[];
  /** The leader just before `from`, as the first healthy member reported it, and who that is. */
  leaderAtStart?: { id: string; member?: string };
  /** Steps after `from` where fewer healthy voters than a quorum answered, with what was seen. */
  quorumLost: string[];
  /** Fewest healthy voters seen at any step after `from`, and the voter count then. */
  fewest: { healthy: number; voters: number };
}

/**
 * Walks the changes in order. A member is touched (once, the first time after `from`) when it
 * stops answering, or answers on another release than `fromVersion`, or is no longer among the
 * voters of the member that leads. At every step the voters are the member list of the member
 * that reports itself leader (the latest such), and as many of them as a quorum must be healthy
 * (answering, not a learner; a member in an election answers without a leader).
 */
export function replay(log: Seen[], from: number, fromVersion?: string): Replay {
  const now = new Map<string, Seen>();
  const lastAnswer = new Map<string, Seen>();
  const touched = new Map<string, Touch>();
  /** Per member ID: the highest term anyone reported it leading in. */
  const ledAt = new Map<string, number>();
  /** The latest word naming each leader ID at its highest term (for movedBefore). */
  const leaderSeen: Seen[] = [];
  const result: Replay = { touches: [], quorumLost: [], fewest: { healthy: Infinity, voters: 0 } };
  let voters: string[] = [];
  for (const s of log) {
    if (s.seq >= from && !result.leaderAtStart) {
      // The state just before the first change after `from`.
      const id = [...now.values()].find(x => healthy(x) && x.leader)?.leader;
      if (id) result.leaderAtStart = { id, member: [...now.values()].find(x => x.id === id)?.member };
    }
    now.set(s.member, s);
    if (s.answers && s.id && s.leader === s.id && s.voters) voters = s.voters;
    // Anyone's word that a member leads at a term (its own or a follower's) counts.
    if (s.answers && s.leader && s.term !== undefined)
      ledAt.set(s.leader, Math.max(ledAt.get(s.leader) ?? 0, s.term));
    if (s.answers && s.leader && s.term !== undefined) leaderSeen.push(s);
    if (s.seq < from) {
      if (s.answers) lastAnswer.set(s.member, s);
      continue;
    }
    for (const [member, seen] of now) {
      const id = lastAnswer.get(member)?.id;
      const gone = !seen.answers || (fromVersion !== undefined && seen.version !== fromVersion);
      const removed = id !== undefined && voters.length > 0 && !voters.includes(id);
      if (!touched.has(member) && lastAnswer.has(member) && (gone || removed)) {
        const led = id === undefined ? undefined : ledAt.get(id);
        const movedBefore = leaderSeen.findLast(
          x =>
            x.member !== member &&
            x.seq < s.seq &&
            x.leader !== id &&
            led !== undefined &&
            (x.term ?? 0) > led,
        );
        touched.set(member, {
          member,
          seq: s.seq,
          lastView: lastAnswer.get(member),
          ...(movedBefore && { movedBefore }),
        });
      }
    }
    if (s.answers && !touched.has(s.member)) lastAnswer.set(s.member, s);
    const up = voters.filter(id => [...now.values()].some(x => x.id === id && healthy(x))).length;
    if (up < result.fewest.healthy) result.fewest = { healthy: up, voters: voters.length };
    if (voters.length > 0 && up < Math.floor(voters.length / 2) + 1) {
      result.quorumLost.push(`#${s.seq}: ${up} of ${voters.length} voters healthy`);
    }
  }
  result.touches = [...touched.values()].sort((a, b) => a.seq - b.seq);
  return result;
}

/** The log as lines, for failure messages. */
export const show = (log: Seen[], from = 0): string =>
  log
    .filter(s => s.seq >= from)
    .map(s =>
      s.answers
        ? `#${s.seq} ${s.member} id=${s.id} leader=${s.leader ?? '-'} term=${s.term ?? '-'} v${s.version}${s.learner ? ' learner' : ''} voters=${s.voters?.length}`
        : `#${s.seq} ${s.member} down (${s.error})`,
    )
    .join('\n');
