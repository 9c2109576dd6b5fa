// The four functions by name, for the tools that run them (the sandbox, `npm run invoke`).
// Importing an entry registers it with the functions framework.
export const FUNCTION_NAMES = [
  'reconcile-cluster',
  'reconcile-member',
  'finalize-member',
  'run-snapshot',
] as const;
/** Functions that are no event's reconciler: dead-letter, every Trigger's dead-letter sink. */
export const AUXILIARY_FUNCTION_NAMES = ['dead-letter'] as const;
export type FunctionName = (typeof FUNCTION_NAMES)[number] | (typeof AUXILIARY_FUNCTION_NAMES)[number];

export function isFunctionName(name: string): name is FunctionName {
  return ([...FUNCTION_NAMES, ...AUXILIARY_FUNCTION_NAMES] as readonly string[]).includes(name);
}

// Literal import() calls, so a compiler or bundler sees each entry and only the one asked for loads.
const ENTRIES: Record<FunctionName, () => Promise<unknown>> = {
  'reconcile-cluster': () => import('./reconcile-cluster/index.ts'),
  'reconcile-member': () => import('./reconcile-member/index.ts'),
  'finalize-member': () => import('./finalize-member/index.ts'),
  'run-snapshot': () => import('./run-snapshot/index.ts'),
  'dead-letter': () => import('./dead-letter/index.ts'),
};

/** Imports a function's entry, which registers it with the functions framework. */
export async function loadFunction(name: FunctionName): Promise<void> {
  await ENTRIES[name]();
}
