// The built-in resources the sandbox serves, with the bits of their real strategies that matter:
// defaults, status on create, allocated values, immutable fields, field selectors and printers.

import { fieldForbidden, fieldInvalid, fieldRequired } from './errors.ts';
import { podStrategy, POD_FIELD_SELECTORS, defaultPodSpec } from './builtin-pods.ts';
import { pvcStrategy } from './pvc-storage.ts';
import { PRINTERS } from './printers.ts';
import { makeDef } from './registry.ts';
import type { KObject, ResourceDef, Strategy } from './types.ts';
import { deepEqual, isObject } from './util.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

export interface BuiltinOptions {
  podGracefulDeletion: boolean;
  /** every stored Service, to allocate unused cluster IPs */
  listServices: () => KObject[];
  /** every stored StorageClass, for the claims' default class and resize admission */
  listStorageClasses?: () => KObject[];
}

function serviceStrategy(listServices: () => KObject[]): Strategy {
  let next = 10;
  const allocate = (): string => {
    const used = new Set(listServices().map(s => (s.spec as Any)?.clusterIP as string));
    for (;;) {
      const n = next++;
      const ip = `10.96.${Math.floor(n / 256) % 256}.${n % 256}`;
      if (n % 256 !== 0 && n % 256 !== 255 && !used.has(ip)) return ip;
    }
  };
  return {
    defaults(obj) {
      const spec = (obj.spec ??= {}) as Any;
      spec.type ??= 'ClusterIP';
      spec.sessionAffinity ??= 'None';
      if (spec.type !== 'ExternalName') {
        spec.internalTrafficPolicy ??= 'Cluster';
        spec.ipFamilies ??= ['IPv4'];
        spec.ipFamilyPolicy ??= 'SingleStack';
      }
      for (const p of (spec.ports ?? []) as Any[]) {
        p.protocol ??= 'TCP';
        p.targetPort ??= p.port;
      }
    },
    prepareCreate(obj) {
      const spec = obj.spec as Any;
      if (spec.type !== 'ExternalName' && !spec.clusterIP) spec.clusterIP = allocate();
      if (spec.clusterIP && spec.type !== 'ExternalName') spec.clusterIPs ??= [spec.clusterIP];
      obj.status = { loadBalancer: {} };
    },
    prepareUpdate(obj, old) {
      const spec = (obj.spec ??= {}) as Any;
      const oldSpec = old.spec as Any;
      if (!spec.clusterIP && oldSpec?.clusterIP) spec.clusterIP = oldSpec.clusterIP;
      if (!spec.clusterIPs && oldSpec?.clusterIPs) spec.clusterIPs = oldSpec.clusterIPs;
    },
    validateCreate(obj) {
      const spec = obj.spec as Any;
      if (spec.type !== 'ExternalName' && spec.clusterIP !== 'None' && !(spec.ports ?? []).length) {
        return [fieldRequired('spec.ports')];
      }
      return [];
    },
    validateUpdate(obj, old) {
      const a = (obj.spec as Any)?.clusterIP;
      const b = (old.spec as Any)?.clusterIP;
      if (b && a !== b) return [fieldInvalid('spec.clusterIPs[0]', a ?? '', 'may not change once set')];
      return [];
    },
  };
}

const secretStrategy: Strategy = {
  normalize(obj) {
    if (!obj.type) obj.type = 'Opaque';
    if (isObject(obj.stringData)) {
      const data = (obj.data ??= {}) as Record<string, string>;
      for (const [k, v] of Object.entries(obj.stringData))
        data[k] = Buffer.from(String(v)).toString('base64');
    }
    delete obj.stringData;
  },
  validateUpdate(obj, old) {
    if ((old.type ?? 'Opaque') !== (obj.type ?? 'Opaque'))
      return [fieldInvalid('type', obj.type, 'field is immutable')];
    if (old.immutable === true && !deepEqual(obj.data, old.data)) {
      return [fieldForbidden('data', 'field is immutable when `immutable` is set')];
    }
    return [];
  },
};

const namespaceStrategy: Strategy = {
  prepareCreate(obj) {
    obj.spec = { finalizers: ['kubernetes'] };
    obj.status = { phase: 'Active' };
  },
  normalize(obj) {
    const labels = (obj.metadata.labels ??= {});
    labels['kubernetes.io/metadata.name'] = obj.metadata.name!;
  },
};

