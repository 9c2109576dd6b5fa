// A namespaced install ($ETCDFN_WATCH_NAMESPACES, the chart's watchNamespaces): the functions may
// list only in those namespaces (their Roles are there), so a full resync lists each of them; with
// none set, one list across all namespaces. The list call stays at the caller (the RBAC scan reads
// it there).
import type { Context } from './context.ts';

/** `list(namespace)` for every watched namespace ('' = all of them when the install is cluster-wide). */
export async function inWatchedNamespaces<T>(
  ctx: Context,
  list: (namespace: string) => Promise<T[]>,
): Promise<T[]> {
  const namespaces = ctx.settings.watchNamespaces ?? [];
  if (namespaces.length === 0) return list('');
  return (await Promise.all(namespaces.map(list))).flat();
}
