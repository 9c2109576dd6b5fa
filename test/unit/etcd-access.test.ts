// The seam every etcd call goes through: a cluster's access from its Secrets (accessFor, pure) and
// the per-event adapter bound to it (clusterEtcd: Secrets read once per cluster object read, again
// for the next event; missing Secrets become failures naming the Secret and key).
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import type { EtcdCluster, EtcdClusterTLS } from '../../shared/api/etcd-cluster.ts';
import { accessFor, accessSecretNames, type EtcdAccess, type SecretData } from '../../shared/etcd/access.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { KubeObjects, ObjectRef } from '../../shared/k8s/objects.ts';
import { clusterEtcd, withClusterEtcd } from '../../shared/runtime/cluster-etcd.ts';
import { settingsFromEnv, type Context } from '../../shared/runtime/context.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

/** Cluster c in ns (no uid, no replicas), with `tls` if given. */
const clusterWithTls = (tls?: EtcdClusterTLS): EtcdCluster =>
  etcdCluster({
    metadata: { name: 'c', namespace: 'ns', uid: undefined },
    spec: { replicas: undefined, tls },
  });
const mtls: EtcdClusterTLS = {
  client: { serverSecretRef: { name: 'srv' }, operatorClientSecretRef: { name: 'op' } },
  peer: { secretRef: { name: 'peer' } },
};
const b = (s: string) => Buffer.from(s);
const full: Record<string, SecretData> = {
  srv: { 'ca.crt': b('CA'), 'tls.crt': b('SRV'), 'tls.key': b('SRVKEY') },
  op: { 'tls.crt': b('OP'), 'tls.key': b('OPKEY'), 'ca.crt': b('CA') },
};

describe('accessFor: a cluster’s access from its Secrets', () => {
  const cases: { name: string; tls?: EtcdClusterTLS; secrets: Record<string, SecretData>; want: string }[] = [
    { name: 'plaintext: nothing to read', secrets: {}, want: 'ok {}' },
    { name: 'peer TLS only: clients stay plaintext', tls: { peer: mtls.peer! }, secrets: {}, want: 'ok {}' },
    {
      name: 'server TLS without mTLS: the CA only',
      tls: { client: { serverSecretRef: { name: 'srv' } } },
      secrets: full,
      want: 'ok ca=CA',
    },
    {
      name: 'mTLS: CA from the server Secret, cert and key from the operator’s',
      tls: mtls,
      secrets: full,
      want: 'ok ca=CA cert=OP key=OPKEY',
    },
    {
      name: 'server Secret missing',
      tls: mtls,
      secrets: { op: full.op },
      want: 'Secret srv not found: create it with ca.crt',
    },
    {
      name: 'kubernetes.io/tls Secret without ca.crt',
      tls: mtls,
      secrets: { ...full, srv: { 'tls.crt': b('S'), 'tls.key': b('K') } },
      want: 'Secret srv has no ca.crt',
    },
    {
      name: 'operator client Secret missing',
      tls: mtls,
      secrets: { srv: full.srv },
      want: 'Secret op not found',
    },
    {
      name: 'operator key empty',
      tls: mtls,
      secrets: { ...full, op: { 'tls.crt': b('OP'), 'tls.key': b('') } },
      want: 'Secret op has no tls.key',
    },
  ];
  for (const c of cases) {
    it(c.name, () => {
      const got = accessFor(clusterWithTls(c.tls), name => c.secrets[name]);
      if (got.kind === 'ok') assert.equal(render(got.access), c.want);
      else assert.ok(got.problem.message.startsWith(c.want), got.problem.message);
    });
  }

  it('reads the server and operator client Secrets, not the peer Secret (members mount that one)', () => {
    assert.deepEqual(accessSecretNames(clusterWithTls(mtls)), ['srv', 'op']);
    assert.deepEqual(accessSecretNames(clusterWithTls()), []);
  });
});

function render(access: EtcdAccess): string {
  const t = access.tls;
  if (!t) return 'ok {}';
  return [
    'ok',
    `ca=${t.ca.toString()}`,
    t.cert && `cert=${t.cert.toString()}`,
    t.key && `key=${t.key.toString()}`,
  ]
    .filter(Boolean)
    .join(' ');
}