const jobStrategy: Strategy = {
  defaults(obj) {
    const spec = (obj.spec ??= {}) as Any;
    if (spec.completions === undefined && spec.parallelism === undefined) {
      spec.completions = 1;
      spec.parallelism = 1;
    }
    spec.parallelism ??= 1;
    spec.backoffLimit ??= 6;
    spec.completionMode ??= 'NonIndexed';
    spec.suspend ??= false;
    spec.manualSelector ??= undefined;
    spec.podReplacementPolicy ??= 'TerminatingOrFailed';
    defaultPodSpec(spec.template?.spec);
    if (spec.manualSelector === undefined) delete spec.manualSelector;
  },
  prepareCreate(obj) {
    const spec = obj.spec as Any;
    const uid = obj.metadata.uid!;
    const name = obj.metadata.name!;
    if (!spec.manualSelector) {
      spec.selector = { matchLabels: { 'batch.kubernetes.io/controller-uid': uid } };
      const meta = ((spec.template ??= {}).metadata ??= {}) as Any;
      meta.labels = {
        ...(meta.labels ?? {}),
        'batch.kubernetes.io/controller-uid': uid,
        'batch.kubernetes.io/job-name': name,
        'controller-uid': uid,
        'job-name': name,
      };
    }
    obj.status = {};
  },
  validateCreate(obj) {
    const policy = (obj.spec as Any)?.template?.spec?.restartPolicy;
    if (policy !== 'OnFailure' && policy !== 'Never') {
      return [
        {
          field: 'spec.template.spec.restartPolicy',
          reason: 'FieldValueNotSupported',
          message: `Unsupported value: ${JSON.stringify(policy ?? 'Always')}: supported values: "OnFailure", "Never"`,
        },
      ];
    }
    return [];
  },
  validateUpdate(obj, old) {
    if (!deepEqual((obj.spec as Any)?.selector, (old.spec as Any)?.selector)) {
      return [fieldInvalid('spec.selector', (obj.spec as Any)?.selector, 'field is immutable')];
    }
    return [];
  },
};

const pdbStrategy: Strategy = {
  prepareCreate(obj) {
    obj.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
  },
};

// ---- events.k8s.io/v1 ↔ core/v1 Event ----

