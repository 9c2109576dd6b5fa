// Which lifecycle rows become summary figures: each size against both hand-run baselines, the
// scales against the learner and remove sequences, and the aims of issue 17 on the right ones.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { LIFECYCLE_ROW, lifecycleFigureInputs } from '../bench/lifecycle-figures.ts';
import { figureOf, summaryRows } from '../bench/summary.ts';

const row = (measurement: string, samples: number[]) => ({ measurement, samples });

const allRows = [
  row(LIFECYCLE_ROW.apply1, [2, 3, 4]),
  row(LIFECYCLE_ROW.apply3, [4, 5, 6]),
  row(LIFECYCLE_ROW.apply5, [9, 10, 11]),
  row(LIFECYCLE_ROW.scaleUp5, [11, 12, 13]),
  row(LIFECYCLE_ROW.scaleDown3, [3, 4, 5]),
  row(LIFECYCLE_ROW.learners1, [0.5, 0.5, 0.5]),
  row(LIFECYCLE_ROW.learners3, [6, 6, 6]),
  row(LIFECYCLE_ROW.learners5, [20, 20, 20]),
  row(LIFECYCLE_ROW.learnersUp5, [10, 10, 10]),
  row(LIFECYCLE_ROW.removeDown3, [1, 2, 3]),
  row(LIFECYCLE_ROW.static1, [0.4, 0.5, 0.6]),
  row(LIFECYCLE_ROW.static3, [1, 1, 1]),
  row(LIFECYCLE_ROW.static5, [2, 2, 2]),
];

describe('bench lifecycle figures', () => {
  it('pairs every size and scale with its hand-run baselines, aims on 3/3, 5/5 and scale 3 → 5 only', () => {
    const rows = summaryRows(lifecycleFigureInputs(allRows).map(figureOf));
    const shown = rows.map(r => [r[1], r[7], r[8], r[9]]);
    assert.deepEqual(shown, [
      ['apply → 1/1 Ready', 'static --initial-cluster by hand: 0.50', '6×', ''],
      ['apply → 1/1 Ready', 'learner sequence by hand: 0.50', '6×', ''],
      ['apply → 3/3 Ready', 'static --initial-cluster by hand: 1', '5×', '≤ 4× static by hand: NOT met'],
      ['apply → 3/3 Ready', 'learner sequence by hand: 6', '0.83×', ''],
      ['apply → 5/5 Ready', 'static --initial-cluster by hand: 2', '5×', '≤ 4× static by hand: NOT met'],
      ['apply → 5/5 Ready', 'learner sequence by hand: 20', '0.50×', ''],
      ['scale 3 → 5/5 Ready', 'learner sequence by hand: 10', '1.20×', '≤ 1.1× by hand: NOT met'],
      ['scale 5 → 3/3 Ready', 'remove sequence by hand (member remove + process stop): 2', '2×', ''],
    ]);
  });

  it('meets an aim when the median ratio is within it', () => {
    const fast = allRows.map(r =>
      r.measurement === LIFECYCLE_ROW.apply3 ? row(r.measurement, [3, 4, 5]) : r,
    );
    const apply3 = lifecycleFigureInputs(fast)
      .map(figureOf)
      .find(f => f.figure === 'apply → 3/3 Ready' && f.aim);
    assert.equal(apply3?.ratio, 4);
    assert.equal(apply3?.met, true);
  });

  it('leaves out a size the operator was not measured for, and a missing baseline never meets its aim', () => {
    const some = allRows.filter(
      r => r.measurement !== LIFECYCLE_ROW.apply1 && r.measurement !== LIFECYCLE_ROW.static5,
    );
    const figures = lifecycleFigureInputs(some).map(figureOf);
    assert.equal(figures.filter(f => f.figure === 'apply → 1/1 Ready').length, 0);
    const apply5 = figures.find(f => f.figure === 'apply → 5/5 Ready' && f.aim);
    assert.equal(apply5?.baseline, undefined);
    assert.equal(apply5?.met, false);
  });
});
