// Crash tests for the static bootstrap of a new 3-member cluster (sandbox, real etcd 3.5.16, chaos
// on): for every side effect of the bootstrap, the function that carried it out is killed (SIGKILL,
// through the crash points of shared/runtime/crash.ts) just after it — the claim written and no
// member created, one member of three created, the operation cleared, a member's status, PVC or Pod
// written and the others not, the cluster ID latched, the PDB made — and a new instance of the
// function starts on the same port. Only normal events follow. Each time the cluster must end as ONE
// etcd cluster of exactly the three claimed members: no fourth member, no second claim, every
// member answering for the cluster ID in status, a put readable through each of them.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import type { CrashPoint } from '../../shared/runtime/crash.ts';
import { CrashPoints } from '../support/crash-points.ts';
import { beforeCreation, converged, type Cluster } from '../support/converge.ts';
import { notOneCluster } from '../support/one-cluster.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const TIMEOUT = 120_000;
type Member = EtcdMember & KubeObject;

/** Every side effect of the static bootstrap, in the order a bootstrap passes them. */
const POINTS: CrashPoint[] = [
  'cluster:service-ensured',
  'cluster:status-written',
  'cluster:claimed',
  'cluster:member-created',
  'cluster:operation-cleared',
  'member:status-written',
  'member:pvc-created',
  'member:pod-created',
  'cluster:cluster-id-latched',
  'cluster:pdb-ensured',
];

describe(
  'static bootstrap: a crash after every side effect ends as one cluster (etcd 3.5.16, chaos on)',
  {
    timeout: 1_800_000,
  },
  () => {
    let sandbox: FullSandbox;
    let kube: KubeObjects;
    let crashPoints: CrashPoints;

    before(async () => {
      crashPoints = CrashPoints.inTempDir('etcdfn-crash-bootstrap-', () => sandbox.restarts());
      sandbox = await startFullSandbox({
        tickSeconds: 5,
        crashDir: crashPoints.dir,
        chaos: true,
        chaosSeed: 7,
      });
      kube = new KubeObjects(sandbox.kc);
    });
    after(async () => {
      await sandbox?.stop();
      crashPoints?.remove();
    });

    const ref = (name: string) => ({ apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name });
    const members = (name: string) =>
      kube.list<Member>(API_VERSION, 'EtcdMember', NS, `etcdfn.io/cluster=${name}`);
    const describeWorld = (name: string) => async () => {
      const c = await kube.get<Cluster>(ref(name)).catch(() => undefined);
      const m = await members(name).catch(() => []);
      let log = '';
      try {
        log = readFileSync(join(sandbox.dir, 'logs', 'functions.log'), 'utf8').slice(-4000);
      } catch {
        // no log yet
      }
      return [
        `status: ${JSON.stringify(c?.kind === 'found' ? c.object.status : undefined)}`,
        `members: ${m.map(x => `${x.metadata.name} ${JSON.stringify(x.status?.conditions?.map(y => y.message))}`).join(', ')}`,
        `restarts: ${JSON.stringify(sandbox.restarts())}`,
        `functions.log (tail):\n${log}`,
      ].join('\n');
    };

    POINTS.forEach((point, i) => {
      it(`crash after ${point}`, async () => {
        const name = `sb-${i}`;
        await crashPoints.crashThrough(
          point,
          async () => {
            const created = await kube.create({
              apiVersion: API_VERSION,
              kind: 'EtcdCluster',
              metadata: { name, namespace: NS },
              spec: { replicas: 3, version: '3.5.16', storage: { size: '1Gi', medium: '' } },
            });
            assert.equal(created.kind, 'created');
          },
          { timeoutMs: TIMEOUT, describe: describeWorld(name) },
        );

        const c = await converged(
          { kube, namespace: NS, name },
          { replicas: 3, since: beforeCreation(), timeoutMs: TIMEOUT, describe: describeWorld(name) },
        );
        // One claim of three names: a crash never made the operator claim or create a second set.
        assert.equal(c.status?.nextMemberOrdinal, 3, 'the ordinal counter moved once, by three');
        assert.deepEqual((await members(name)).map(m => m.metadata.name).sort(), [
          `${name}-0`,
          `${name}-1`,
          `${name}-2`,
        ]);
        assert.equal(c.status?.bootstrapRetry, undefined, 'formed by the first attempt');
        assert.match(c.status?.clusterID ?? '', /^[0-9a-f]{1,16}$/);
        const why = await waitFor(
          `${name}: one etcd cluster, a put readable through every member`,
          async () => ((await notOneCluster(kube, NS, name)) === undefined ? 'ok' : undefined),
          { timeoutMs: 30_000, intervalMs: 500 },
          async () => (await notOneCluster(kube, NS, name)) ?? '',
        );
        assert.equal(why, 'ok');
        assert.equal((await kube.delete(ref(name))).kind, 'deleted');
        // Gone before the next point is armed, so its crash cannot fire on this cluster's teardown.
        await waitFor(
          `${name} gone`,
          async () => {
            const pods = await kube.list('v1', 'Pod', NS, `etcdfn.io/cluster=${name}`);
            return (await members(name)).length === 0 && pods.length === 0;
          },
          { timeoutMs: TIMEOUT },
        );
      });
    });
  },
);