function eventToEventsV1(core: KObject): KObject {
  const e = core as Any;
  const out: Any = {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: e.metadata,
    eventTime: e.eventTime ?? null,
    reportingController: e.reportingComponent ?? e.source?.component,
    reportingInstance: e.reportingInstance ?? e.source?.host,
    action: e.action,
    reason: e.reason,
    regarding: e.involvedObject,
    related: e.related,
    note: e.message,
    type: e.type,
    series: e.series,
    deprecatedSource: e.source,
    deprecatedFirstTimestamp: e.firstTimestamp,
    deprecatedLastTimestamp: e.lastTimestamp,
    deprecatedCount: e.count,
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out as KObject;
}

function eventsV1ToEvent(ev: KObject): KObject {
  const e = ev as Any;
  const out: Any = {
    apiVersion: 'v1',
    kind: 'Event',
    metadata: e.metadata,
    involvedObject: e.regarding ?? {},
    reason: e.reason,
    message: e.note,
    source: e.deprecatedSource ?? (e.reportingController ? { component: e.reportingController } : undefined),
    firstTimestamp: e.deprecatedFirstTimestamp,
    lastTimestamp: e.deprecatedLastTimestamp,
    count: e.deprecatedCount,
    type: e.type,
    eventTime: e.eventTime,
    series: e.series,
    action: e.action,
    related: e.related,
    reportingComponent: e.reportingController ?? '',
    reportingInstance: e.reportingInstance ?? '',
  };
  for (const k of Object.keys(out)) if (out[k] === undefined) delete out[k];
  return out as KObject;
}

const EVENT_FIELD_SELECTORS: ResourceDef['fieldSelectors'] = {
  'involvedObject.kind': o => (o as Any).involvedObject?.kind ?? '',
  'involvedObject.namespace': o => (o as Any).involvedObject?.namespace ?? '',
  'involvedObject.name': o => (o as Any).involvedObject?.name ?? '',
  'involvedObject.uid': o => (o as Any).involvedObject?.uid ?? '',
  'involvedObject.apiVersion': o => (o as Any).involvedObject?.apiVersion ?? '',
  'involvedObject.resourceVersion': o => (o as Any).involvedObject?.resourceVersion ?? '',
  'involvedObject.fieldPath': o => (o as Any).involvedObject?.fieldPath ?? '',
  reason: o => (o as Any).reason ?? '',
  reportingComponent: o => (o as Any).reportingComponent ?? '',
  source: o => (o as Any).source?.component ?? '',
  type: o => (o as Any).type ?? '',
};

const EVENTS_V1_FIELD_SELECTORS: ResourceDef['fieldSelectors'] = Object.fromEntries(
  Object.entries(EVENT_FIELD_SELECTORS).map(([k, fn]) => [k.replace(/^involvedObject\./, 'regarding.'), fn]),
);

export function builtinDefs(opts: BuiltinOptions): ResourceDef[] {
  const core = (input: Omit<Parameters<typeof makeDef>[0], 'group' | 'version'>) =>
    makeDef({ group: '', version: 'v1', printer: PRINTERS[input.resource], ...input });
  const defs: ResourceDef[] = [
    core({
      resource: 'namespaces',
      kind: 'Namespace',
      namespaced: false,
      shortNames: ['ns'],
      statusSubresource: true,
      returnDeletedObject: true,
      strategy: namespaceStrategy,
      fieldSelectors: { 'status.phase': o => (o.status as Any)?.phase ?? '' },
    }),
    core({
      resource: 'pods',
      kind: 'Pod',
      namespaced: true,
      shortNames: ['po'],
      categories: ['all'],
      statusSubresource: true,
      returnDeletedObject: true,
      strategy: podStrategy({ gracefulDeletion: opts.podGracefulDeletion }),
      fieldSelectors: POD_FIELD_SELECTORS,
      extraSubresources: ['log', 'binding', 'eviction'],
    }),
    core({
      resource: 'persistentvolumeclaims',
      kind: 'PersistentVolumeClaim',
      namespaced: true,
      shortNames: ['pvc'],
      statusSubresource: true,
      strategy: pvcStrategy(() => opts.listStorageClasses?.() ?? []),
    }),
    core({
      resource: 'services',
      kind: 'Service',
      namespaced: true,
      shortNames: ['svc'],
      categories: ['all'],
      statusSubresource: true,
      returnDeletedObject: true,
      strategy: serviceStrategy(opts.listServices),
    }),
    core({
      resource: 'endpoints',
      kind: 'Endpoints',
      namespaced: true,
      shortNames: ['ep'],
      allowCreateOnUpdate: true,
    }),
    core({
      resource: 'secrets',
      kind: 'Secret',
      namespaced: true,
      strategy: secretStrategy,
      fieldSelectors: { type: o => (o.type as string) ?? '' },
    }),
    core({ resource: 'configmaps', kind: 'ConfigMap', namespaced: true, shortNames: ['cm'] }),
    core({ resource: 'serviceaccounts', kind: 'ServiceAccount', namespaced: true, shortNames: ['sa'] }),
    core({
      resource: 'events',
      kind: 'Event',
      namespaced: true,
      shortNames: ['ev'],
      allowCreateOnUpdate: true,
      fieldSelectors: EVENT_FIELD_SELECTORS,
    }),
    core({ resource: 'nodes', kind: 'Node', namespaced: false, shortNames: ['no'], statusSubresource: true }),
    core({
      resource: 'persistentvolumes',
      kind: 'PersistentVolume',
      namespaced: false,
      shortNames: ['pv'],
      statusSubresource: true,
    }),
    makeDef({
      group: 'events.k8s.io',
      version: 'v1',
      resource: 'events',
      kind: 'Event',
      namespaced: true,
      shortNames: ['ev'],
      allowCreateOnUpdate: true,
      storageApiVersion: 'v1',
      printer: PRINTERS.events,
      fieldSelectors: EVENTS_V1_FIELD_SELECTORS,
    }),
    makeDef({
      group: 'policy',
      version: 'v1',
      resource: 'poddisruptionbudgets',
      kind: 'PodDisruptionBudget',
      namespaced: true,
      shortNames: ['pdb'],
      statusSubresource: true,
      generation: true,
      strategy: pdbStrategy,
      printer: PRINTERS.poddisruptionbudgets,
    }),
    // Stored and served only: the sandbox has no network plugin to enforce it.
    makeDef({
      group: 'networking.k8s.io',
      version: 'v1',
      resource: 'networkpolicies',
      kind: 'NetworkPolicy',
      namespaced: true,
      shortNames: ['netpol'],
      generation: true,
    }),
    makeDef({
      group: 'batch',
      version: 'v1',
      resource: 'jobs',
      kind: 'Job',
      namespaced: true,
      categories: ['all'],
      statusSubresource: true,
      generation: true,
      defaultPropagation: 'Orphan',
      strategy: jobStrategy,
      printer: PRINTERS.jobs,
      fieldSelectors: { 'status.successful': o => String((o.status as Any)?.succeeded ?? 0) },
    }),
    // Served for the PVC controller (test/sandbox/kubelet/pvcs.ts): a claim naming a class that
    // does not exist stays Pending, as with no provisioner for it; pvc-storage.ts: the default
    // class and volume expansion.
    makeDef({
      group: 'storage.k8s.io',
      version: 'v1',
      resource: 'storageclasses',
      kind: 'StorageClass',
      namespaced: false,
      shortNames: ['sc'],
    }),
    makeDef({
      group: 'coordination.k8s.io',
      version: 'v1',
      resource: 'leases',
      kind: 'Lease',
      namespaced: true,
      printer: PRINTERS.leases,
    }),
  ];
  const eventsV1 = defs.find(d => d.group === 'events.k8s.io')!;
  eventsV1.storageKey = '/events';
  eventsV1.toServed = eventToEventsV1;
  eventsV1.toStorage = eventsV1ToEvent;
  return defs;
}
