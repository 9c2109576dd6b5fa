// A 3-member etcd 3.5 cluster from hand-written Pods on the sandbox's process kubelet: DNS peer
// URLs through a headless Service, data on PVCs, a member killed and restarted on the same data,
// and a member Pod deleted and recreated on its surviving PVC.
//
// The sandbox (the real control plane + our kubelet) runs as a child process in its own mount namespace (see
// test/sandbox/kubelet/harness.ts), so the etcd members resolve `<pod>.etcd.default.svc`; this
// test process reaches them by status.podIP.
import assert from 'node:assert/strict';
import { Resolver } from 'node:dns/promises';
import { existsSync, readdirSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { noop } from 'cockatiel';
import { Etcd3 } from 'etcd3';
import type { Sandbox } from '../sandbox/kubelet/harness.ts';
import { startSandbox } from '../sandbox/kubelet/harness.ts';
import { VOLUMES_ANNOTATION } from '../sandbox/kubelet/index.ts';
import { isReady, waitFor, waitForPod, waitForPodGone } from '../sandbox/kubelet/wait.ts';

const NS = 'default';
const MEMBERS = ['etcd-0', 'etcd-1', 'etcd-2'];
const peer = (m: string): string => `http://${m}.etcd.${NS}.svc:2380`;

function memberPod(name: string): V1Pod {
  return {
    metadata: { name, labels: { app: 'etcd-e2e' } },
    spec: {
      hostname: name,
      subdomain: 'etcd',
      terminationGracePeriodSeconds: 5,
      containers: [
        {
          name: 'etcd',
          image: 'registry.k8s.io/etcd:3.5.16-0',
          command: ['/usr/local/bin/etcd'],
          args: [
            '--name=$(POD_NAME)',
            '--data-dir=/var/lib/etcd/data',
            '--listen-client-urls=http://0.0.0.0:2379',
            `--advertise-client-urls=http://$(POD_NAME).etcd.${NS}.svc:2379`,
            '--listen-peer-urls=http://0.0.0.0:2380',
            `--initial-advertise-peer-urls=http://$(POD_NAME).etcd.${NS}.svc:2380`,
            `--initial-cluster=${MEMBERS.map(m => `${m}=${peer(m)}`).join(',')}`,
            '--initial-cluster-state=new',
            '--initial-cluster-token=kubelet-e2e',
            '--heartbeat-interval=20',
            '--election-timeout=200',
            '--unsafe-no-fsync',
          ],
          env: [{ name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } }],
          ports: [
            { name: 'client', containerPort: 2379 },
            { name: 'peer', containerPort: 2380 },
          ],
          readinessProbe: {
            httpGet: { path: '/health', port: 'client' },
            periodSeconds: 1,
            failureThreshold: 3,
          },
          livenessProbe: {
            tcpSocket: { port: 'peer' },
            initialDelaySeconds: 5,
            periodSeconds: 2,
            failureThreshold: 5,
          },
          volumeMounts: [{ name: 'data', mountPath: '/var/lib/etcd' }],
        },
      ],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: `data-${name}` } }],
    },
  };
}

function client(ip: string): Etcd3 {
  return new Etcd3({
    hosts: `http://${ip}:2379`,
    faultHandling: { global: noop, host: () => noop },
    defaultCallOptions: ctx => (ctx.isStream ? {} : { deadline: Date.now() + 3000 }),
  });
}

/** Runs `fn` with a client of one member, closing it afterwards. */
async function withMember<T>(ip: string, fn: (c: Etcd3) => Promise<T>): Promise<T> {
  const c = client(ip);
  try {
    return await fn(c);
  } finally {
    c.close();
  }
}

function dataDirOf(pod: V1Pod): string {
  const volumes = JSON.parse(pod.metadata?.annotations?.[VOLUMES_ANNOTATION] ?? '{}') as Record<
    string,
    { hostPath: string }
  >;
  return volumes.data.hostPath;
}

