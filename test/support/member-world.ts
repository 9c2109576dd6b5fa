// Worlds for planMember's table tests: member demo-1 of cluster demo in prod, its Pod and PVC
// (ours, stale or foreign), etcd's membership and the member's own report. The cluster and member
// are etcd-objects.ts's, with this world's uids and token.
import type { V1ObjectMeta, V1PersistentVolumeClaim, V1Pod } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember, EtcdMemberSpec, EtcdMemberStatus } from '../../shared/api/etcd-member.ts';
import { controllerRef } from '../../shared/builders/owner.ts';
import { findCondition } from '../../shared/conditions.ts';
import type { EtcdMember as EtcdMembership } from '../../shared/etcd/members.ts';
import type { MemberStatus as SelfReport } from '../../shared/etcd/status.ts';
import type { MemberPlan, MemberState } from '../../shared/plan/member/plan.ts';
import { etcdCluster, etcdMember } from './etcd-objects.ts';

export const NOW = new Date('2026-11-22T10:00:00.000Z');
export const LATER = new Date('2026-11-22T10:05:00.000Z');
export const CLUSTER_ID = 'c0ffee0000000001';
export const PEER = 'http://demo-1.demo.prod.svc:2380';
export const CLIENT = 'http://demo-1.demo.prod.svc:2379';
export const ID = '8e9e05c52164694d';

export function cluster(
  status: EtcdCluster['status'] = { clusterID: CLUSTER_ID },
  deleting = false,
): EtcdCluster {
  return etcdCluster({
    metadata: { uid: 'cluster-uid', deletionTimestamp: deleting ? NOW : undefined },
    status,
  });
}

export function member(
  spec: Partial<EtcdMemberSpec> = {},
  status?: EtcdMemberStatus,
  deleting = false,
): EtcdMember {
  return etcdMember('demo-1', {
    metadata: {
      uid: 'member-uid',
      generation: 2,
      resourceVersion: '10',
      labels: { 'etcdfn.io/cluster': 'demo' },
      finalizers: ['etcdfn.io/member-cleanup'],
      deletionTimestamp: deleting ? NOW : undefined,
    },
    spec: {
      storage: { size: '1Gi', medium: '' },
      initialCluster: `demo-0=http://demo-0.demo.prod.svc:2380,demo-1=${PEER}`,
      clusterToken: 'prod-demo-cluster-uid',
      ...spec,
    },
    ...(status && { status }),
  });
}

export type Owner = 'ours' | 'stale' | 'foreign';

export function ownerMeta(
  m: EtcdMember,
  owner: Owner,
): Pick<V1ObjectMeta, 'ownerReferences'> & { labels: Record<string, string> } {
  if (owner === 'ours')
    return { ownerReferences: [controllerRef(m)], labels: { 'etcdfn.io/cluster': 'demo' } };
  if (owner === 'stale') {
    const old = { ...m, metadata: { ...m.metadata, uid: 'old-member-uid' } };
    return { ownerReferences: [controllerRef(old)], labels: { 'etcdfn.io/cluster': 'demo' } };
  }
  return { labels: { app: 'something-else' } };
}

export interface PodOptions {
  owner?: Owner;
  ready?: boolean;
  phase?: string;
  deleting?: boolean;
  role?: string;
  uid?: string;
  status?: V1Pod['status'];
}

export function pod(m: EtcdMember, o: PodOptions = {}): V1Pod {
  const meta = ownerMeta(m, o.owner ?? 'ours');
  const labels: Record<string, string> = { ...meta.labels, ...(o.role && { 'etcdfn.io/role': o.role }) };
  return {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: {
      name: 'demo-1',
      namespace: 'prod',
      uid: o.uid ?? 'pod-uid',
      labels,
      ...(meta.ownerReferences && { ownerReferences: meta.ownerReferences }),
      ...(o.deleting && { deletionTimestamp: NOW }),
    },
    status: o.status ?? {
      phase: o.phase ?? 'Running',
      conditions: [{ type: 'Ready', status: o.ready === false ? 'False' : 'True' }],
    },
  };
}

export function pvc(m: EtcdMember, owner: Owner = 'ours', deleting = false): V1PersistentVolumeClaim {
  const meta = ownerMeta(m, owner);
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: {
      name: 'data-demo-1',
      namespace: 'prod',
      ...meta,
      ...(deleting && { deletionTimestamp: NOW }),
    },
  };
}

export function inEtcd(o: Partial<EtcdMembership> = {}): EtcdMembership {
  return {
    id: ID,
    name: 'demo-1',
    peerURLs: [PEER],
    clientURLs: [CLIENT],
    isLearner: false,
    started: true,
    ...o,
  };
}

export const other = inEtcd({
  id: '00000000000000aa',
  name: 'demo-0',
  peerURLs: ['http://demo-0.demo.prod.svc:2380'],
  clientURLs: ['http://demo-0.demo.prod.svc:2379'],
});

export function self(o: Partial<SelfReport> = {}): SelfReport {
  return {
    endpoint: CLIENT,
    memberId: ID,
    clusterId: CLUSTER_ID,
    leaderId: other.id,
    isLeader: false,
    isLearner: false,
    version: '3.5.16',
    raftTerm: 2,
    raftIndex: 10,
    raftAppliedIndex: 10,
    dbSize: 1,
    dbSizeInUse: 1,
    errors: [],
    ...o,
  };
}

export function state(m: EtcdMember, extra: Partial<MemberState> = {}): MemberState {
  return { now: NOW, member: m, cluster: cluster(), ...extra };
}

/** A running member with its PVC, as most rows start. */
export function running(m: EtcdMember, extra: Partial<MemberState> = {}): MemberState {
  return state(m, { pvc: pvc(m), ...extra });
}

export const ready = (p: MemberPlan) => findCondition(p.status.conditions, 'Ready');

/** The member as it is once the plan's status has been written. */
export function written(m: EtcdMember, p: MemberPlan): EtcdMember {
  return { ...m, status: p.status };
}
