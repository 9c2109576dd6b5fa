// What a member records about itself (shared/plan/member/step.ts, shared/plan/member/status.ts):
// the PVC its data is on (only its own, as first seen), the Pod it runs in (only its own), and what
// etcd calls it. These records are the evidence the data-loss guards read later, so a PVC or Pod
// that is not the member's must never be recorded. Written against the mutants StrykerJS left alive.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { EtcdMemberTLS } from '../../shared/api/etcd-member.ts';
import { planMember } from '../../shared/plan/member/plan.ts';
import {
  CLUSTER_ID,
  ID,
  PEER,
  other,
  self,
  cluster,
  inEtcd,
  member,
  pod,
  pvc,
  ready,
  running,
  state,
  type Owner,
} from '../support/member-world.ts';

const claim = (
  m: ReturnType<typeof member>,
  owner: Owner,
  uid: string,
  deleting = false,
): V1PersistentVolumeClaim => {
  const p = pvc(m, owner, deleting);
  return { ...p, metadata: { ...p.metadata, uid } };
};

describe('the PVC UID recorded (where the data is)', () => {
  const rows: { name: string; owner: Owner; deleting?: boolean; recorded?: string }[] = [
    { name: 'its own PVC, first seen: recorded', owner: 'ours', recorded: 'pvc-uid' },
    { name: 'its own PVC being deleted: not recorded', owner: 'ours', deleting: true },
    { name: "an earlier member's PVC of the same name: never recorded", owner: 'stale' },
    { name: "someone else's PVC of the same name: never recorded", owner: 'foreign' },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const m = member();
      const p = planMember(state(m, { pvc: claim(m, row.owner, 'pvc-uid', row.deleting) }));
      assert.equal(p.status.pvcUID, row.recorded);
    });
  }

  it('once recorded, a PVC seen later with another UID does not overwrite it (it is evidence of loss)', () => {
    const m = member({}, { memberID: ID, isVoter: true, pvcUID: 'first-uid' });
    const p = planMember(state(m, { pvc: claim(m, 'ours', 'second-uid'), pod: pod(m, { role: 'voter' }) }));
    assert.equal(p.status.pvcUID, 'first-uid');
    assert.equal(p.status.dataLoss?.reason, 'PVCReplaced');
  });
});

describe('the Pod recorded (where the member runs)', () => {
  for (const owner of ['stale', 'foreign'] as const) {
    it(`a ${owner} Pod of its name is not recorded while the member waits to join`, () => {
      const m = member({ initialCluster: '' });
      const p = planMember(state(m, { pod: pod(m, { owner, uid: 'not-mine' }) }));
      assert.equal(p.status.podName, undefined);
      assert.equal(p.status.podUID, undefined);
    });

    it(`a member whose data is lost never stops a ${owner} Pod of its name: it waits`, () => {
      const m = member(
        {},
        {
          memberID: ID,
          isVoter: true,
          dataLoss: {
            reason: 'PVCMissing',
            message: 'PVC data-demo-1 is gone',
            detectedAt: '2026-11-22T09:00:00Z',
          },
        },
      );
      const p = planMember(running(m, { pod: pod(m, { owner, uid: 'not-mine' }) }));
      assert.equal(p.action.kind, 'wait');
      assert.equal(p.status.podUID, undefined);
    });
  }

  it('its own Pod is recorded while it waits to join', () => {
    const m = member({ initialCluster: '' });
    const p = planMember(state(m, { pod: pod(m, { uid: 'mine', ready: false }) }));
    assert.equal(p.status.podName, 'demo-1');
    assert.equal(p.status.podUID, 'mine');
  });
});

describe('etcd’s view of the member', () => {
  it('with no cluster ID recorded yet, the view that answered is taken', () => {
    const m = member({ bootstrap: true, initialCluster: `demo-1=${PEER}` });
    const c = cluster();
    delete c.status;
    const p = planMember(
      running(m, {
        cluster: c,
        pod: pod(m, { role: 'voter' }),
        etcd: { members: [inEtcd()], clusterId: CLUSTER_ID },
      }),
    );
    assert.equal(p.status.memberID, ID);
    assert.equal(p.status.hasData, true);
    assert.deepEqual([ready(p)?.status, ready(p)?.reason], ['True', 'PodReady']);
  });
});

describe('the URLs the member advertises follow its own TLS settings', () => {
  const rows: {
    name: string;
    tls: EtcdMemberTLS;
    peer: string;
    client: string;
  }[] = [
    {
      name: 'peer TLS only',
      tls: { peerSecretRef: { name: 'peer-tls' } },
      peer: 'https://demo-1.demo.prod.svc:2380',
      client: 'http://demo-1.demo.prod.svc:2379',
    },
    {
      name: 'client TLS only',
      tls: { clientServerSecretRef: { name: 'client-tls' } },
      peer: 'http://demo-1.demo.prod.svc:2380',
      client: 'https://demo-1.demo.prod.svc:2379',
    },
  ];
  for (const row of rows) {
    it(row.name, () => {
      const p = planMember(state(member({ tls: row.tls, initialCluster: '' })));
      assert.deepEqual([p.status.peerURL, p.status.clientURL], [row.peer, row.client]);
    });
  }
});

describe('finding the member in etcd’s list', () => {
  it('by its name once started, whatever peer URL etcd lists', () => {
    const m = member();
    const etcd = { members: [other, inEtcd({ peerURLs: ['http://10.0.0.7:2380'] })], clusterId: CLUSTER_ID };
    const p = planMember(running(m, { pod: pod(m, { ready: false }), etcd }));
    assert.equal(p.status.memberID, ID);
    assert.equal(p.status.role, 'voter');
  });

  it('by any one of its peer URLs before it has started', () => {
    const m = member();
    const entry = inEtcd({
      name: '',
      started: false,
      isLearner: true,
      peerURLs: ['http://10.0.0.7:2380', PEER],
    });
    const p = planMember(
      running(m, { pod: pod(m, { ready: false }), etcd: { members: [other, entry], clusterId: CLUSTER_ID } }),
    );
    assert.equal(p.status.memberID, ID);
    assert.equal(p.status.role, 'learner');
  });
});

describe('what the member’s own endpoint says', () => {
  it('an answer under the recorded ID gives the running version, and proves the volume holds data', () => {
    const m = member({}, { memberID: ID, isVoter: true, role: 'voter', podUID: 'pod-uid' });
    const p = planMember(running(m, { pod: pod(m, { role: 'voter' }), self: self({ version: '3.5.17' }) }));
    assert.equal(p.status.version, '3.5.17');
    assert.equal(p.status.hasData, true);
  });

  it('with no ID recorded, the answer brings it, and the proof', () => {
    const m = member({}, { isVoter: true, role: 'voter' });
    const p = planMember(running(m, { pod: pod(m, { role: 'voter' }), self: self() }));
    assert.equal(p.status.memberID, ID);
    assert.equal(p.status.hasData, true);
  });

  it('an answer from another member ID (the address now reaches someone else) is not taken', () => {
    const m = member(
      {},
      { memberID: ID, isVoter: true, role: 'voter', podUID: 'pod-uid', version: '3.5.16' },
    );
    const p = planMember(
      running(m, {
        pod: pod(m, { role: 'voter' }),
        self: self({ memberId: '00000000000000bb', version: '3.4.23' }),
      }),
    );
    assert.equal(p.status.memberID, ID);
    assert.equal(p.status.version, '3.5.16');
    assert.equal(p.status.hasData, undefined);
  });
});
