// Which lifecycle rows become summary figures, against which baseline and with which aim (issue 17):
// apply → N/N Ready for N = 1, 3, 5 against a static --initial-cluster of N by hand and the learner
// sequence by hand; scale 3 → 5 against the learner sequence; scale 5 → 3 against the remove
// sequence. Aims: apply → 3/3 and 5/5 ≤ 4× static by hand, scale 3 → 5 ≤ 1.1× by hand; 1/1 and
// 5 → 3 have none (their ratio is reported). Pure: rows in, figure inputs out.
import { statsOf, type Aim, type FigureInput } from './summary.ts';

/** The lifecycle benchmark's row names (test/bench/lifecycle.ts writes them, this file reads them). */
export const LIFECYCLE_ROW = {
  apply1: 'operator: kubectl apply → 1/1 Ready, Running',
  apply3: 'operator: kubectl apply → 3/3 Ready, Running',
  apply5: 'operator: kubectl apply → 5/5 Ready, Running',
  scaleUp5: 'operator: replicas 3 → 5 written → 5/5 Ready, Running',
  scaleDown3: 'operator: replicas 5 → 3 written → 3/3 Ready, Running, 2 members and Pods gone',
  kubectlScale: 'kubectl scale changing nothing (the CLI’s own time)',
  learners1: 'by hand, learner sequence: seed → 1 voter',
  learners3: 'by hand, learner sequence: seed → 3 voters',
  learners5: 'by hand, learner sequence: seed → 5 voters',
  learnersUp5: 'by hand, learner sequence: 3 → 5 voters',
  removeDown3: 'by hand, remove sequence: 5 → 3 voters',
  static1: 'by hand, static --initial-cluster: 1 member with a leader',
  static3: 'by hand, static --initial-cluster: 3 members with a leader',
  static5: 'by hand, static --initial-cluster: 5 members with a leader',
} as const;

const STATIC = 'static --initial-cluster by hand';
const LEARNERS = 'learner sequence by hand';
const REMOVES = 'remove sequence by hand (member remove + process stop)';
const STATIC_AIM: Aim = { of: 'ratio', op: '<=', limit: 4, text: '≤ 4× static by hand' };
const SCALE_UP_AIM: Aim = { of: 'ratio', op: '<=', limit: 1.1, text: '≤ 1.1× by hand' };

interface Pairing {
  figure: string;
  operator: string;
  baseline: string;
  label: string;
  aim?: Aim;
}

const PAIRINGS: Pairing[] = [
  {
    figure: 'apply → 1/1 Ready',
    operator: LIFECYCLE_ROW.apply1,
    baseline: LIFECYCLE_ROW.static1,
    label: STATIC,
  },
  {
    figure: 'apply → 1/1 Ready',
    operator: LIFECYCLE_ROW.apply1,
    baseline: LIFECYCLE_ROW.learners1,
    label: LEARNERS,
  },
  {
    figure: 'apply → 3/3 Ready',
    operator: LIFECYCLE_ROW.apply3,
    baseline: LIFECYCLE_ROW.static3,
    label: STATIC,
    aim: STATIC_AIM,
  },
  {
    figure: 'apply → 3/3 Ready',
    operator: LIFECYCLE_ROW.apply3,
    baseline: LIFECYCLE_ROW.learners3,
    label: LEARNERS,
  },
  {
    figure: 'apply → 5/5 Ready',
    operator: LIFECYCLE_ROW.apply5,
    baseline: LIFECYCLE_ROW.static5,
    label: STATIC,
    aim: STATIC_AIM,
  },
  {
    figure: 'apply → 5/5 Ready',
    operator: LIFECYCLE_ROW.apply5,
    baseline: LIFECYCLE_ROW.learners5,
    label: LEARNERS,
  },
  {
    figure: 'scale 3 → 5/5 Ready',
    operator: LIFECYCLE_ROW.scaleUp5,
    baseline: LIFECYCLE_ROW.learnersUp5,
    label: LEARNERS,
    aim: SCALE_UP_AIM,
  },
  {
    figure: 'scale 5 → 3/3 Ready',
    operator: LIFECYCLE_ROW.scaleDown3,
    baseline: LIFECYCLE_ROW.removeDown3,
    label: REMOVES,
  },
];

/**
 * One figure per pairing whose operator row has samples. A missing baseline leaves the figure
 * without ratio, so an aim on it shows as NOT met rather than disappearing.
 */
export function lifecycleFigureInputs(rows: { measurement: string; samples: number[] }[]): FigureInput[] {
  const samples = (name: string) => rows.find(r => r.measurement === name)?.samples ?? [];
  const figures: FigureInput[] = [];
  for (const p of PAIRINGS) {
    const operator = samples(p.operator);
    if (operator.length === 0) continue;
    const base = samples(p.baseline);
    figures.push({
      section: 'lifecycle',
      figure: p.figure,
      unit: 's',
      stats: statsOf(operator),
      ...(base.length > 0 ? { baseline: { label: p.label, stats: statsOf(base) } } : {}),
      ...(p.aim ? { aim: p.aim } : {}),
    });
  }
  return figures;
}
