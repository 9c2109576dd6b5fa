// Which cluster and namespace `kubectl etcdfn` talks to, chosen the way kubectl chooses them.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it } from 'node:test';
import { CliError, loadCliKubeConfig, namespaceOf } from '../../cli/context.ts';

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
