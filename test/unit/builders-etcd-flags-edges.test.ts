// The etcd command line (shared/builders/etcd-flags.ts) in the cases its mutation run found
// unpinned by builders-etcd-flags.test.ts: the one-start quorum-loss recovery flag, versions that
// look almost right, the empty-data guard over peer TLS, a static initial member that has no status
// yet, a joining member whose initial list holds the whole cluster, and the words of the refusals.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdMember, EtcdMemberSpec, EtcdMemberStatus } from '../../shared/api/etcd-member.ts';
import {
  etcdFlags,
  etcdMinor,
  initialClusterState,
  isStaticInitialMember,
} from '../../shared/builders/index.ts';
import { etcdMember } from '../support/etcd-objects.ts';

const NS = 'prod';
const ALL = [0, 1, 2].map(i => `demo-${i}=http://demo-${i}.demo.prod.svc:2380`).join(',');

/** Member `name` joining (not bootstrap) a 3-member demo, token prod-demo-uid. */
function member(spec: Partial<EtcdMemberSpec> = {}, status?: EtcdMemberStatus, name = 'demo-1'): EtcdMember {
  return etcdMember(name, {
    metadata: { namespace: NS, uid: 'member-uid' },
    spec: { initialCluster: ALL, clusterToken: 'prod-demo-uid', bootstrap: false, ...spec },
    ...(status && { status }),
  });
}
const flags = (m: EtcdMember) => etcdFlags(m, { namespace: NS, clusterFormed: true });

describe('etcd flags: edges', () => {
  it('--force-new-cluster only for the one start of a quorum-loss recovery', () => {
    assert.equal(flags(member({ forceNewCluster: true })).filter(f => f === '--force-new-cluster').length, 1);
    for (const spec of [{}, { forceNewCluster: false }]) {
      assert.ok(!flags(member(spec)).some(f => f.includes('force-new-cluster')), JSON.stringify(spec));
    }
  });

  it('a version with anything after MAJOR.MINOR.PATCH is refused, with what to write instead', () => {
    for (const v of ['3.5.16-rc.0', '3.5.16.1', '3.5.16 ']) {
      assert.throws(
        () => etcdMinor(v),
        {
          message: `etcd version "${v}" is not supported: use a 3.4, 3.5, 3.6, 3.7 release written MAJOR.MINOR.PATCH`,
        },
        v,
      );
    }
  });

  it('the refusals of a member that cannot have a command line yet say why', () => {
    const unnamed = member();
    delete unnamed.metadata.name;
    assert.throws(() => flags(unnamed), {
      message: 'etcdFlags: the member has no name yet (build its Pod after creating it)',
    });
    assert.throws(() => flags(member({ initialCluster: '' })), {
      message:
        'etcdFlags: EtcdMember demo-1 has no initialCluster; it must be added to etcd (or be the seed ' +
        'with itself as initial cluster) before its Pod is built',
    });
  });

  it('the empty-data guard of a member with peer TLS lists itself at its https peer URL', () => {
    const guarded = member(
      { tls: { peerSecretRef: { name: 'p' } } },
      { memberID: '8e9e05c52164694d', hasData: true },
    );
    const f = flags(guarded);
    assert.ok(f.includes('--initial-cluster=demo-1=https://demo-1.demo.prod.svc:2380'), f.join('\n'));
    assert.ok(f.includes('--initial-cluster-state=existing'), f.join('\n'));
  });

  it('a static initial member just created (no status yet) starts new', () => {
    const fresh = member({ bootstrap: true });
    assert.equal(fresh.status, undefined);
    assert.equal(initialClusterState(fresh, { namespace: NS, clusterFormed: false }), 'new');
  });

  it('a member joining a running cluster is no static initial member, whatever its initial list holds', () => {
    assert.equal(isStaticInitialMember(member({ bootstrap: false })), false);
    assert.equal(isStaticInitialMember(member({ bootstrap: true })), true);
    assert.equal(
      isStaticInitialMember(member({ bootstrap: true, initialCluster: 'demo-0=http://x:2380' })),
      false,
    );
  });
});
