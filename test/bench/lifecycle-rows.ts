// The lifecycle benchmark's table (test/bench/lifecycle.ts measures, this lays out): each figure's
// median over the rounds with every round's value, the hand-run baselines, the ratios and the aims,
// the scale's step-by-step timeline and the no-op reconcile's requests.
import { LIFECYCLE_ROW } from './lifecycle-figures.ts';
import { POLL_MS, SETTLE_MS } from './by-hand.ts';
import { GROWTH_STEPS } from './growth-timeline.ts';

export interface LifecycleRow {
  measurement: string;
  /** The median over the rounds. */
  value: number;
  unit: string;
  /** Every round's value, when there was more than one. */
  runs: string;
  detail: string;
  /** Every round's value, for the summary table (test/bench/summary.ts). */
  samples: number[];
}

export interface NoopCount {
  reads: number;
  writes: number;
  requests: string;
  etcd: string;
  etcdCalls: number;
  outcome: string;
}

export interface RoundResult {
  /** By hand, learner sequence: the seed alone (1 voter), seed → 3, 3 → 5, a fresh seed → 5. */
  hand1?: number;
  hand3?: number;
  hand5?: number;
  handFresh5?: number;
  /** By hand: memberRemove + process stop, 5 → 3. */
  handDown3?: number;
  /** By hand, static --initial-cluster of 1, 3 and 5. */
  static1?: number;
  static3?: number;
  static5?: number;
  /** The operator: apply → 1/1, 3/3, 5/5; scale 3 → 5; scale 5 → 3. */
  op1?: number;
  op3?: number;
  op5?: number;
  opFresh5?: number;
  opDown3?: number;
  /** `kubectl scale` changing nothing: the CLI's own time, left out of op5 and opDown3. */
  kubectlScale?: number;
  etcdAfter?: string;
  cold?: NoopCount;
  warm?: NoopCount;
  /** Where the scale 3 → 5 spent its time, step by step (growth-timeline.ts). */
  growth?: Map<string, number>;
  /** Apply → 3/3: when every member had reached each step, in seconds from the apply. */
  applySteps?: Map<string, number>;
  /** Apply → 3/3: seconds in which some function handled an event of the cluster, and how many. */
  applyBusy?: number;
  applyEvents?: number;
}

export const fmt = (n: number | undefined, digits = 2): string => (n === undefined ? '-' : n.toFixed(digits));

function median(values: number[]): number {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 ? (sorted[mid] ?? NaN) : ((sorted[mid - 1] ?? NaN) + (sorted[mid] ?? NaN)) / 2;
}

