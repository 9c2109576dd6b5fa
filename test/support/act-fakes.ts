// Plain fakes for act-layer tests (shared/reconcile/cluster-act.ts, plan/space/nospace-alarm.ts) with real etcd:
// an EtcdCluster and its EtcdMembers as values, a Kubernetes adapter that only records the writes
// those steps make, and a Context over them. No API server: etcd is what these tests look at.
import type { EtcdCluster } from '../../shared/api/etcd-cluster.ts';
import type { EtcdMember } from '../../shared/api/etcd-member.ts';
import type { EtcdAdapter } from '../../shared/etcd/adapter.ts';
import type { KubeObject, KubeObjects, ObjectRef } from '../../shared/k8s/objects.ts';
import type { ClusterState } from '../../shared/plan/cluster/types.ts';
import { memberUrls } from '../../shared/plan/cluster/members.ts';
import { settingsFromEnv, type Context } from '../../shared/runtime/context.ts';
import type { EtcdSlot } from './etcd-process.ts';

export const NS = 'prod';
export const NAME = 'demo';
export const names = [0, 1, 2].map(i => `${NAME}-${i}`);

export const cluster = {
  apiVersion: 'etcdfn.io/v1alpha1',
  kind: 'EtcdCluster',
  metadata: { name: NAME, namespace: NS, uid: 'demo-uid' },
  spec: { replicas: 3, version: '3.5.16', storage: { size: '1Gi' } },
} as unknown as EtcdCluster & KubeObject;

export const memberObject = (name: string, voter: boolean): EtcdMember =>
  ({
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdMember',
    metadata: { name, namespace: NS, uid: `${name}-uid` },
    spec: { clusterName: NAME, version: '3.5.16', initialCluster: 'x', clusterToken: 't' },
    status: { isVoter: voter, role: voter ? 'voter' : 'learner' },
  }) as unknown as EtcdMember;

export interface RecordedEvent {
  type?: string;
  reason?: string;
  message?: string;
  reportingInstance?: string;
}

/** The Kubernetes writes these steps make, recorded; nothing else is served. */
export class RecordingKube {
  statusPatches: { name: string; patch: Record<string, unknown> }[] = [];
  /** The reasons of the Events created, in order, and the Events themselves. */
  events: string[] = [];
  eventObjects: RecordedEvent[] = [];
  mergePatchStatus(ref: ObjectRef, patch: Record<string, unknown>) {
    this.statusPatches.push({ name: ref.name, patch });
    return Promise.resolve({ kind: 'written' as const, object: {} });
  }
  create(object: KubeObject & RecordedEvent) {
    if (object.kind === 'Event') {
      this.events.push(object.reason ?? '');
      this.eventObjects.push(object);
    }
    return Promise.resolve({ kind: 'created' as const, object });
  }
  get voterMarks(): string[] {
    return this.statusPatches.filter(p => p.patch.isVoter === true).map(p => p.name);
  }
}

/** The real adapter behind a map from the members' DNS client URLs to their loopback ones. */
export function mappedAdapter(raw: EtcdAdapter, slots: Map<string, EtcdSlot>): EtcdAdapter {
  const loop = (url: string) => {
    for (const [name, slot] of slots) if (url === memberUrls(cluster, name).client) return slot.clientURL;
    return url;
  };
  const urls = (list: readonly string[]) => list.map(loop);
  return {
    ...raw,
    listMembers: e => raw.listMembers(urls(e)),
    promote: (e, id) => raw.promote(urls(e), id),
  };
}

export function contextWith(kube: RecordingKube, etcd: EtcdAdapter, promoteAttempts = 3): Context {
  return {
    kube: kube as unknown as KubeObjects,
    etcd,
    now: () => new Date(),
    settings: { ...settingsFromEnv({}), promoteAttempts, promoteIntervalMs: 50 },
  };
}

export function stateWith(members: EtcdMember[]): ClusterState {
  return {
    now: new Date(),
    cluster,
    members,
    pods: members.map(m => ({ name: m.metadata.name ?? '', ready: true, phase: 'Running', deleting: false })),
    services: {},
  };
}
