// One event's calls, timed (shared/runtime/spans.ts): each event keeps its own record, even when
// events run at once; the totals split Kubernetes from etcd and name the slowest call.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { countEtcdCalls, countKubeRequests } from '../../shared/runtime/metrics.ts';
import { spans, spanTotals, timed, withSpans, type Span } from '../../shared/runtime/spans.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { KubeObjects } from '../../shared/k8s/objects.ts';

describe('spans of one event', () => {
  it('records each timed call with its name, start and duration, in the order they ended', async () => {
    const recorded = await withSpans(async () => {
      await timed('kube get EtcdMember', () => sleep(30));
      await Promise.all([timed('etcd listMembers', () => sleep(60)), timed('kube get Pod', () => sleep(10))]);
      return spans();
    });
    assert.deepEqual(
      recorded.map(s => s.what),
      ['kube get EtcdMember', 'kube get Pod', 'etcd listMembers'],
    );
    const [first, pod, list] = recorded as [Span, Span, Span];
    assert.ok(first.at < 15, `the first call starts with the event (+${first.at} ms)`);
    assert.ok(first.ms >= 25, `the first call took its 30 ms (${first.ms})`);
    assert.ok(list.at >= first.at + 25 && pod.at >= first.at + 25, 'the later calls start after the first');
    assert.ok(list.ms >= 55 && pod.ms < list.ms, 'each call has its own duration');
  });

  it('keeps events that run at once apart, and records nothing outside an event', async () => {
    const [a, b] = await Promise.all([
      withSpans(async () => {
        await timed('kube get A', () => sleep(20));
        return spans();
      }),
      withSpans(async () => {
        await timed('etcd status', () => sleep(5));
        await timed('etcd status', () => sleep(5));
        return spans();
      }),
    ]);
    assert.deepEqual(
      a.map(s => s.what),
      ['kube get A'],
    );
    assert.deepEqual(
      b.map(s => s.what),
      ['etcd status', 'etcd status'],
    );
    assert.equal(await timed('kube get X', () => Promise.resolve(7)), 7);
    assert.deepEqual(spans(), []);
  });

  it('records a call that throws, and the error still reaches the caller', async () => {
    const recorded = await withSpans(async () => {
      await assert.rejects(
        timed('etcd promote', () => Promise.reject(new Error('boom'))),
        /boom/,
      );
      return spans();
    });
    assert.deepEqual(
      recorded.map(s => s.what),
      ['etcd promote'],
    );
  });

  it('totals Kubernetes and etcd calls apart and names the slowest call', () => {
    const list: Span[] = [
      { what: 'kube get EtcdMember', at: 0.4, ms: 12.2 },
      { what: 'kube replaceStatus EtcdMember', at: 40, ms: 20.6 },
      { what: 'etcd listMembers', at: 13.1, ms: 2010.4 },
      { what: 'etcd status', at: 13.2, ms: 3 },
      { what: 'kubelet probe', at: 1, ms: 5000 },
    ];
    assert.deepEqual(spanTotals(list), {
      kubeCalls: 2,
      kubeMs: 33,
      etcdCalls: 2,
      etcdMs: 2013,
      slowest: 'kubelet probe 5000 ms at +1 ms',
    });
    assert.equal(spanTotals(list.slice(0, 4)).slowest, 'etcd listMembers 2010 ms at +13 ms');
    assert.deepEqual(spanTotals([]), { kubeCalls: 0, kubeMs: 0, etcdCalls: 0, etcdMs: 0 });
  });

  it('is what the counting adapters record: verb and kind for Kubernetes, the call for etcd', async () => {
    const kube = countKubeRequests({
      get: async () => {
        await sleep(5);
        return { kind: 'found' };
      },
    } as unknown as KubeObjects);
    const etcd = countEtcdCalls({
      listMembers: async () => ({ kind: 'ok', members: [] }),
    } as unknown as EtcdAdapter);
    const recorded = await withSpans(async () => {
      await kube.get({ apiVersion: 'v1', kind: 'Pod', namespace: 'a', name: 'b' });
      await etcd.listMembers(['http://127.0.0.1:2379']);
      return spans();
    });
    assert.deepEqual(
      recorded.map(s => s.what),
      ['kube get Pod', 'etcd listMembers'],
    );
    assert.ok((recorded[0]?.ms ?? 0) >= 4);
  });
});
