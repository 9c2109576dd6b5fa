// `kubectl etcdfn snapshot <cluster>`: creates an EtcdSnapshot to S3 and, with --wait, follows it
// to Complete or Failed.
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION } from '../shared/api/group.ts';
import { CliError, getCluster, kubeCall, type Cli, type Snapshot } from './context.ts';
import { formatBytes } from './format.ts';

export interface SnapshotOptions {
  s3Endpoint: string;
  bucket: string;
  key?: string;
  secret: string;
  region?: string;
  wait?: boolean;
  /** Seconds --wait waits before giving up (the snapshot itself goes on). */
  timeout: number;
}

export function snapshotManifest(cluster: string, namespace: string, o: SnapshotOptions): Snapshot {
  return {
    apiVersion: API_VERSION,
    kind: 'EtcdSnapshot',
    metadata: { generateName: `${cluster}-`, namespace },
    spec: {
      clusterRef: { name: cluster },
      destination: {
        s3: {
          endpoint: o.s3Endpoint,
          bucket: o.bucket,
          ...(o.key ? { key: o.key } : {}),
          ...(o.region ? { region: o.region } : {}),
          credentialsSecretRef: { name: o.secret },
        },
      },
    },
  };
}

/** The lines --wait prints for a finished snapshot, and whether it succeeded. */
export function describeOutcome(s: Snapshot): { ok: boolean; lines: string[] } {
  const name = s.metadata.name ?? '';
  const ready = s.status?.conditions?.find(c => c.type === 'Ready');
  if (s.status?.phase === 'Failed') {
    return {
      ok: false,
      lines: [`${name} Failed (${ready?.reason ?? 'no reason'}): ${ready?.message ?? ''}`],
    };
  }
  const a = s.status?.artifact;
  const size = a?.sizeBytes === undefined ? '-' : `${formatBytes(a.sizeBytes)} (${a.sizeBytes} bytes)`;
  return {
    ok: true,
    lines: [
      `${name} Complete`,
      `  uri:      ${a?.uri ?? '-'}`,
      `  size:     ${size}`,
      `  checksum: ${a?.checksum ?? '-'}`,
      `  revision: ${a?.revision ?? '-'}`,
    ],
  };
}

export async function runSnapshot(
  cli: Cli,
  cluster: string,
  o: SnapshotOptions,
  print: (line: string) => void,
): Promise<number> {
  await getCluster(cli, cluster);
  const created = await kubeCall(cli, () => cli.kube.create(snapshotManifest(cluster, cli.namespace, o)));
  if (created.kind === 'invalid')
    throw new CliError(`the API server refused the EtcdSnapshot: ${created.message}`);
  if (created.kind === 'already-exists')
    throw new CliError('the API server generated a name that exists; try again');
  const name = created.object.metadata.name ?? '';
  print(name);
  if (!o.wait) return 0;
  const ref = { apiVersion: API_VERSION, kind: 'EtcdSnapshot', namespace: cli.namespace, name };
  const deadline = Date.now() + o.timeout * 1000;
  for (;;) {
    const read = await kubeCall(cli, () => cli.kube.get<Snapshot>(ref));
    if (read.kind === 'not-found') throw new CliError(`etcdsnapshot "${name}" was deleted while waiting`);
    const phase = read.object.status?.phase;
    if (phase === 'Complete' || phase === 'Failed') {
      const outcome = describeOutcome(read.object);
      outcome.lines.forEach(line => print(line));
      return outcome.ok ? 0 : 1;
    }
    const last =
      read.object.status?.conditions?.find(c => c.type === 'Ready')?.message ?? phase ?? 'not picked up yet';
    if (Date.now() > deadline) {
      throw new CliError(
        `${name} not finished after ${o.timeout}s (last: ${last}); it goes on in the cluster`,
      );
    }
    await sleep(1000);
  }
}
