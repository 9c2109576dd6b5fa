// The bench's one table: median/min/max of the rounds, the ratio to the baseline, met/not met.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { figureOf, formatSummary, statsOf, summaryRows, type Summary } from '../bench/summary.ts';

describe('bench summary', () => {
  it('takes median, min and max of the rounds (odd and even counts, non-finite rounds left out)', () => {
    assert.deepEqual(statsOf([3, 1, 2, 5, 4]), { median: 3, min: 1, max: 5, runs: 5 });
    assert.deepEqual(statsOf([4, 1, 3, 2]), { median: 2.5, min: 1, max: 4, runs: 4 });
    assert.deepEqual(statsOf([2, NaN, 4]), { median: 3, min: 2, max: 4, runs: 2 });
    assert.equal(statsOf([]).runs, 0);
  });

  const apply3 = (median: number, base: number) =>
    figureOf({
      section: 'lifecycle',
      figure: 'apply → 3/3 Ready',
      unit: 's',
      stats: statsOf([median, median - 1, median + 1]),
      baseline: { label: 'static by hand', stats: statsOf([base]) },
      aim: { of: 'ratio', op: '<=', limit: 4, text: '≤ 4× static' },
    });

  it('divides the median by the baseline median and checks a ratio aim', () => {
    const met = apply3(8, 2);
    assert.equal(met.ratio, 4);
    assert.equal(met.met, true);
    const missed = apply3(9, 2);
    assert.equal(missed.ratio, 4.5);
    assert.equal(missed.met, false);
  });

  it('checks an aim on the median itself, and a missing figure never meets its aim', () => {
    const writes = (samples: number[]) =>
      figureOf({
        section: 'lifecycle',
        figure: 'no-op reconcile: writes',
        unit: 'requests',
        stats: statsOf(samples),
        aim: { of: 'median', op: '=', limit: 0, text: '0 writes' },
      });
    assert.equal(writes([0, 0, 0]).met, true);
    assert.equal(writes([0, 1, 1]).met, false);
    assert.equal(writes([]).met, false);
    const noBase = figureOf({
      section: 's',
      figure: 'f',
      unit: 's',
      stats: statsOf([1]),
      baseline: { label: 'b', stats: statsOf([0]) },
      aim: { of: 'ratio', op: '<', limit: 2, text: 'x' },
    });
    assert.equal(noBase.ratio, undefined);
    assert.equal(noBase.met, false);
  });

  it('prints one row per figure with baseline, ratio and met/NOT met, and says when it was a quick run', () => {
    const figures = [apply3(8, 2), apply3(9, 2)];
    assert.deepEqual(summaryRows(figures)[1], [
      'lifecycle',
      'apply → 3/3 Ready',
      's',
      '9',
      '8',
      '10',
      '3',
      'static by hand: 2',
      '4.50×',
      '≤ 4× static: NOT met',
    ]);
    const summary: Summary = {
      quick: true,
      startedAt: '2026-11-26T19:00:00Z',
      machine: {},
      figures,
      failed: [{ section: 'tick', error: 'boom' }],
      notes: [],
    };
    const text = formatSummary(summary);
    assert.match(text.split('\n')[0] ?? '', /QUICK MODE/);
    assert.match(text, /≤ 4× static: met\n/);
    assert.match(text, /tick: could not run: boom$/);
    assert.doesNotMatch(formatSummary({ ...summary, quick: false }), /QUICK/);
    // JSON keeps the same figures the table shows.
    const back = JSON.parse(JSON.stringify(summary)) as Summary;
    assert.equal(back.figures[1]?.met, false);
    assert.equal(back.figures[1]?.ratio, 4.5);
  });
});
