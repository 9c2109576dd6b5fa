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

/** Imports a function's entry (which registers it); false when the function is not built yet. */
export async function loadFunction(name: FunctionName): Promise<boolean> {
  try {
    await import(`./${name}/index.ts`);
    return true;
  } catch (err) {
    if (
      (err as NodeJS.ErrnoException).code === 'ERR_MODULE_NOT_FOUND' &&
      String((err as Error).message).includes(`/${name}/index.ts`)
    ) {
      return false;
    }
    throw err;
  }
}
