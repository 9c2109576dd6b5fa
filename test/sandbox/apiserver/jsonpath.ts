// The subset of kubectl JSONPath used by printer columns and selectable fields:
// .a.b, .a[0], .a[*], .a['key'], .a[?(@.type=="Ready")].status, optionally wrapped in {}.

type Step =
  | { kind: 'field'; name: string }
  | { kind: 'index'; index: number }
  | { kind: 'all' }
  | { kind: 'filter'; path: string[]; op: '==' | '!='; value: string | number | boolean };

const cache = new Map<string, Step[]>();

function parseLiteral(raw: string): string | number | boolean {
  const t = raw.trim();
  if (/^(['"]).*\1$/.test(t)) return t.slice(1, -1);
  if (t === 'true' || t === 'false') return t === 'true';
  const n = Number(t);
  return Number.isNaN(n) ? t : n;
}

function parseBracket(inner: string): Step {
  const t = inner.trim();
  if (t === '*') return { kind: 'all' };
  if (/^-?\d+$/.test(t)) return { kind: 'index', index: Number(t) };
  const filter = /^\?\(@((?:\.[\w-]+)+)\s*(==|!=)\s*(.+)\)$/.exec(t);
  if (filter) {
    return {
      kind: 'filter',
      path: filter[1].slice(1).split('.'),
      op: filter[2] as '==' | '!=',
      value: parseLiteral(filter[3]),
    };
  }
  return { kind: 'field', name: String(parseLiteral(t)) };
}

export function parseJsonPath(expr: string): Step[] {
  const hit = cache.get(expr);
  if (hit) return hit;
  let s = expr.trim();
  if (s.startsWith('{') && s.endsWith('}')) s = s.slice(1, -1);
  const steps: Step[] = [];
  let i = 0;
  while (i < s.length) {
    if (s[i] === '.') {
      i++;
      let j = i;
      while (j < s.length && s[j] !== '.' && s[j] !== '[') j++;
      if (j > i) steps.push({ kind: 'field', name: s.slice(i, j) });
      i = j;
    } else if (s[i] === '[') {
      const close = s.indexOf(']', i);
      if (close < 0) break;
      steps.push(parseBracket(s.slice(i + 1, close)));
      i = close + 1;
    } else {
      let j = i;
      while (j < s.length && s[j] !== '.' && s[j] !== '[') j++;
      if (s.slice(i, j) !== '$') steps.push({ kind: 'field', name: s.slice(i, j) });
      i = j;
    }
  }
  cache.set(expr, steps);
  return steps;
}

function getField(value: unknown, path: string[]): unknown {
  let cur = value;
  for (const p of path) {
    if (typeof cur !== 'object' || cur === null) return undefined;
    cur = (cur as Record<string, unknown>)[p];
  }
  return cur;
}

function applyStep(step: Step, v: unknown, next: unknown[]): void {
  if (step.kind === 'field') {
    if (typeof v === 'object' && v !== null && !Array.isArray(v)) {
      const f = (v as Record<string, unknown>)[step.name];
      if (f !== undefined) next.push(f);
    }
    return;
  }
  if (!Array.isArray(v)) {
    if (step.kind === 'all' && typeof v === 'object' && v !== null) next.push(...Object.values(v));
    return;
  }
  if (step.kind === 'index') {
    const item: unknown = v[step.index < 0 ? v.length + step.index : step.index];
    if (item !== undefined) next.push(item);
  } else if (step.kind === 'all') {
    next.push(...(v as unknown[]));
  } else {
    for (const item of v as unknown[]) {
      if ((getField(item, step.path) === step.value) === (step.op === '==')) next.push(item);
    }
  }
}

/** Every value the path selects (empty when nothing matches). */
export function evaluateJsonPath(obj: unknown, expr: string): unknown[] {
  let current: unknown[] = [obj];
  for (const step of parseJsonPath(expr)) {
    const next: unknown[] = [];
    for (const v of current) applyStep(step, v, next);
    current = next;
  }
  return current;
}
