import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  findCondition,
  removeCondition,
  setCondition,
  toKubeTime,
  type Condition,
} from '../../shared/conditions.ts';

const t0 = new Date('2026-11-22T10:00:00.123Z');
const t1 = new Date('2026-11-22T10:05:00.000Z');
const available = (status: 'True' | 'False', reason = 'AllMembersReady', message = '3/3 members ready') => ({
  type: 'Available',
  status,
  reason,
  message,
});

describe('setCondition', () => {
  it('adds a condition with the time of the change, to whole seconds', () => {
    const list = setCondition([], available('True'), t0);
    assert.deepEqual(list, [{ ...available('True'), lastTransitionTime: '2026-11-22T10:00:00Z' }]);
  });

  it('keeps lastTransitionTime when only the reason or message changes', () => {
    const first = setCondition(undefined, available('False', 'ScalingUp', '1/3 ready'), t0);
    const second = setCondition(first, available('False', 'ScalingUp', '2/3 ready'), t1);
    assert.equal(findCondition(second, 'Available')?.message, '2/3 ready');
    assert.equal(findCondition(second, 'Available')?.lastTransitionTime, '2026-11-22T10:00:00Z');
  });

  it('moves lastTransitionTime when the status flips', () => {
    const first = setCondition(undefined, available('False', 'ScalingUp', '2/3 ready'), t0);
    const second = setCondition(first, available('True'), t1);
    assert.equal(findCondition(second, 'Available')?.lastTransitionTime, '2026-11-22T10:05:00Z');
  });

  it('returns the same array when nothing changed, so callers can skip the write', () => {
    const first = setCondition(undefined, available('True'), t0);
    assert.equal(setCondition(first, available('True'), t1), first);
  });

  it('leaves other conditions alone and keeps their order', () => {
    const list: Condition[] = [
      { type: 'Progressing', status: 'False', reason: 'Idle', message: '', lastTransitionTime: 'x' },
      { ...available('True'), lastTransitionTime: 'y' },
    ];
    const next = setCondition(
      list,
      { type: 'Progressing', status: 'True', reason: 'ScalingUp', message: '' },
      t1,
    );
    assert.deepEqual(
      next.map(c => [c.type, c.status]),
      [
        ['Progressing', 'True'],
        ['Available', 'True'],
      ],
    );
    assert.equal(next[1], list[1]);
  });

  it('an observedGeneration change is a change', () => {
    const first = setCondition(undefined, { ...available('True'), observedGeneration: 1 }, t0);
    const second = setCondition(first, { ...available('True'), observedGeneration: 2 }, t1);
    assert.notEqual(second, first);
    assert.equal(second[0]?.lastTransitionTime, '2026-11-22T10:00:00Z');
  });
});

describe('removeCondition', () => {
  it('removes by type and returns the same array when absent', () => {
    const list = setCondition(undefined, available('True'), t0);
    assert.deepEqual(removeCondition(list, 'Available'), []);
    assert.equal(removeCondition(list, 'Degraded'), list);
  });
});

it('toKubeTime drops milliseconds', () => {
  assert.equal(toKubeTime(t0), '2026-11-22T10:00:00Z');
});
