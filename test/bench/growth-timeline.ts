// Where a scale-up's time goes (the lifecycle benchmark's detail): for every member the scale adds,
// when each step of its growth was first seen, in seconds from the scale: EtcdMember created →
// added to etcd as a learner (its --initial-cluster wired) → Pod created → Pod Running (etcd's
// process started) → Pod Ready (readiness probe) → recorded a voter (promoted). Seen by polling the
// API server, so each time is at most one poll late. Pure bookkeeping: the benchmark feeds it lists.
import type { EtcdMember } from '../../shared/api/etcd-member.ts';

export const GROWTH_STEPS = ['member', 'added', 'pod', 'running', 'ready', 'voter'] as const;
export type GrowthStep = (typeof GROWTH_STEPS)[number];

/** The few Pod fields the timeline reads. */
export interface PodSeen {
  metadata?: { name?: string };
  status?: { phase?: string; conditions?: { type?: string; status?: string }[] };
}

export type MemberSteps = Partial<Record<GrowthStep, number>>;

export class GrowthTimeline {
  private readonly before = new Set<string>();
  private readonly seen = new Map<string, MemberSteps>();

  /** Members that exist before the scale: left out of the timeline. */
  existing(members: EtcdMember[]): void {
    for (const m of members) this.before.add(m.metadata.name ?? '');
  }

  /** One poll, `at` seconds after the scale. */
  observe(at: number, members: EtcdMember[], pods: PodSeen[]): void {
    for (const m of members) {
      const name = m.metadata.name ?? '';
      if (this.before.has(name)) continue;
      const steps = this.seen.get(name) ?? {};
      this.seen.set(name, steps);
      const pod = pods.find(p => p.metadata?.name === name);
      const ready = pod?.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True');
      const reached: Record<GrowthStep, boolean> = {
        member: true,
        added: (m.spec.initialCluster ?? '') !== '',
        pod: pod !== undefined,
        running: pod?.status?.phase === 'Running',
        ready: ready === true,
        voter: m.status?.isVoter === true,
      };
      for (const step of GROWTH_STEPS) if (reached[step] && steps[step] === undefined) steps[step] = at;
    }
  }

  /** Each new member (in the order they appeared) with the time each step was first seen. */
  members(): { member: string; steps: MemberSteps }[] {
    return [...this.seen]
      .map(([member, steps]) => ({ member, steps }))
      .sort((a, b) => (a.steps.member ?? 0) - (b.steps.member ?? 0));
  }

  /**
   * When every member had reached each step (the latest member's time), for a cluster applied whole:
   * where an apply's time goes, from the first poll to the last member's promotion.
   */
  allReached(): Map<GrowthStep, number> {
    const out = new Map<GrowthStep, number>();
    const members = this.members();
    for (const step of GROWTH_STEPS) {
      const times = members.map(m => m.steps[step]);
      if (members.length > 0 && times.every(t => t !== undefined)) out.set(step, Math.max(...times));
    }
    return out;
  }

  /**
   * The time between consecutive steps of each new member, and from one member's promotion to the
   * next member's creation, named like "member 2: pod → running" (1-based among the new members).
   */
  gaps(): Map<string, number> {
    const out = new Map<string, number>();
    const members = this.members();
    members.forEach(({ steps }, i) => {
      for (let s = 1; s < GROWTH_STEPS.length; s++) {
        const from = GROWTH_STEPS[s - 1];
        const to = GROWTH_STEPS[s];
        const a = steps[from];
        const b = steps[to];
        if (a !== undefined && b !== undefined) out.set(`new member ${i + 1}: ${from} → ${to}`, b - a);
      }
      const next = members[i + 1]?.steps.member;
      if (steps.voter !== undefined && next !== undefined)
        out.set(`new member ${i + 1} voter → new member ${i + 2} created`, next - steps.voter);
    });
    return out;
  }
}
