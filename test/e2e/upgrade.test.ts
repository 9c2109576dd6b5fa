// Rolling upgrade on the sandbox: a 3-member etcd 3.5.16 cluster moved to 3.5.17 by editing
// spec.version. One member at a time gets a Pod of the new release on its own volume: etcd itself
// reports the new version on every member afterwards, the member IDs and the data are the same,
// and at least two members stay ready throughout (quorum never lost).
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { beforeCreation, converged, mark, type Mark } from '../support/converge.ts';
import { kubectl } from '../support/kubectl.ts';
import { watchReadiness } from '../support/ready-watch.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';

const NS = 'default';
const NAME = 'up';
const KEYS = 200;
type Cluster = EtcdCluster & KubeObject;
interface PodLike extends KubeObject {
  status?: { podIP?: string; conditions?: { type: string; status: string }[] };
}
interface EventLike extends KubeObject {
  involvedObject?: { name?: string };
  reason?: string;
  message?: string;
}

describe('rolling upgrade 3.5.16 → 3.5.17 (chaos on)', { timeout: 600_000 }, () => {
  let sandbox: FullSandbox;
  let kube: KubeObjects;
  const ref = { apiVersion: API_VERSION, kind: 'EtcdCluster', namespace: NS, name: NAME };

  before(async () => {
    sandbox = await startFullSandbox({ chaos: true, chaosSeed: 11, tickSeconds: 5 });
    kube = new KubeObjects(sandbox.kc);
  });
  after(async () => sandbox?.stop());

  const cluster = async (): Promise<Cluster> => {
    const read = await kube.get<Cluster>(ref);
    assert.equal(read.kind, 'found');
    return (read as { object: Cluster }).object;
  };
  const readyPods = async () =>
    (await kube.list<PodLike>('v1', 'Pod', NS, `etcdfn.io/cluster=${NAME}`)).filter(
      p =>
        !p.metadata.deletionTimestamp &&
        p.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True'),
    );
  const describeWorld = async () =>
    `${JSON.stringify((await cluster()).status)}\n${sandbox.output().slice(-3000)}`;

  /** Every member's etcd, asked directly: its own version and ID. */
  async function etcdVersions(): Promise<Map<string, string>> {
    const versions = new Map<string, string>();
    for (const pod of await readyPods()) {
      const client = new Etcd3({ hosts: `http://${pod.status?.podIP}:2379`, dialTimeout: 2000 });
      try {
        const status = await client.maintenance.status();
        versions.set(pod.metadata.name ?? '', status.version);
      } finally {
        client.close();
      }
    }
    return versions;
  }

  async function withEtcd<T>(fn: (client: Etcd3) => Promise<T>): Promise<T> {
    const hosts = (await readyPods()).map(p => `http://${p.status?.podIP}:2379`);
    const client = new Etcd3({ hosts, dialTimeout: 2000 });
    try {
      return await fn(client);
    } finally {
      client.close();
    }
  }

  const probe = () => ({ kube, namespace: NS, name: NAME });
  /** 3 members on `version` (status, EtcdMembers and each etcd itself), converged after `since`. */
  const reached = async (version: string, since: Mark) => {
    const c = await converged(probe(), {
      replicas: 3,
      since,
      version,
      timeoutMs: 300_000,
      describe: describeWorld,
    });
    assert.equal(c.status?.conditions?.find(x => x.type === 'Progressing')?.reason, 'Reconciled');
    return c;
  };

  let ids = new Map<string, string | undefined>();

  it('runs 3 members of etcd 3.5.16 with data', async () => {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: NAME, namespace: NS },
      spec: { replicas: 3, version: '3.5.16', storage: { size: '1Gi' } },
    });
    assert.equal(created.kind, 'created');
    const c = await reached('3.5.16', beforeCreation());
    ids = new Map(c.status?.members?.map(m => [m.name, m.id]));
    assert.deepEqual([...(await etcdVersions()).values()], ['3.5.16', '3.5.16', '3.5.16']);
    await withEtcd(client =>
      Promise.all(
        Array.from({ length: KEYS }, (_, i) =>
          client
            .put(`up/${String(i).padStart(3, '0')}`)
            .value(`v${i}`)
            .exec(),
        ),
      ),
    );
  });

  it('moves to 3.5.17 one member at a time, same member IDs, data intact', async () => {
    const since = await mark(probe());
    const readiness = await watchReadiness(sandbox.kc, NS, `etcdfn.io/cluster=${NAME}`);
    try {
      await kubectl(
        sandbox.kubeconfig,
        'patch',
        'etcdcluster',
        NAME,
        '-n',
        NS,
        '--type=merge',
        '-p',
        '{"spec":{"version":"3.5.17"}}',
      );
      const c = await reached('3.5.17', since);
      assert.deepEqual(new Map(c.status?.members?.map(m => [m.name, m.id])), ids, 'same members, same IDs');
    } finally {
      readiness.stop();
    }
    const fewestReady = readiness.fewest();
    assert.ok(
      fewestReady >= 2,
      `at most one member was down at a time (fewest ready: ${fewestReady}; ${readiness.seen().join(', ')})`,
    );
    const versions = await etcdVersions();
    assert.deepEqual(
      [...versions.values()],
      ['3.5.17', '3.5.17', '3.5.17'],
      'etcd itself reports 3.5.17 everywhere',
    );
    const count = await withEtcd(client => client.getAll().prefix('up/').count());
    assert.equal(count, KEYS, 'every key written on 3.5.16 is readable on 3.5.17');
    const events = await kube.list<EventLike>('v1', 'Event', NS);
    const upgrading = events.filter(e => e.reason === 'UpgradingMember').map(e => e.involvedObject?.name);
    for (const name of ids.keys())
      assert.ok(upgrading.includes(name), `an UpgradingMember event for ${name}`);
  });
});
