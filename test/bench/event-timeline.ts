// Where an apply's time goes, from the functions' own lines (the lifecycle benchmark's detail):
// every event the functions handled for one cluster, when it started and how long it took, with
// the time its Kubernetes and etcd calls took (shared/runtime/spans.ts), and how much of the
// apply some function was working at all. The rest is waiting: for the kubelet to start etcd, for a
// readiness probe, for an event to be delivered. Pure: log lines in, rows out.

/** One "handled event" or "event to be retried" line of a function, the fields read here. */
export interface HandledLine {
  function: string;
  /** When the line was written (the event's end), epoch ms. */
  time: number;
  ms: number;
  name?: string;
  cluster?: string;
  step?: string;
  kubeMs?: number;
  etcdMs?: number;
  slowest?: string;
  /** The summary of a done event, or the reason of one to be retried. */
  outcome: string;
}

export interface TimelineRow {
  /** Seconds from the window's start to the event's start. */
  at: number;
  ms: number;
  function: string;
  object: string;
  step: string;
  kubeMs: number;
  etcdMs: number;
  outcome: string;
}

const HANDLED = new Set(['handled event', 'event to be retried']);

/** A line of the sandbox's functions.log ("<function> {json}") or a bare JSON line; others undefined. */
export function parseFunctionLine(line: string): HandledLine | undefined {
  const json = line.slice(line.indexOf('{'));
  let o: Record<string, unknown>;
  try {
    o = JSON.parse(json) as Record<string, unknown>;
  } catch {
    return undefined;
  }
  if (!HANDLED.has(String(o.msg)) || typeof o.time !== 'number' || typeof o.ms !== 'number') return undefined;
  const text = (key: string) => (typeof o[key] === 'string' ? o[key] : undefined);
  const count = (key: string) => (typeof o[key] === 'number' ? o[key] : undefined);
  return {
    function: text('function') ?? '',
    time: o.time,
    ms: o.ms,
    ...(text('name') && { name: text('name') }),
    ...(text('cluster') && { cluster: text('cluster') }),
    ...(text('step') && { step: text('step') }),
    ...(count('kubeMs') !== undefined && { kubeMs: count('kubeMs') }),
    ...(count('etcdMs') !== undefined && { etcdMs: count('etcdMs') }),
    ...(text('slowest') && { slowest: text('slowest') }),
    outcome: text('summary') ?? text('reason') ?? '',
  };
}

/** The lines about one cluster: its own events and its members', Pods' and PVCs' (named after it). */
export function ofCluster(lines: readonly HandledLine[], cluster: string): HandledLine[] {
  return lines.filter(
    l => l.cluster === cluster || l.name === cluster || (l.name?.startsWith(`${cluster}-`) ?? false),
  );
}

/** The events that started within [start, end] (epoch ms), in the order they started. */
export function eventTimeline(lines: readonly HandledLine[], start: number, end: number): TimelineRow[] {
  return lines
    .map(l => ({ line: l, begun: l.time - l.ms }))
    .filter(({ begun }) => begun >= start && begun <= end)
    .sort((a, b) => a.begun - b.begun)
    .map(({ line, begun }) => ({
      at: (begun - start) / 1000,
      ms: line.ms,
      function: line.function,
      object: line.name ?? line.cluster ?? '',
      step: line.step ?? '',
      kubeMs: line.kubeMs ?? 0,
      etcdMs: line.etcdMs ?? 0,
      outcome: line.outcome,
    }));
}

/** Seconds in which at least one of the rows' events was being handled (their union). */
export function busySeconds(rows: readonly TimelineRow[]): number {
  const spans = rows.map(r => [r.at * 1000, r.at * 1000 + r.ms] as const).sort((a, b) => a[0] - b[0]);
  let total = 0;
  let from = -Infinity;
  let to = -Infinity;
  for (const [a, b] of spans) {
    if (a > to) {
      if (to > from) total += to - from;
      from = a;
      to = b;
    } else to = Math.max(to, b);
  }
  if (to > from) total += to - from;
  return total / 1000;
}

/** A row as one line of the benchmark's progress: "+0.42 s reconcile-member demo-1 (…) 120 ms: …". */
export function formatRow(r: TimelineRow): string {
  const calls = `kube ${r.kubeMs} ms, etcd ${r.etcdMs} ms`;
  return `+${r.at.toFixed(2)} s ${r.function} ${r.object}${r.step ? ` [${r.step}]` : ''} ${r.ms} ms (${calls}): ${r.outcome.slice(0, 120)}`;
}
