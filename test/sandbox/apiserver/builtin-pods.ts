// Pod specifics: defaulting as the real API server does it, status on create, QoS class,
// graceful deletion and the immutability of the pod spec.

import { fieldForbidden } from './errors.ts';
import type { FieldError, KObject, Strategy } from './types.ts';
import { clone, deepEqual, isObject } from './util.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

function defaultProbe(probe: Any | undefined): void {
  if (!isObject(probe)) return;
  probe.timeoutSeconds ??= 1;
  probe.periodSeconds ??= 10;
  probe.successThreshold ??= 1;
  probe.failureThreshold ??= 3;
  if (isObject(probe.httpGet)) (probe.httpGet as Any).scheme ??= 'HTTP';
}

function defaultContainer(c: Any): void {
  if (typeof c !== 'object' || c === null) return;
  const image = typeof c.image === 'string' ? c.image : '';
  const tag = image.includes('@') ? 'digest' : (/:([^/:]+)$/.exec(image)?.[1] ?? 'latest');
  c.imagePullPolicy ??= tag === 'latest' ? 'Always' : 'IfNotPresent';
  c.terminationMessagePath ??= '/dev/termination-log';
  c.terminationMessagePolicy ??= 'File';
  c.resources ??= {};
  for (const p of (c.ports ?? []) as Any[]) p.protocol ??= 'TCP';
  for (const e of (c.env ?? []) as Any[]) {
    if (isObject(e.valueFrom?.fieldRef)) (e.valueFrom.fieldRef as Any).apiVersion ??= 'v1';
  }
  defaultProbe(c.livenessProbe);
  defaultProbe(c.readinessProbe);
  defaultProbe(c.startupProbe);
}

/** Defaults of a PodSpec (shared with Job templates). */
export function defaultPodSpec(spec: Any | undefined): void {
  if (!isObject(spec)) return;
  spec.restartPolicy ??= 'Always';
  spec.dnsPolicy ??= 'ClusterFirst';
  spec.terminationGracePeriodSeconds ??= 30;
  spec.schedulerName ??= 'default-scheduler';
  spec.securityContext ??= {};
  spec.enableServiceLinks ??= true;
  spec.priority ??= 0;
  spec.preemptionPolicy ??= 'PreemptLowerPriority';
  for (const c of (spec.containers ?? []) as Any[]) defaultContainer(c);
  for (const c of (spec.initContainers ?? []) as Any[]) defaultContainer(c);
  for (const v of (spec.volumes ?? []) as Any[]) {
    if (isObject(v.secret)) (v.secret as Any).defaultMode ??= 420;
    if (isObject(v.configMap)) (v.configMap as Any).defaultMode ??= 420;
    if (isObject(v.projected)) (v.projected as Any).defaultMode ??= 420;
  }
}

function qosClass(spec: Any): string {
  const containers: Any[] = [...(spec.containers ?? []), ...(spec.initContainers ?? [])];
  let anySet = false;
  let guaranteed = true;
  for (const c of containers) {
    const req = (c.resources?.requests ?? {}) as Record<string, unknown>;
    const lim = (c.resources?.limits ?? {}) as Record<string, unknown>;
    if (Object.keys(req).length || Object.keys(lim).length) anySet = true;
    for (const r of ['cpu', 'memory']) {
      const limit = lim[r];
      const request = req[r] ?? limit;
      if (limit === undefined || JSON.stringify(request) !== JSON.stringify(limit)) guaranteed = false;
    }
  }
  if (!anySet) return 'BestEffort';
  return guaranteed ? 'Guaranteed' : 'Burstable';
}

const POD_UPDATE_MESSAGE =
  'pod updates may not change fields other than `spec.containers[*].image`,`spec.initContainers[*].image`,`spec.activeDeadlineSeconds`,`spec.tolerations` (only additions to existing tolerations),`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)';

function mutableMasked(spec: Any): Any {
  const s = clone(spec);
  for (const c of (s.containers ?? []) as Any[]) delete c.image;
  for (const c of (s.initContainers ?? []) as Any[]) delete c.image;
  delete s.activeDeadlineSeconds;
  delete s.tolerations;
  delete s.terminationGracePeriodSeconds;
  return s;
}

export interface PodOptions {
  /** a DELETE without gracePeriodSeconds leaves the Pod with a deletionTimestamp for the kubelet */
  gracefulDeletion: boolean;
}

export function podStrategy(opts: PodOptions): Strategy {
  return {
    defaults(obj: KObject) {
      defaultPodSpec(obj.spec as Any);
    },
    prepareCreate(obj: KObject) {
      obj.status = { phase: 'Pending', qosClass: qosClass(obj.spec ?? {}) };
    },
    validateCreate(obj: KObject): FieldError[] {
      const spec = obj.spec as Any | undefined;
      const errors: FieldError[] = [];
      if (!spec || !Array.isArray(spec.containers) || spec.containers.length === 0) {
        errors.push({ field: 'spec.containers', reason: 'FieldValueRequired', message: 'Required value' });
      } else {
        (spec.containers as Any[]).forEach((c, i) => {
          if (!c.name)
            errors.push({
              field: `spec.containers[${i}].name`,
              reason: 'FieldValueRequired',
              message: 'Required value',
            });
          if (!c.image)
            errors.push({
              field: `spec.containers[${i}].image`,
              reason: 'FieldValueRequired',
              message: 'Required value',
            });
        });
      }
      return errors;
    },
    validateUpdate(obj: KObject, old: KObject): FieldError[] {
      if (deepEqual(mutableMasked(obj.spec ?? {}), mutableMasked(old.spec ?? {}))) return [];
      return [fieldForbidden('spec', POD_UPDATE_MESSAGE)];
    },
    gracePeriod(obj: KObject): number | undefined {
      if (!opts.gracefulDeletion) return 0;
      const phase = (obj.status as Any | undefined)?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') return 0;
      const grace = (obj.spec as Any | undefined)?.terminationGracePeriodSeconds;
      return typeof grace === 'number' && grace >= 0 ? grace : 30;
    },
  };
}

export const POD_FIELD_SELECTORS: Record<string, (obj: KObject) => string | undefined> = {
  'spec.nodeName': o => (o.spec as Any)?.nodeName ?? '',
  'spec.restartPolicy': o => (o.spec as Any)?.restartPolicy ?? '',
  'spec.schedulerName': o => (o.spec as Any)?.schedulerName ?? '',
  'spec.serviceAccountName': o => (o.spec as Any)?.serviceAccountName ?? '',
  'spec.hostNetwork': o => String((o.spec as Any)?.hostNetwork ?? false),
  'status.phase': o => (o.status as Any)?.phase ?? '',
  'status.podIP': o => (o.status as Any)?.podIP ?? '',
  'status.nominatedNodeName': o => (o.status as Any)?.nominatedNodeName ?? '',
};
