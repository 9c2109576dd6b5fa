// Pod phase and conditions from container statuses, following the kubelet's getPhase and
// status manager rules (simplified: no readiness gates, no sidecar init containers).
import type { V1PodSpec } from '@kubernetes/client-node';
import type { ContainerStatusJson, PodConditionJson, PodStatusJson } from './types.ts';
import { nowIso } from './types.ts';

export type Phase = NonNullable<PodStatusJson['phase']>;

export interface PhaseInput {
  spec: V1PodSpec;
  init: ContainerStatusJson[];
  main: ContainerStatusJson[];
  /** all init containers completed */
  initialized: boolean;
  /** an init container failed and will not be retried */
  initFailed: boolean;
  /** the Pod is being torn down: nothing restarts any more */
  terminating: boolean;
}

export function podPhase(input: PhaseInput): Phase {
  if (input.initFailed) return 'Failed';
  if (!input.initialized) return 'Pending';
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;
  for (const s of input.main) {
    if (s.state.running) running++;
    else if (s.state.terminated) {
      stopped++;
      if (s.state.terminated.exitCode === 0) succeeded++;
    } else if (s.lastState.terminated) stopped++;
    else waiting++;
  }
  if (waiting > 0) return 'Pending';
  if (running > 0) return 'Running';
  if (stopped > 0) {
    const policy = input.spec.restartPolicy ?? 'Always';
    const allDone = input.main.every(s => s.state.terminated);
    if (allDone && (input.terminating || policy !== 'Always')) {
      if (stopped === succeeded) return 'Succeeded';
      if (policy === 'OnFailure' && !input.terminating) return 'Running';
      return 'Failed';
    }
    return 'Running';
  }
  return 'Pending';
}

/** Keeps lastTransitionTime stable across rewrites of a condition with the same status. */
export class Conditions {
  private readonly current = new Map<string, PodConditionJson>();

  set(type: string, ok: boolean, reason?: string, message?: string): void {
    const status = ok ? 'True' : 'False';
    const old = this.current.get(type);
    const condition: PodConditionJson = {
      type,
      status,
      lastProbeTime: null,
      lastTransitionTime: old && old.status === status ? old.lastTransitionTime : nowIso(),
    };
    if (reason) condition.reason = reason;
    if (message) condition.message = message;
    this.current.set(type, condition);
  }

  list(): PodConditionJson[] {
    const order = ['PodReadyToStartContainers', 'Initialized', 'Ready', 'ContainersReady', 'PodScheduled'];
    return [...this.current.values()].sort((a, b) => order.indexOf(a.type) - order.indexOf(b.type));
  }
}

function names(list: ContainerStatusJson[], pick: (s: ContainerStatusJson) => boolean): string {
  return `[${list
    .filter(pick)
    .map(s => s.name)
    .join(' ')}]`;
}

export interface ConditionInput {
  phase: Phase;
  sandboxReady: boolean;
  initialized: boolean;
  init: ContainerStatusJson[];
  main: ContainerStatusJson[];
}

/** Updates the standard Pod conditions. */
export function updateConditions(c: Conditions, input: ConditionInput): void {
  const { phase, init, main } = input;
  c.set('PodScheduled', true);
  c.set('PodReadyToStartContainers', input.sandboxReady);
  if (input.initialized) c.set('Initialized', true);
  else {
    const incomplete = names(init, s => s.state.terminated?.exitCode !== 0);
    c.set(
      'Initialized',
      false,
      'ContainersNotInitialized',
      `containers with incomplete status: ${incomplete}`,
    );
  }
  const terminal = phase === 'Succeeded' || phase === 'Failed';
  const allReady = main.length > 0 && main.every(s => s.ready);
  if (terminal) {
    c.set('ContainersReady', false, 'PodCompleted');
    c.set('Ready', false, 'PodCompleted');
  } else if (allReady) {
    c.set('ContainersReady', true);
    c.set('Ready', true);
  } else {
    const message = `containers with unready status: ${names(main, s => !s.ready)}`;
    c.set('ContainersReady', false, 'ContainersNotReady', message);
    c.set('Ready', false, 'ContainersNotReady', message);
  }
}

/** QoS class from requests and limits (Guaranteed / Burstable / BestEffort). */
export function qosClass(spec: V1PodSpec): string {
  const containers = [...(spec.initContainers ?? []), ...spec.containers];
  const any = containers.some(
    c => Object.keys(c.resources?.requests ?? {}).length || Object.keys(c.resources?.limits ?? {}).length,
  );
  if (!any) return 'BestEffort';
  const guaranteed = spec.containers.every(c => {
    const l = c.resources?.limits ?? {};
    const r = c.resources?.requests ?? {};
    return ['cpu', 'memory'].every(
      k => l[k] !== undefined && (r[k] === undefined || String(r[k]) === String(l[k])),
    );
  });
  return guaranteed ? 'Guaranteed' : 'Burstable';
}
