// Worlds for planCluster's table tests: a cluster "demo" in "prod", members demo-N (both built by
// etcd-objects.ts), their Pods (ready unless told otherwise) and etcd's membership as the members
// would answer it.
import type { EtcdCluster, EtcdClusterStatus } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import { buildNetworkPolicy } from '../../shared/builders/network-policy.ts';
import { buildPdb } from '../../shared/builders/pdb.ts';
import { buildClientService, buildHeadlessService } from '../../shared/builders/services.ts';
import type { EtcdMember as Membership } from '../../shared/etcd/members.ts';
import type { ClusterState, EtcdView } from '../../shared/plan/cluster/types.ts';
import { etcdCluster, etcdMember } from './etcd-objects.ts';

export const NOW = new Date('2026-11-22T10:00:00Z');
export const LATER = new Date('2026-11-22T10:30:00Z');

export function cluster(spec: Partial<EtcdCluster['spec']> = {}, status?: EtcdClusterStatus): EtcdCluster {
  return etcdCluster({
    metadata: { generation: 1, resourceVersion: '10' },
    spec: { storage: { size: '1Gi', medium: '' }, progressDeadlineSeconds: 600, ...spec },
    ...(status && { status }),
  });
}

export const observed = (replicas: number) => ({
  replicas,
  version: '3.5.16',
  storage: { size: '1Gi', medium: '' },
});
export const locked = (replicas: number, extra: EtcdClusterStatus = {}): EtcdClusterStatus => ({
  clusterToken: 'prod-demo-uid-1',
  observed: observed(replicas),
  progressDeadline: '2026-11-22T10:10:00Z',
  nextMemberOrdinal: replicas,
  ...extra,
});

export function member(
  ordinal: number,
  opts: { bootstrap?: boolean; dormant?: boolean; wired?: boolean; deleting?: boolean; voter?: boolean } = {},
): EtcdMember {
  return etcdMember(`demo-${ordinal}`, {
    metadata: { deletionTimestamp: opts.deleting ? NOW : undefined },
    spec: {
      bootstrap: opts.bootstrap ?? ordinal === 0,
      ...(opts.wired === false && { initialCluster: '' }),
      dormant: opts.dormant ? true : undefined,
    },
    status: { isVoter: opts.voter ?? true },
  });
}

export const membership = (
  ordinal: number,
  opts: { learner?: boolean; started?: boolean } = {},
): Membership => ({
  id: (0x1000 + ordinal).toString(16).padStart(16, '0'),
  name: opts.started === false ? '' : `demo-${ordinal}`,
  peerURLs: [`http://demo-${ordinal}.demo.prod.svc:2380`],
  clientURLs: opts.started === false ? [] : [`http://demo-${ordinal}.demo.prod.svc:2379`],
  isLearner: opts.learner ?? false,
  started: opts.started ?? true,
});

export function state(
  c: EtcdCluster,
  members: EtcdMember[],
  opts: {
    ready?: number[];
    etcd?: EtcdView;
    services?: boolean;
    pdb?: boolean;
    networkPolicy?: boolean;
    now?: Date;
  } = {},
): ClusterState {
  const ready = opts.ready ?? members.map((_, i) => i);
  const s: ClusterState = {
    now: opts.now ?? NOW,
    cluster: c,
    members,
    pods: members
      .filter(m => !m.spec.dormant)
      .map(m => ({
        name: m.metadata.name ?? '',
        ready: ready.includes(Number(m.metadata.name?.split('-')[1])),
        phase: 'Running',
        deleting: false,
      })),
    services:
      opts.services === false ? {} : { headless: buildHeadlessService(c), client: buildClientService(c) },
  };
  if (opts.etcd) s.etcd = opts.etcd;
  if (opts.networkPolicy !== false) s.networkPolicy = buildNetworkPolicy(c);
  if (opts.pdb !== false) {
    const voters = opts.etcd?.reachable ? opts.etcd.members.filter(m => !m.isLearner).length : 0;
    const pdb = buildPdb(c, { voters });
    if (pdb) s.pdb = pdb;
  }
  return s;
}

export const etcdOf = (members: Membership[], leader = 0): EtcdView => ({
  reachable: true,
  members,
  clusterId: 'c0ffee0000000001',
  leaderId: members.find(m => m.name === `demo-${leader}`)?.id ?? members[0]?.id,
});