/** A context whose kube serves Secrets from a map (counting reads) and whose etcd records its access. */
function world(secrets: Record<string, Record<string, string>>) {
  const reads: string[] = [];
  const dialled: (EtcdAccess | 'plain')[] = [];
  const fakeEtcd = (access: EtcdAccess | 'plain'): EtcdAdapter =>
    ({
      listMembers: () => {
        dialled.push(access);
        return Promise.resolve({ kind: 'ok', members: [], clusterId: '1', endpoint: 'e' });
      },
    }) as unknown as EtcdAdapter;
  const kube = {
    find: (ref: ObjectRef) => {
      reads.push(`${ref.kind}/${ref.name}`);
      const data = secrets[ref.name];
      if (!data) return Promise.resolve(undefined);
      const encoded = Object.fromEntries(Object.entries(data).map(([k, v]) => [k, b(v).toString('base64')]));
      return Promise.resolve({ metadata: { name: ref.name }, data: encoded });
    },
  } as unknown as KubeObjects;
  const ctx: Context = {
    kube,
    etcd: fakeEtcd('plain'),
    connectEtcd: access => fakeEtcd(access),
    now: () => new Date(),
    settings: settingsFromEnv({}),
  };
  return { ctx, reads, dialled, secrets };
}

const tlsSecrets = () => ({
  srv: { 'ca.crt': 'CA1' },
  op: { 'tls.crt': 'OP1', 'tls.key': 'K1' },
});

describe('clusterEtcd: the adapter bound to one cluster for one event', () => {
  it('a plaintext cluster dials with ctx.etcd and reads no Secret', async () => {
    const w = world({});
    await clusterEtcd(w.ctx, clusterWithTls()).listMembers(['http://x']);
    assert.deepEqual(w.reads, []);
    assert.deepEqual(w.dialled, ['plain']);
  });

  it('a TLS cluster dials with its Secrets’ contents, read once for the cluster object', async () => {
    const w = world(tlsSecrets());
    const c = clusterWithTls(mtls);
    await clusterEtcd(w.ctx, c).listMembers(['https://x']);
    await withClusterEtcd(w.ctx, c).etcd.listMembers(['https://x']);
    assert.deepEqual(w.reads.sort(), ['Secret/op', 'Secret/srv']);
    assert.equal(w.dialled.length, 2);
    for (const d of w.dialled) assert.equal(d !== 'plain' && d.tls?.cert?.toString(), 'OP1');
  });

  it('the next event (a new read of the cluster) sees a rotated Secret', async () => {
    const w = world(tlsSecrets());
    await clusterEtcd(w.ctx, clusterWithTls(mtls)).listMembers(['https://x']);
    w.secrets.op = { 'tls.crt': 'OP2', 'tls.key': 'K2' };
    await clusterEtcd(w.ctx, clusterWithTls(mtls)).listMembers(['https://x']);
    const certs = w.dialled.map(d => (d === 'plain' ? 'plain' : d.tls?.cert?.toString()));
    assert.deepEqual(certs, ['OP1', 'OP2']);
  });

  it('a cluster read lazily is read on the first call only', async () => {
    const w = world(tlsSecrets());
    let gets = 0;
    const etcd = clusterEtcd(w.ctx, () => {
      gets++;
      return Promise.resolve(clusterWithTls(mtls));
    });
    await etcd.listMembers(['https://x']);
    await etcd.listMembers(['https://x']);
    assert.equal(gets, 1);
    assert.equal(w.dialled.length, 2);
  });

  it('a missing Secret fails every call with the Secret and the fix, and dials nothing', async () => {
    const w = world({ srv: { 'ca.crt': 'CA1' } });
    const etcd = clusterEtcd(w.ctx, clusterWithTls(mtls));
    const listed = await etcd.listMembers(['https://x']);
    assert.deepEqual(listed, {
      kind: 'error',
      message: "Secret op not found: create it with tls.crt (the operator's client certificate)",
    });
    const statuses = await etcd.clusterStatus(['https://a', 'https://b']);
    assert.deepEqual(
      statuses.map(s => `${s.endpoint} ${s.kind}`),
      ['https://a error', 'https://b error'],
    );
    assert.deepEqual(w.dialled, []);
  });
});
