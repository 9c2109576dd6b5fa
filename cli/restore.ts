// `kubectl etcdfn restore <cluster> --from <snapshot>`: asks the operator to return a running
// cluster to an EtcdSnapshot in place. It only records the request (spec.inPlaceRestore with a new
// request ID) after a confirmation; the operator does the work (shared/plan/restore/in-place.ts)
// and status.inPlaceRestore and the Restored condition show each step, which --wait follows.
import { randomBytes } from 'node:crypto';
import { setTimeout as sleep } from 'node:timers/promises';
import { API_VERSION } from '../shared/api/group.ts';
import {
  CliError,
  clusterRef,
  getCluster,
  kubeCall,
  type Cli,
  type Cluster,
  type Snapshot,
} from './context.ts';
import { writeMessage } from './pause.ts';

export interface RestoreOptions {
  from: string;
  yesDestroyCurrentData?: boolean;
  wait: boolean;
  timeout: number;
}

/** Asks the question on a terminal and returns the answer; undefined when there is no terminal. */
export type Confirm = (question: string) => Promise<string | undefined>;

/** A request ID the CRD accepts (lowercase, digits, '-'), new on every call. */
export function newRequestID(now = new Date()): string {
  const stamp = now.toISOString().replace(/[-:T]/g, '').slice(0, 14);
  return `r${stamp}-${randomBytes(3).toString('hex')}`;
}

export async function runRestore(
  cli: Cli,
  name: string,
  opts: RestoreOptions,
  print: (line: string) => void,
  confirm: Confirm,
): Promise<number> {
  const cluster = await getCluster(cli, name);
  const snapshot = await getSnapshot(cli, opts.from);
  if ((cluster.spec.replicas ?? 0) === 0)
    throw new CliError(
      `${name} is paused (spec.replicas is 0): resume it first (kubectl etcdfn resume ${name})`,
    );
  if (!opts.yesDestroyCurrentData) {
    const taken = snapshot.status?.completionTime ?? snapshot.metadata.creationTimestamp?.toString() ?? '?';
    const answer = await confirm(
      `This replaces ALL data of EtcdCluster ${cli.namespace}/${name} with EtcdSnapshot ${opts.from} (taken ${taken}); every write since then is lost.\nType the cluster name (${name}) to continue: `,
    );
    if (answer === undefined)
      throw new CliError(
        'no terminal to confirm on: pass --yes-destroy-current-data to restore without asking',
      );
    if (answer.trim() !== name) throw new CliError('not confirmed; nothing was changed');
  }
  const requestID = newRequestID();
  const patch = {
    metadata: { resourceVersion: cluster.metadata.resourceVersion },
    spec: { inPlaceRestore: { requestID, snapshotRef: { name: opts.from } } },
  };
  const written = await kubeCall(cli, () => cli.kube.mergePatch<Cluster>(clusterRef(cli, name), patch));
  if (written.kind !== 'written')
    throw new CliError(`could not request the restore: ${writeMessage(written)}`);
  print(`${name}: restore from EtcdSnapshot ${opts.from} requested (request ${requestID})`);
  if (!opts.wait) {
    print(`follow it with: kubectl etcdfn status ${name}  (condition Restored)`);
    return 0;
  }
  return follow(cli, name, requestID, opts.timeout, print);
}

async function getSnapshot(cli: Cli, name: string): Promise<Snapshot> {
  const ref = { apiVersion: API_VERSION, kind: 'EtcdSnapshot', namespace: cli.namespace, name };
  const read = await kubeCall(cli, () => cli.kube.get<Snapshot>(ref));
  if (read.kind === 'not-found')
    throw new CliError(
      `etcdsnapshot "${name}" not found in namespace "${cli.namespace}"; nothing was changed`,
    );
  const phase = read.object.status?.phase ?? 'Pending';
  if (phase !== 'Complete')
    throw new CliError(`EtcdSnapshot ${name} is ${phase}, not Complete; nothing was changed`);
  return read.object;
}

/** Prints each step as the Restored condition changes; 0 once done and ready, 1 if refused. */
async function follow(
  cli: Cli,
  name: string,
  requestID: string,
  timeout: number,
  print: (line: string) => void,
): Promise<number> {
  const deadline = Date.now() + timeout * 1000;
  let last = '';
  for (;;) {
    const now = await getCluster(cli, name);
    const restored = now.status?.conditions?.find(c => c.type === 'Restored');
    const record = now.status?.inPlaceRestore;
    const mine = record?.requestID === requestID;
    const line = restored ? `${restored.status} ${restored.reason}: ${restored.message}` : '';
    if (line && line !== last) print(line);
    last = line;
    if (mine && record.step === 'Done') {
      const replicas = now.spec.replicas ?? 0;
      if (now.status?.ready === `${replicas}/${replicas}` && now.status.phase === 'Running') {
        print(`${name} restored and ready ${now.status.ready} (etcd cluster ${now.status.clusterID ?? '?'})`);
        return 0;
      }
    }
    if (!mine && restored?.status === 'False') {
      print(`the restore did not start; nothing was changed. Fix the cause and run the command again`);
      return 1;
    }
    if (Date.now() > deadline)
      throw new CliError(
        `${name}: restore not finished after ${timeout}s (it goes on; see kubectl etcdfn status ${name})`,
      );
    await sleep(1000);
  }
}