export function toRows(rounds: RoundResult[]): LifecycleRow[] {
  const rows: LifecycleRow[] = [];
  const add = (
    measurement: string,
    unit: string,
    pick: (r: RoundResult) => number | undefined,
    detail: string,
    digits = 2,
  ): void => {
    const values = rounds.map(pick).filter((v): v is number => v !== undefined && Number.isFinite(v));
    if (values.length === 0) return;
    rows.push({
      measurement,
      value: Number(median(values).toFixed(digits)),
      unit,
      runs: rounds.length > 1 ? rounds.map(r => fmt(pick(r), digits)).join(' / ') : '',
      detail,
      samples: values,
    });
  };
  const ratio = (a: number | undefined, b: number | undefined) =>
    a === undefined || b === undefined || b === 0 ? undefined : a / b;
  const first = rounds.find(r => r.warm);
  const settle = `scale issued ${SETTLE_MS / 1000} s after the previous step (etcd's 5 s health interval)`;

  const learnerWay = `seed new; memberAdd learner (retry unhealthy-cluster), start existing, promote; retries every ${POLL_MS} ms`;
  add(
    LIFECYCLE_ROW.apply1,
    's',
    r => r.op1,
    'fresh EtcdCluster 3.5.16, until a watch sees status ready n/n, Running',
  );
  add(
    LIFECYCLE_ROW.apply3,
    's',
    r => r.op3,
    'fresh EtcdCluster 3.5.16, until a watch sees status ready n/n, Running',
  );
  add(
    LIFECYCLE_ROW.apply5,
    's',
    r => r.opFresh5,
    'fresh EtcdCluster 3.5.16, until a watch sees status ready n/n, Running',
  );
  add(
    LIFECYCLE_ROW.scaleUp5,
    's',
    r => r.op5,
    `${settle}; etcd afterwards: ${rounds.map(r => r.etcdAfter ?? '-').join(' / ')}`,
  );
  add(LIFECYCLE_ROW.scaleDown3, 's', r => r.opDown3, `${settle}; status lists 3 etcd members, 3 Pods left`);
  add(
    LIFECYCLE_ROW.kubectlScale,
    's',
    r => r.kubectlScale,
    'process start, kubeconfig, cached discovery, GET and PATCH of the scale subresource; not in the scale figures, as the hand-run sequences are timed from their first etcd call',
  );
  add(LIFECYCLE_ROW.learners1, 's', r => r.hand1, 'the seed alone, started new');
  add(LIFECYCLE_ROW.learners3, 's', r => r.hand3, learnerWay);
  add(LIFECYCLE_ROW.learners5, 's', r => r.handFresh5, `a fresh seed; ${learnerWay}`);
  add(LIFECYCLE_ROW.learnersUp5, 's', r => r.hand5, settle);
  add(
    LIFECYCLE_ROW.removeDown3,
    's',
    r => r.handDown3,
    `${settle}; newest first, retries every ${POLL_MS} ms`,
  );
  add(LIFECYCLE_ROW.static1, 's', r => r.static1, 'started new, alone');
  add(LIFECYCLE_ROW.static3, 's', r => r.static3, 'all 3 started at once');
  add(LIFECYCLE_ROW.static5, 's', r => r.static5, 'all 5 started at once');
  for (const step of GROWTH_STEPS)
    add(
      `apply → 3/3, every member: ${step}`,
      's',
      r => r.applySteps?.get(step),
      'from the apply; the latest member, first seen by polling (≤ 100 ms late)',
    );
  add(
    'apply → 3/3, some function handling an event of the cluster',
    's',
    r => r.applyBusy,
    "the union of the functions' own event times; the rest is waiting (kubelet, probes, delivery)",
  );
  add('apply → 3/3, events handled', 'events', r => r.applyEvents, 'done or sent back, every function');
  const steps = [...new Set(rounds.flatMap(r => [...(r.growth?.keys() ?? [])]))];
  for (const step of steps)
    add(`scale 3 → 5, ${step}`, 's', r => r.growth?.get(step), 'first seen by polling (≤ 100 ms late)');
  add('ratio 1/1: operator / static --initial-cluster', '×', r => ratio(r.op1, r.static1), 'no aim');
  add('ratio 3/3: operator / static --initial-cluster', '×', r => ratio(r.op3, r.static3), 'aim ≤ 4×');
  add('ratio 5/5: operator / static --initial-cluster', '×', r => ratio(r.opFresh5, r.static5), 'aim ≤ 4×');
  add('ratio 3/3: operator / learner sequence', '×', r => ratio(r.op3, r.hand3), 'for reference');
  add('ratio 5/5: operator / learner sequence', '×', r => ratio(r.opFresh5, r.handFresh5), 'for reference');
  add('ratio scale 3 → 5: operator / by hand', '×', r => ratio(r.op5, r.hand5), 'aim ≤ 1.1×');
  add('ratio scale 5 → 3: operator / by hand', '×', r => ratio(r.opDown3, r.handDown3), 'no aim');
  add(
    'no-op reconcile, warm instance: API reads',
    'requests',
    r => r.warm?.reads,
    first?.warm ? `${first.warm.requests}; ${first.warm.outcome}` : '',
    0,
  );
  add('no-op reconcile, warm instance: API writes', 'requests', r => r.warm?.writes, 'aim: 0', 0);
  add(
    'no-op reconcile, cold instance: API reads',
    'requests',
    r => r.cold?.reads,
    first?.cold ? `${first.cold.requests} (a fresh client's discovery included)` : '',
    0,
  );
  add('no-op reconcile, cold instance: API writes', 'requests', r => r.cold?.writes, 'aim: 0', 0);
  add(
    'no-op reconcile, warm instance: etcd adapter calls',
    'calls',
    r => r.warm?.etcdCalls,
    first?.warm?.etcd ?? '',
    0,
  );
  return rows;
}
