// `kubectl etcdfn pause <cluster>`: scales to 0, remembering the replicas in an annotation so that
// `resume` can bring the same size back; prints where the data is kept.
import { setTimeout as sleep } from 'node:timers/promises';
import { DEFAULT_REPLICAS } from '../shared/api/defaults.ts';
import { CliError, clusterRef, getCluster, kubeCall, type Cli, type Cluster } from './context.ts';

export const REPLICAS_BEFORE_PAUSE = 'etcdfn.io/replicas-before-pause';

/** The message of a paused cluster's Available condition names the claim that keeps the data. */
export function dataLocation(cluster: Cluster): string | undefined {
  const available = cluster.status?.conditions?.find(c => c.type === 'Available');
  return available?.reason === 'Paused' && available.message ? available.message : undefined;
}

export async function runPause(
  cli: Cli,
  name: string,
  opts: { wait: boolean; timeout: number },
  print: (line: string) => void,
): Promise<void> {
  const cluster = await getCluster(cli, name);
  const replicas = cluster.spec.replicas ?? DEFAULT_REPLICAS;
  if (cluster.spec.storage?.medium === 'Memory') {
    throw new CliError(`${name} keeps its data in memory (storage.medium: Memory) and cannot be paused`);
  }
  if (replicas === 0) {
    print(`${name} is already paused (spec.replicas is 0)`);
  } else {
    const patch = {
      metadata: {
        resourceVersion: cluster.metadata.resourceVersion,
        annotations: { [REPLICAS_BEFORE_PAUSE]: String(replicas) },
      },
      spec: { replicas: 0 },
    };
    const written = await kubeCall(cli, () => cli.kube.mergePatch<Cluster>(clusterRef(cli, name), patch));
    if (written.kind !== 'written') throw new CliError(`could not pause ${name}: ${writeMessage(written)}`);
    print(`${name} pausing: replicas ${replicas} → 0 (recorded in annotation ${REPLICAS_BEFORE_PAUSE})`);
  }
  if (!opts.wait) {
    print(
      `the data stays on the PersistentVolumeClaim of the last member; see \`kubectl etcdfn status ${name}\``,
    );
    return;
  }
  const deadline = Date.now() + opts.timeout * 1000;
  for (;;) {
    const now = await getCluster(cli, name);
    const where = now.status?.phase === 'Paused' ? dataLocation(now) : undefined;
    if (now.status?.phase === 'Paused') {
      print(`${name} paused. ${where ?? ''}`.trim());
      return;
    }
    if (Date.now() > deadline)
      throw new CliError(`${name} not paused after ${opts.timeout}s (phase ${now.status?.phase ?? '-'})`);
    await sleep(1000);
  }
}

export function writeMessage(result: { kind: string; message?: string }): string {
  if (result.kind === 'conflict') return 'it changed while we wrote it; run the command again';
  if (result.kind === 'not-found') return 'it no longer exists';
  return result.message ?? result.kind;
}
