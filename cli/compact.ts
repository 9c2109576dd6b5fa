// `kubectl etcdfn compact <cluster> [--revision N]`: drops the key history before the current (or
// the given) revision, the first step in giving space back; `defrag` then shrinks the files.
import { compact } from '../shared/etcd/index.ts';
import { CliError, getCluster, type Cli } from './context.ts';
import { etcdAccess, memberEndpoints } from './endpoints.ts';

export async function runCompact(cli: Cli, name: string, revision: number | undefined): Promise<string> {
  const cluster = await getCluster(cli, name);
  const endpoints = (await memberEndpoints(cli, cluster)).map(m => m.endpoint);
  const result = await compact(endpoints, revision, await etcdAccess(cli, cluster));
  if (result.kind !== 'ok') throw new CliError(`compaction of ${name} failed: ${result.message}`);
  return result.alreadyCompacted
    ? `${name}: history was already compacted at revision ${result.revision}`
    : `${name}: compacted history before revision ${result.revision}`;
}
