import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  clientUrl,
  clusterClientUrl,
  clusterLabels,
  clusterSelector,
  clusterToken,
  initialCluster,
  memberLabels,
  mergeMetadata,
  peerUrl,
} from '../../shared/names.ts';

describe('names and labels', () => {
  it('every cluster object carries etcdfn.io/cluster, and the selector selects it', () => {
    assert.equal(clusterLabels('demo')['etcdfn.io/cluster'], 'demo');
    assert.equal(clusterSelector('demo'), 'etcdfn.io/cluster=demo');
  });

  it('member labels add the member and, once known, the role', () => {
    assert.equal(memberLabels('demo', 'demo-abc')['etcdfn.io/member'], 'demo-abc');
    assert.equal(memberLabels('demo', 'demo-abc')['etcdfn.io/role'], undefined);
    assert.equal(memberLabels('demo', 'demo-abc', 'learner')['etcdfn.io/role'], 'learner');
  });

  it('user metadata cannot override operator keys or use the etcdfn.io/ prefix', () => {
    const merged = mergeMetadata(
      { team: 'db', 'etcdfn.io/role': 'voter', 'app.kubernetes.io/name': 'mine' },
      clusterLabels('demo'),
    );
    assert.equal(merged.team, 'db');
    assert.equal(merged['etcdfn.io/role'], undefined);
    assert.equal(merged['app.kubernetes.io/name'], 'etcd');
  });

  it('URLs use the stable per-member DNS name and the scheme of the plane', () => {
    const m = { namespace: 'prod', cluster: 'demo', member: 'demo-abc' };
    assert.equal(peerUrl(m), 'http://demo-abc.demo.prod.svc:2380');
    assert.equal(clientUrl({ ...m, tls: true }), 'https://demo-abc.demo.prod.svc:2379');
    assert.equal(clusterClientUrl('prod', 'demo'), 'http://demo-client.prod.svc:2379');
  });

  it('initial-cluster is sorted, so every member computes the same string', () => {
    const a = { name: 'demo-b', peerUrl: 'http://b:2380' };
    const b = { name: 'demo-a', peerUrl: 'http://a:2380' };
    assert.equal(initialCluster([a, b]), 'demo-a=http://a:2380,demo-b=http://b:2380');
  });

  it('the cluster token differs between incarnations of the same name', () => {
    assert.notEqual(clusterToken('ns', 'demo', 'uid-1'), clusterToken('ns', 'demo', 'uid-2'));
  });
});
