// `kubectl etcdfn resume <cluster> [--replicas N]`: scales a paused cluster back up, to N or to the
// replicas `pause` recorded.
import { setTimeout as sleep } from 'node:timers/promises';
import { CliError, clusterRef, getCluster, kubeCall, type Cli, type Cluster } from './context.ts';
import { REPLICAS_BEFORE_PAUSE, writeMessage } from './pause.ts';

/** The replicas to resume to: --replicas, else the annotation `pause` wrote; a CliError otherwise. */
export function resumeReplicas(cluster: Cluster, flag: number | undefined): number {
  if (flag !== undefined) {
    if (!Number.isInteger(flag) || flag < 1)
      throw new CliError(`--replicas must be a whole number ≥ 1, not ${flag}`);
    return flag;
  }
  const recorded = cluster.metadata.annotations?.[REPLICAS_BEFORE_PAUSE];
  const n = Number(recorded);
  if (recorded === undefined || !Number.isInteger(n) || n < 1) {
    const name = cluster.metadata.name ?? '';
    throw new CliError(
      `${name} has no ${REPLICAS_BEFORE_PAUSE} annotation (it was not paused with kubectl etcdfn): pass --replicas N`,
    );
  }
  return n;
}

export async function runResume(
  cli: Cli,
  name: string,
  opts: { replicas?: number; wait: boolean; timeout: number },
  print: (line: string) => void,
): Promise<void> {
  const cluster = await getCluster(cli, name);
  const current = cluster.spec.replicas ?? 0;
  if (current > 0) throw new CliError(`${name} is not paused (spec.replicas is ${current})`);
  const replicas = resumeReplicas(cluster, opts.replicas);
  const patch = {
    metadata: {
      resourceVersion: cluster.metadata.resourceVersion,
      annotations: { [REPLICAS_BEFORE_PAUSE]: null },
    },
    spec: { replicas },
  };
  const written = await kubeCall(cli, () => cli.kube.mergePatch<Cluster>(clusterRef(cli, name), patch));
  if (written.kind !== 'written') throw new CliError(`could not resume ${name}: ${writeMessage(written)}`);
  print(`${name} resuming: replicas 0 → ${replicas}`);
  if (!opts.wait) return;
  const deadline = Date.now() + opts.timeout * 1000;
  for (;;) {
    const now = await getCluster(cli, name);
    const ready = now.status?.ready;
    if (ready === `${replicas}/${replicas}` && now.status?.phase === 'Running') {
      print(`${name} ready ${ready}`);
      return;
    }
    if (Date.now() > deadline)
      throw new CliError(`${name} not ready after ${opts.timeout}s (ready ${ready ?? '-'})`);
    await sleep(1000);
  }
}
