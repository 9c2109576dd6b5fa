// Facts about a cluster's members that both planners and the status share.
import type { V1ObjectMeta } from '@kubernetes/client-node';
import type { EtcdCluster } from '../../api/etcd-cluster.ts';
import { ETCD_MEMBER } from '../../api/group.ts';
import type { EtcdMember } from '../../api/etcd-member.ts';
import type { EtcdMember as EtcdMembership } from '../../etcd/members.ts';
import { isMemoryMedium } from '../../builders/storage.ts';
import { clientUrl, peerUrl } from '../../names.ts';
import type { ClusterState, PodFacts } from './types.ts';

export const memberName = (cluster: string, ordinal: number): string => `${cluster}-${ordinal}`;

export function ordinalOf(member: EtcdMember): number {
  const match = /-(\d+)$/.exec(member.metadata.name ?? '');
  return match ? Number(match[1]) : -1;
}

/**
 * The EtcdMembers that are this cluster's: labelled with its name (the list's selector) and not
 * owned by another EtcdCluster (a different UID: a cluster deleted and recreated under the same
 * name leaves members that garbage collection has not removed yet).
 */
export function ownMembers(cluster: EtcdCluster, labelled: EtcdMember[]): EtcdMember[] {
  const uid = cluster.metadata.uid;
  return labelled.filter(m => {
    const owners = m.metadata.ownerReferences?.filter(o => o.kind === 'EtcdCluster') ?? [];
    return owners.length === 0 || uid === undefined || owners.some(o => o.uid === uid);
  });
}

/**
 * The labelled Pods that run these members. A Pod controlled by an EtcdMember that is not the
 * same-named member here (one an earlier cluster of the same name left, until garbage collection
 * removes it) runs that cluster's etcd: counting it would report its readiness, dial its etcd, or
 * snapshot its data as this cluster's. A Pod controlled by no EtcdMember is kept, as ownMembers
 * keeps a member owned by no cluster.
 */
export function podsOfMembers<P extends { metadata?: V1ObjectMeta }>(
  members: readonly EtcdMember[],
  pods: readonly P[],
): P[] {
  return pods.filter(pod => {
    const controller = pod.metadata?.ownerReferences?.find(o => o.controller && o.kind === ETCD_MEMBER.kind);
    if (!controller) return true;
    const member = members.find(m => m.metadata.name === pod.metadata?.name);
    return (
      member !== undefined && (member.metadata.uid === undefined || member.metadata.uid === controller.uid)
    );
  });
}

export const isDeleting = (m: { metadata: { deletionTimestamp?: unknown } }): boolean =>
  m.metadata.deletionTimestamp !== undefined && m.metadata.deletionTimestamp !== null;

/**
 * A member deleted while it held the cluster's only data (its deletion held by its finalizer), run
 * again as the seed the other members join: the cluster counts it as one of its own until they have
 * joined, then lets its deletion finish (finalize-member removes it from etcd like any other).
 */
export const RESUME_SEED_ANNOTATION = 'etcdfn.io/resume-seed';
export const isResumeSeed = (m: EtcdMember): boolean =>
  m.metadata.annotations?.[RESUME_SEED_ANNOTATION] === 'true';

/** Members not being deleted, and the seed of a resume (being deleted, yet still serving). */
export const activeMembers = (state: ClusterState): EtcdMember[] =>
  state.members.filter(m => !isDeleting(m) || isResumeSeed(m));
export const runningMembers = (state: ClusterState): EtcdMember[] =>
  activeMembers(state).filter(m => m.spec.dormant !== true);

/**
 * The member whose deletion finalize-member holds because it has the formed cluster's only data on
 * disk (no other member is left, running or dormant): being deleted, not yet a seed, not in memory.
 */
export function heldMember(state: ClusterState): EtcdMember | undefined {
  if (!state.cluster.status?.clusterID || activeMembers(state).length > 0) return undefined;
  return state.members.find(m => isDeleting(m) && !isResumeSeed(m) && !isMemoryMedium(m.spec.storage));
}

/** The seed of a resume, when there is one. */
export const resumeSeed = (state: ClusterState): EtcdMember | undefined =>
  state.members.find(m => isDeleting(m) && isResumeSeed(m));

/** Newest first: the scale-down order. */
export function newestFirst(members: EtcdMember[]): EtcdMember[] {
  return [...members].sort(
    (a, b) => ordinalOf(b) - ordinalOf(a) || (b.metadata.name ?? '').localeCompare(a.metadata.name ?? ''),
  );
}

export function podOf(state: ClusterState, member: EtcdMember): PodFacts | undefined {
  return state.pods.find(p => p.name === member.metadata.name);
}

export function isMemberReady(state: ClusterState, member: EtcdMember): boolean {
  const pod = podOf(state, member);
  return pod !== undefined && pod.ready && !pod.deleting;
}

export function memberUrls(cluster: EtcdCluster, member: string): { peer: string; client: string } {
  const o = {
    namespace: cluster.metadata.namespace ?? 'default',
    cluster: cluster.metadata.name ?? '',
    member,
  };
  const tlsPeer = cluster.spec.tls?.peer !== undefined;
  const tlsClient = cluster.spec.tls?.client !== undefined;
  return { peer: peerUrl({ ...o, tls: tlsPeer }), client: clientUrl({ ...o, tls: tlsClient }) };
}

/** The etcd member that is this EtcdMember: by name once started, by peer URL before. */
export function membershipOf(
  cluster: EtcdCluster,
  member: EtcdMember,
  etcdMembers: readonly EtcdMembership[],
): EtcdMembership | undefined {
  const name = member.metadata.name ?? '';
  const peer = memberUrls(cluster, name).peer;
  return etcdMembers.find(e => e.name === name || e.peerURLs.includes(peer));
}

/** Client URLs to reach etcd through: ready members, voters first (learners refuse most calls). */
export function etcdEndpoints(state: ClusterState, cluster: EtcdCluster): string[] {
  const ready = runningMembers(state).filter(m => isMemberReady(state, m));
  const voters = ready.filter(m => m.status?.isVoter === true || m.spec.bootstrap === true);
  const others = ready.filter(m => !voters.includes(m));
  return [...voters, ...others].map(m => memberUrls(cluster, m.metadata.name ?? '').client);
}

/** `--initial-cluster` for a joining member, from etcd's own membership list. */
export function initialClusterFrom(etcdMembers: readonly EtcdMembership[]): string {
  return etcdMembers
    .filter(m => m.peerURLs.length > 0)
    .map(m => `${m.name || hostLabel(m.peerURLs[0] ?? '')}=${m.peerURLs[0]}`)
    .sort()
    .join(',');
}

/** A member that has not started has no name in etcd; its peer URL's first DNS label is its name. */
function hostLabel(url: string): string {
  try {
    return new URL(url).hostname.split('.')[0] ?? '';
  } catch {
    return '';
  }
}