describe('kubelet: 3-member etcd 3.5 cluster from hand-written Pods', () => {
  let sandbox: Sandbox;
  const ips = new Map<string, string>();
  const ids = new Map<string, string>();

  before(async () => {
    sandbox = await startSandbox();
    assert.equal(sandbox.dnsActive, true, 'the sandbox runs in its private mount namespace with DNS');
    const { core } = sandbox;
    await core.createNamespacedService({
      namespace: NS,
      body: {
        metadata: { name: 'etcd' },
        spec: {
          clusterIP: 'None',
          publishNotReadyAddresses: true,
          selector: { app: 'etcd-e2e' },
          ports: [
            { name: 'client', port: 2379 },
            { name: 'peer', port: 2380 },
          ],
        },
      },
    });
    for (const m of MEMBERS) {
      await core.createNamespacedPersistentVolumeClaim({
        namespace: NS,
        body: {
          metadata: { name: `data-${m}` },
          spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
        },
      });
    }
    for (const m of MEMBERS) await core.createNamespacedPod({ namespace: NS, body: memberPod(m) });
  });

  after(async () => {
    await sandbox?.stop();
  });

  it('reaches Ready with every PVC Bound, and takes writes through each member IP', async () => {
    const { core } = sandbox;
    for (const m of MEMBERS) {
      const pod = await waitForPod(core, `${NS}/${m}`, 'to be Ready', isReady, 60_000);
      ips.set(m, pod.status!.podIP!);
    }
    assert.equal(new Set(ips.values()).size, 3, 'each Pod has its own IP');
    for (const m of MEMBERS) {
      const pvc = await core.readNamespacedPersistentVolumeClaim({ name: `data-${m}`, namespace: NS });
      assert.equal(pvc.status?.phase, 'Bound');
      assert.equal(pvc.status?.capacity?.storage, '1Gi');
    }
    for (const m of MEMBERS) await withMember(ips.get(m)!, c => c.put(`key-${m}`).value(`value-${m}`).exec());
    const { members } = await withMember(ips.get('etcd-0')!, c =>
      c.cluster.memberList({ linearizable: true }),
    );
    assert.deepEqual(members.map(m => m.name).sort(), MEMBERS);
    for (const m of members) {
      ids.set(m.name, m.ID);
      assert.deepEqual(m.peerURLs, [peer(m.name)], 'members advertise their DNS peer URLs');
    }
    // No Endpoints are written (the API server refuses loopback Pod IPs there): the Service's
    // addresses are the DNS's own, checked in the next test.
  });

  it('answers Pod and Service names over DNS the moment they exist, and nothing else', async t => {
    const server = sandbox.nameServerIP;
    if (!server) return t.skip('no right to listen on port 53 here: names come from the hosts file alone');
    const resolver = new Resolver({ timeout: 2000, tries: 1 });
    resolver.setServers([server]);
    const pod0 = `etcd-0.etcd.${NS}.svc`;
    assert.deepEqual(await resolver.resolve4(pod0), [ips.get('etcd-0')]);
    assert.deepEqual(await resolver.resolve4(`${pod0}.cluster.local`), [ips.get('etcd-0')]);
    assert.deepEqual((await resolver.resolve4(`etcd.${NS}.svc`)).sort(), [...ips.values()].sort());
    await assert.rejects(resolver.resolve6(pod0), { code: 'ENODATA' }, 'a known name has no IPv6 address');
    await assert.rejects(resolver.resolve4(`etcd-9.etcd.${NS}.svc`), { code: 'ENOTFOUND' });
    await assert.rejects(resolver.resolve4('example.com'), { code: 'ENOTFOUND' }, 'there is no upstream');
  });

  it('restarts a killed member on the same data directory with its keys', async () => {
    const { core, faults } = sandbox;
    const before = await waitForPod(core, `${NS}/etcd-1`, 'to be Ready', isReady);
    const dir = dataDirOf(before);
    assert.ok(existsSync(join(dir, 'data', 'member')), 'etcd wrote its data into the PVC directory');
    const { killed } = await faults.kill({ namespace: NS, pod: 'etcd-1' });
    assert.equal(killed[0]?.container, 'etcd');
    const restarted = await waitForPod(
      core,
      `${NS}/etcd-1`,
      'to restart and be Ready again',
      p => (p.status?.containerStatuses?.[0]?.restartCount ?? 0) >= 1 && isReady(p),
      60_000,
    );
    const status = restarted.status!.containerStatuses![0];
    assert.equal(status.lastState?.terminated?.exitCode, 137, 'the previous run died of SIGKILL');
    assert.equal(restarted.status!.podIP, ips.get('etcd-1'), 'same Pod, same IP');
    assert.equal(dataDirOf(restarted), dir, 'same data directory');
    const ip = ips.get('etcd-1')!;
    for (const m of MEMBERS) {
      const value = await withMember(ip, c => c.get(`key-${m}`).serializable(true).string());
      assert.equal(value, `value-${m}`);
    }
    const { members } = await withMember(ip, c => c.cluster.memberList({ linearizable: true }));
    assert.equal(members.find(m => m.name === 'etcd-1')?.ID, ids.get('etcd-1'), 'the member kept its ID');
    await waitFor('every member healthy with one leader', async () => {
      const statuses = await Promise.all(
        MEMBERS.map(m => withMember(ips.get(m)!, c => c.maintenance.status())),
      );
      return new Set(statuses.map(s => s.leader)).size === 1 && statuses[0].leader !== '0';
    });
    await withMember(ip, c => c.put('after-restart').value('yes').exec());
  });

  it('keeps PVC data across Pod deletion and re-creation', async () => {
    const { core } = sandbox;
    const old = await waitForPod(core, `${NS}/etcd-2`, 'to be Ready', isReady);
    const dir = dataDirOf(old);
    await core.deleteNamespacedPod({ name: 'etcd-2', namespace: NS });
    await waitForPodGone(core, NS, 'etcd-2');
    assert.ok(readdirSync(join(dir, 'data', 'member')).length > 0, 'the claim outlives the Pod');
    await core.createNamespacedPod({ namespace: NS, body: memberPod('etcd-2') });
    const pod = await waitForPod(core, `${NS}/etcd-2`, 'to be Ready again', isReady, 60_000);
    assert.equal(dataDirOf(pod), dir, 'the new Pod mounts the same claim directory');
    const ip = pod.status!.podIP!;
    await waitFor('etcd-2 to have caught up', () =>
      withMember(ip, async c => (await c.get('after-restart').serializable(true).string()) === 'yes'),
    );
    for (const m of MEMBERS) {
      assert.equal(await withMember(ip, c => c.get(`key-${m}`).serializable(true).string()), `value-${m}`);
    }
    const { members } = await withMember(ip, c => c.cluster.memberList({ linearizable: true }));
    assert.equal(members.find(m => m.name === 'etcd-2')?.ID, ids.get('etcd-2'));
  });
});
