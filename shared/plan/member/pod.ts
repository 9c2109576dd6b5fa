// What reconcile-member needs to know about a member's Pod and PVC, read off the objects as the API
// server returns them. Pure: the planner and its tests share these.
import type { V1ObjectMeta, V1Pod } from '@kubernetes/client-node';
import type { EtcdMember } from '../../api/etcd-member.ts';
import { isControlledBy } from '../../builders/owner.ts';
import {
  INITIAL_CLUSTER_ANNOTATION,
  INITIAL_CLUSTER_ENV,
  INITIAL_CLUSTER_STATE_ANNOTATION,
  INITIAL_CLUSTER_STATE_ENV,
  type JoinSettings,
} from '../../builders/etcd-flags.ts';
import { ETCD_CONTAINER } from '../../builders/pod.ts';
import { CLUSTER_LABEL } from '../../names.ts';

/** Phases a kubelet never leaves: it does not restart the containers of such a Pod. */
export const TERMINAL_PHASES: readonly string[] = ['Succeeded', 'Failed'];

/**
 * Who an object with the member's Pod or PVC name belongs to:
 * - `ours`: controlled by this EtcdMember (matched by uid);
 * - `stale`: etcdfn's (it carries the cluster label) but not controlled by this member — left by an
 *   earlier member of the same name, whose owner is gone; its changes reach reconcile-member;
 * - `foreign`: someone else's object that happens to have the name; etcdfn sees no events for it.
 */
export type Ownership = 'ours' | 'stale' | 'foreign';

export function ownershipOf(object: { metadata?: V1ObjectMeta }, member: EtcdMember): Ownership {
  if (isControlledBy(object, member)) return 'ours';
  return object.metadata?.labels?.[CLUSTER_LABEL] !== undefined ? 'stale' : 'foreign';
}

export const isBeingDeleted = (object: { metadata?: V1ObjectMeta }): boolean =>
  object.metadata?.deletionTimestamp !== undefined && object.metadata.deletionTimestamp !== null;

export function isPodReady(pod: V1Pod): boolean {
  return (
    !isBeingDeleted(pod) &&
    (pod.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True') ?? false)
  );
}

export function isPodTerminal(pod: V1Pod): boolean {
  return TERMINAL_PHASES.includes(pod.status?.phase ?? '');
}

/**
 * Why a Pod is not ready, in words a person can act on, from the Pod's own status: its phase, the
 * scheduler's verdict, and what the etcd container is doing (waiting reason, exit, restarts).
 * Nothing in it changes unless the Pod does, so the member's status is not rewritten for nothing.
 */
export function podNotReadyMessage(pod: V1Pod): string {
  const name = pod.metadata?.name ?? '';
  if (isBeingDeleted(pod)) return `Pod ${name} is being deleted`;
  const status = pod.status ?? {};
  const parts = [`Pod ${name} is ${status.phase ?? 'Pending'}`];
  if (status.reason) parts.push(status.message ? `${status.reason}: ${status.message}` : status.reason);
  const scheduled = status.conditions?.find(c => c.type === 'PodScheduled');
  if (scheduled?.status === 'False') {
    parts.push(
      `not scheduled: ${scheduled.reason ?? 'Unschedulable'}${scheduled.message ? ` (${scheduled.message})` : ''}`,
    );
  }
  const etcd =
    status.containerStatuses?.find(c => c.name === ETCD_CONTAINER) ?? status.containerStatuses?.[0];
  if (etcd) {
    const waiting = etcd.state?.waiting;
    const terminated = etcd.state?.terminated;
    if (waiting) parts.push(`container ${etcd.name} waiting: ${waiting.reason ?? 'unknown reason'}`);
    else if (terminated) parts.push(`container ${etcd.name} exited: ${exitOf(terminated)}`);
    else if (!etcd.ready) parts.push(`container ${etcd.name} running but not ready (etcd /health failing)`);
    const last = etcd.lastState?.terminated;
    if (etcd.restartCount > 0) {
      parts.push(
        `restarted ${etcd.restartCount} time${etcd.restartCount === 1 ? '' : 's'}${last ? `, last exit: ${exitOf(last)}` : ''}`,
      );
    }
  } else {
    const waitingInit = status.initContainerStatuses?.find(c => !c.ready);
    if (waitingInit) parts.push(`init container ${waitingInit.name} not done`);
  }
  return parts.join('; ');
}

function exitOf(t: { reason?: string; exitCode: number }): string {
  return `${t.reason ?? 'Error'} (code ${t.exitCode})`;
}

/**
 * The etcd release a member's Pod runs, read from its etcd container's image tag (v3.5.16 or
 * 3.5.16, with any suffix such as -0); undefined when the tag says no version.
 */
export function podEtcdVersion(pod: V1Pod): string | undefined {
  const image = pod.spec?.containers.find(c => c.name === ETCD_CONTAINER)?.image ?? '';
  const tag = /:v?(\d+\.\d+\.\d+)(?:-[\w.]+)?$/.exec(image.split('@')[0] ?? '');
  return tag?.[1];
}

/**
 * Whether the Pod's etcd takes its join settings from the Pod's annotations (ETCD_INITIAL_CLUSTER and
 * ETCD_INITIAL_CLUSTER_STATE through the downward API), so that changing them changes what its next
 * in-place restart uses. Pods built before the settings moved there have them as flags.
 */
export function joinsFromAnnotations(pod: V1Pod): boolean {
  const env = pod.spec?.containers.find(c => c.name === ETCD_CONTAINER)?.env ?? [];
  const reads = (name: string, annotation: string): boolean =>
    env.some(
      e => e.name === name && e.valueFrom?.fieldRef?.fieldPath === `metadata.annotations['${annotation}']`,
    );
  return (
    reads(INITIAL_CLUSTER_ENV, INITIAL_CLUSTER_ANNOTATION) &&
    reads(INITIAL_CLUSTER_STATE_ENV, INITIAL_CLUSTER_STATE_ANNOTATION)
  );
}

/**
 * The join settings the Pod's etcd starts with (next time, for a running one): from its annotations
 * when it reads them there, else from its command line; undefined when it says neither.
 */
export function podJoinSettings(pod: V1Pod): Partial<JoinSettings> | undefined {
  if (joinsFromAnnotations(pod)) {
    const a = pod.metadata?.annotations ?? {};
    return {
      initialCluster: a[INITIAL_CLUSTER_ANNOTATION],
      state: stateOf(a[INITIAL_CLUSTER_STATE_ANNOTATION]),
    };
  }
  const command = pod.spec?.containers.find(c => c.name === ETCD_CONTAINER)?.command;
  if (!command) return undefined;
  const flag = (name: string): string | undefined =>
    command.find(a => a.startsWith(`${name}=`))?.slice(name.length + 1);
  return { initialCluster: flag('--initial-cluster'), state: stateOf(flag('--initial-cluster-state')) };
}

function stateOf(value: string | undefined): JoinSettings['state'] | undefined {
  return value === 'new' || value === 'existing' ? value : undefined;
}
