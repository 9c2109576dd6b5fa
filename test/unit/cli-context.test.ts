// Which cluster and namespace `kubectl etcdfn` talks to, chosen the way kubectl chooses them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CliError, loadCliKubeConfig, namespaceOf } from '../../cli/context.ts';
import { memberPods } from '../../cli/endpoints.ts';

const dir = mkdtempSync(join(tmpdir(), 'etcdfn-cli-ctx-'));
const file = join(dir, 'kubeconfig');
writeFileSync(
  file,
  JSON.stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'c', cluster: { server: 'http://127.0.0.1:1' } }],
    users: [{ name: 'u', user: {} }],
    contexts: [
      { name: 'plain', context: { cluster: 'c', user: 'u' } },
      { name: 'ops', context: { cluster: 'c', user: 'u', namespace: 'etcd-prod' } },
    ],
    'current-context': 'plain',
  }),
);

describe('kubectl etcdfn: kubeconfig, context and namespace', () => {
  after(() => rmSync(dir, { recursive: true, force: true }));

  it('-n wins, then the context namespace, then default', () => {
    const plain = loadCliKubeConfig({ kubeconfig: file });
    assert.equal(namespaceOf(plain, {}), 'default');
    assert.equal(namespaceOf(plain, { namespace: 'x' }), 'x');
    const ops = loadCliKubeConfig({ kubeconfig: file, context: 'ops' });
    assert.equal(namespaceOf(ops, {}), 'etcd-prod');
  });

  it('a missing kubeconfig or context is a one-line CliError', () => {
    assert.throws(() => loadCliKubeConfig({ kubeconfig: join(dir, 'nope') }), CliError);
    assert.throws(() => loadCliKubeConfig({ kubeconfig: file, context: 'nope' }), /context "nope" not found/);
    assert.throws(
      () => loadCliKubeConfig({}, { HOME: dir }),
      /no kubeconfig: pass --kubeconfig, set KUBECONFIG, or create ~\/.kube\/config/,
    );
  });
});

describe('kubectl etcdfn: which Pods are dialled', () => {
  const member = (name: string, uid: string, deleting = false) => ({
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdMember',
    metadata: { name, uid, ...(deleting && { deletionTimestamp: new Date() }) },
  });
  const pod = (name: string, ownerUid: string | undefined, ip: string | undefined = '10.0.0.1') => ({
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name,
      ...(ownerUid && {
        ownerReferences: [
          { apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdMember', name, uid: ownerUid, controller: true },
        ],
      }),
    },
    ...(ip && { status: { podIP: ip } }),
  });

  it('a Pod whose EtcdMember is gone or being deleted (a scale-down the GC has not finished) is not dialled', () => {
    const members = [member('c-0', 'u0'), member('c-1', 'u1'), member('c-3', 'u3', true)];
    const pods = [pod('c-0', 'u0'), pod('c-1', 'u1'), pod('c-3', 'u3'), pod('c-4', 'u4')];
    assert.deepEqual(
      memberPods(pods, members).map(p => p.metadata.name),
      ['c-0', 'c-1'],
    );
  });

  it('a Pod without an IP, or owned by something else, is not dialled', () => {
    const members = [member('c-0', 'u0'), member('c-1', 'u1')];
    assert.deepEqual(memberPods([pod('c-0', 'u0', ''), pod('c-1', undefined)], members), []);
  });
});
