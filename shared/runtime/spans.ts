// Where one event's time goes: every Kubernetes and etcd call it makes, timed, kept per event
// (AsyncLocalStorage) so concurrent events in one process never mix. The handler's "handled event"
// line carries the totals and the slowest call; what is left of the event's time is the function's
// own work and its deliberate waits (a refused memberAdd asked again, a promotion retried).
import { AsyncLocalStorage } from 'node:async_hooks';

export interface Span {
  /** "kube get EtcdMember", "etcd listMembers". */
  what: string;
  /** Start, ms after the event's start. */
  at: number;
  ms: number;
}

export interface SpanTotals {
  kubeCalls: number;
  /** The calls' durations added up (calls made at once overlap, so this can exceed the wall time). */
  kubeMs: number;
  etcdCalls: number;
  etcdMs: number;
  /** The longest call: "etcd listMembers 2010 ms at +5 ms". */
  slowest?: string;
}

interface EventSpans {
  origin: number;
  spans: Span[];
}

const store = new AsyncLocalStorage<EventSpans>();

/** Runs `fn` with a fresh record of the calls it (and what it awaits) makes. */
export function withSpans<T>(fn: () => T): T {
  return store.run({ origin: performance.now(), spans: [] }, fn);
}

/** Times `call` as one span of the current event; outside an event, only runs it. */
export async function timed<T>(what: string, call: () => Promise<T>): Promise<T> {
  const current = store.getStore();
  if (!current) return call();
  const start = performance.now();
  try {
    return await call();
  } finally {
    current.spans.push({ what, at: start - current.origin, ms: performance.now() - start });
  }
}

/** The calls of the current event so far, in the order they ended. */
export function spans(): readonly Span[] {
  return store.getStore()?.spans ?? [];
}

/** Totals by kind of call and the slowest call, rounded to whole ms. */
export function spanTotals(list: readonly Span[]): SpanTotals {
  const sum = (kind: string) => {
    const of = list.filter(s => s.what.startsWith(`${kind} `));
    return { calls: of.length, ms: Math.round(of.reduce((total, s) => total + s.ms, 0)) };
  };
  const kube = sum('kube');
  const etcd = sum('etcd');
  const slowest = list.reduce<Span | undefined>((max, s) => (max && max.ms >= s.ms ? max : s), undefined);
  return {
    kubeCalls: kube.calls,
    kubeMs: kube.ms,
    etcdCalls: etcd.calls,
    etcdMs: etcd.ms,
    ...(slowest && {
      slowest: `${slowest.what} ${Math.round(slowest.ms)} ms at +${Math.round(slowest.at)} ms`,
    }),
  };
}
