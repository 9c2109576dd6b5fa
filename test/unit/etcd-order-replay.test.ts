// The evidence order-from-etcd asserts on (test/support/etcd-order.ts), on hand-written sample logs:
// a member touched after leadership moved off it passes on its own word or, when its loop missed the
// moment (a loaded machine), on another member's word of a new leader at a higher raft term before
// the touch; a leader stopped while it led (the new leader appears only after it went down, as with
// etcd's own transfer on a graceful stop) has no evidence and fails.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { handedOver, replay, type Seen } from '../support/etcd-order.ts';

const A = 'aa';
const B = 'bb';
const C = 'cc';
const voters = [A, B, C];
const up = (member: string, id: string, leader: string, term: number): Omit<Seen, 'seq'> => ({
  member,
  answers: true,
  id,
  leader,
  term,
  version: '3.4.23',
  learner: false,
  voters,
});
const down = (member: string): Omit<Seen, 'seq'> => ({ member, answers: false, error: 'stopped' });
const log = (...entries: Omit<Seen, 'seq'>[]): Seen[] => entries.map((e, seq) => ({ seq, ...e }));
const touchOf = (entries: Seen[], member: string) =>
  replay(entries, 3, '3.4.23').touches.find(t => t.member === member);

describe('order-from-etcd: was leadership handed over before the member was touched?', () => {
  const start = [up('m-a', A, A, 2), up('m-b', B, A, 2), up('m-c', C, A, 2)];
  it('its own last word names the new leader: handed over', () => {
    const touch = touchOf(log(...start, up('m-a', A, B, 3), up('m-b', B, B, 3), down('m-a')), 'm-a');
    assert.match(handedOver(touch!) ?? '', /its own last word/);
  });

  it('its loop missed the moment, but another member named a new leader at a higher term first: handed over', () => {
    const touch = touchOf(log(...start, up('m-b', B, B, 3), up('m-c', C, B, 3), down('m-a')), 'm-a');
    assert.match(handedOver(touch!) ?? '', /names leader bb at term 3/);
  });

  it('stopped while it led (the new leader appears only after it went down): no evidence', () => {
    const touch = touchOf(log(...start, down('m-a'), up('m-b', B, B, 3), up('m-c', C, B, 3)), 'm-a');
    assert.equal(handedOver(touch!), undefined);
  });

  it('leadership came back to it at a higher term before the stop: the older move does not count', () => {
    const touch = touchOf(log(...start, up('m-b', B, B, 3), up('m-c', C, A, 4), down('m-a')), 'm-a');
    assert.equal(handedOver(touch!), undefined);
  });
});
