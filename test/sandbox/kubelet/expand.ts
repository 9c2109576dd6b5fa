// Kubernetes' `$(VAR)` expansion (k8s.io/kubernetes third_party/forked/golang/expansion):
// `$(NAME)` becomes the variable's value when NAME is defined, and stays as written otherwise;
// `$$` is an escaped `$` (so `$$(NAME)` yields the literal `$(NAME)`); any other `$` is literal.

/** Expands `$(VAR)` references in `input` using `lookup` (undefined = leave the reference as is). */
export function expand(input: string, lookup: (name: string) => string | undefined): string {
  let out = '';
  let checkpoint = 0;
  for (let cursor = 0; cursor < input.length; cursor++) {
    if (input[cursor] !== '$' || cursor + 1 >= input.length) continue;
    out += input.slice(checkpoint, cursor);
    const { text, isVar, advance } = readVariable(input.slice(cursor + 1));
    if (isVar) {
      const value = lookup(text);
      out += value ?? `$(${text})`;
    } else {
      out += text;
    }
    cursor += advance;
    checkpoint = cursor + 1;
  }
  return out + input.slice(checkpoint);
}

function readVariable(rest: string): { text: string; isVar: boolean; advance: number } {
  if (rest[0] === '$') return { text: '$', isVar: false, advance: 1 };
  if (rest[0] === '(') {
    const close = rest.indexOf(')', 1);
    if (close >= 0) return { text: rest.slice(1, close), isVar: true, advance: close + 1 };
    return { text: '$(', isVar: false, advance: 1 };
  }
  return { text: `$${rest[0]}`, isVar: false, advance: 1 };
}

/** Expands every element of a command or args list against the container's final environment. */
export function expandAll(list: string[] | undefined, env: Record<string, string>): string[] {
  return (list ?? []).map(s => expand(s, name => (Object.hasOwn(env, name) ? env[name] : undefined)));
}
