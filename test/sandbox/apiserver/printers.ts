// Table printers of the built-in resources: the columns `kubectl get` shows for them.

import type { KObject, Printer, TableColumn } from './types.ts';
import { age, humanDuration } from './util.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

function col(name: string, type = 'string', priority = 0, format = ''): TableColumn {
  return { name, type, format, description: '', priority };
}

const AGE = col('Age', 'string');

/** True while an init container has not completed (kubectl's `initializing`). */
function initializing(pod: Any): boolean {
  const inits: Any[] = pod.status?.initContainerStatuses ?? [];
  const initialized = (pod.status?.conditions ?? []).some(
    (c: Any) => c.type === 'Initialized' && c.status === 'True',
  );
  return !initialized && inits.some(cs => !(cs.state?.terminated && cs.state.terminated.exitCode === 0));
}

function podStatusReason(pod: Any): string {
  const status = pod.status ?? {};
  let reason: string = status.reason ?? status.phase ?? 'Unknown';
  const inits: Any[] = status.initContainerStatuses ?? [];
  // As kubectl's printPod: the first init container that has not completed names the status.
  for (const [i, cs] of inits.entries()) {
    const term = cs.state?.terminated;
    if (term && term.exitCode === 0) continue;
    if (term) {
      if (term.reason) reason = `Init:${term.reason}`;
      else reason = term.signal ? `Init:Signal:${term.signal}` : `Init:ExitCode:${term.exitCode}`;
    } else if (cs.state?.waiting?.reason && cs.state.waiting.reason !== 'PodInitializing') {
      reason = `Init:${cs.state.waiting.reason}`;
    } else reason = `Init:${i}/${(pod.spec?.initContainers ?? []).length}`;
    break;
  }
  if (!reason.startsWith('Init:')) {
    for (const cs of (status.containerStatuses ?? []) as Any[]) {
      if (cs.state?.waiting?.reason) reason = cs.state.waiting.reason;
      else if (cs.state?.terminated?.reason) reason = cs.state.terminated.reason;
    }
  }
  if (pod.metadata?.deletionTimestamp) reason = status.reason === 'NodeLost' ? 'Unknown' : 'Terminating';
  return reason;
}

/** Restarts as kubectl counts them: the init containers' while the Pod initializes, else the main ones. */
function podRestarts(pod: Any): number {
  const sum = (list: Any[] | undefined): number =>
    (list ?? []).reduce((n, s) => n + (s.restartCount ?? 0), 0);
  return initializing(pod) ? sum(pod.status?.initContainerStatuses) : sum(pod.status?.containerStatuses);
}

const pods: Printer = {
  columns: [
    col('Ready'),
    col('Status'),
    col('Restarts'),
    AGE,
    col('IP', 'string', 1),
    col('Node', 'string', 1),
    col('Nominated Node', 'string', 1),
    col('Readiness Gates', 'string', 1),
  ],
  cells(obj, now) {
    const pod = obj as Any;
    const statuses: Any[] = pod.status?.containerStatuses ?? [];
    const total = (pod.spec?.containers ?? []).length;
    const ready = statuses.filter(s => s.ready).length;
    const restarts = podRestarts(pod);
    const gates: Any[] = pod.spec?.readinessGates ?? [];
    return [
      `${ready}/${total}`,
      podStatusReason(pod),
      String(restarts),
      age(obj, now),
      pod.status?.podIP ?? '<none>',
      pod.spec?.nodeName ?? '<none>',
      pod.status?.nominatedNodeName ?? '<none>',
      gates.length ? `0/${gates.length}` : '<none>',
    ];
  },
};

const namespaces: Printer = {
  columns: [col('Status'), AGE],
  cells: (obj, now) => [(obj as Any).status?.phase ?? '', age(obj, now)],
};

function servicePorts(svc: Any): string {
  const ports: Any[] = svc.spec?.ports ?? [];
  if (!ports.length) return '<none>';
  return ports.map(p => `${p.port}${p.nodePort ? `:${p.nodePort}` : ''}/${p.protocol ?? 'TCP'}`).join(',');
}

const services: Printer = {
  columns: [
    col('Type'),
    col('Cluster-IP'),
    col('External-IP'),
    col('Port(s)'),
    AGE,
    col('Selector', 'string', 1),
  ],
  cells(obj, now) {
    const svc = obj as Any;
    const selector = Object.entries((svc.spec?.selector ?? {}) as Record<string, string>)
      .map(([k, v]) => `${k}=${v}`)
      .join(',');
    const external: string[] = (svc.status?.loadBalancer?.ingress ?? []).map((i: Any) => i.ip ?? i.hostname);
    return [
      svc.spec?.type ?? 'ClusterIP',
      svc.spec?.clusterIP ?? '<none>',
      external.length ? external.join(',') : svc.spec?.type === 'LoadBalancer' ? '<pending>' : '<none>',
      servicePorts(svc),
      age(obj, now),
      selector || '<none>',
    ];
  },
};

function formatQuantity(q: unknown): string {
  return typeof q === 'string' || typeof q === 'number' ? String(q) : '';
}

const pvcs: Printer = {
  columns: [
    col('Status'),
    col('Volume'),
    col('Capacity'),
    col('Access Modes'),
    col('StorageClass'),
    col('VolumeAttributesClass'),
    AGE,
    col('VolumeMode', 'string', 1),
  ],
  cells(obj, now) {
    const pvc = obj as Any;
    const modes: string[] = pvc.status?.accessModes ?? pvc.spec?.accessModes ?? [];
    const short: Record<string, string> = {
      ReadWriteOnce: 'RWO',
      ReadOnlyMany: 'ROX',
      ReadWriteMany: 'RWX',
      ReadWriteOncePod: 'RWOP',
    };
    return [
      pvc.metadata?.deletionTimestamp ? 'Terminating' : (pvc.status?.phase ?? 'Pending'),
      pvc.spec?.volumeName ?? '',
      formatQuantity(pvc.status?.capacity?.storage),
      modes.map(m => short[m] ?? m).join(','),
      pvc.spec?.storageClassName ?? '<unset>',
      pvc.spec?.volumeAttributesClassName ?? '<unset>',
      age(obj, now),
      pvc.spec?.volumeMode ?? 'Filesystem',
    ];
  },
};

const secrets: Printer = {
  columns: [col('Type'), col('Data', 'integer'), AGE],
  cells: (obj, now) => [
    (obj as Any).type ?? 'Opaque',
    Object.keys((obj as Any).data ?? {}).length,
    age(obj, now),
  ],
};

const configmaps: Printer = {
  columns: [col('Data', 'integer'), AGE],
  cells: (obj, now) => [
    Object.keys((obj as Any).data ?? {}).length + Object.keys((obj as Any).binaryData ?? {}).length,
    age(obj, now),
  ],
};

const endpoints: Printer = {
  columns: [col('Endpoints'), AGE],
  cells(obj, now) {
    const list: string[] = [];
    for (const subset of ((obj as Any).subsets ?? []) as Any[]) {
      for (const a of (subset.addresses ?? []) as Any[]) {
        for (const p of (subset.ports ?? [{}]) as Any[]) list.push(p.port ? `${a.ip}:${p.port}` : a.ip);
      }
    }
    const shown = list.slice(0, 3).join(',') + (list.length > 3 ? ` + ${list.length - 3} more...` : '');
    return [shown || '<none>', age(obj, now)];
  },
};

/** The same columns for core/v1 Events and their events.k8s.io/v1 form (regarding, note, deprecated*). */
function eventFields(ev: Any) {
  const source = ev.source ?? ev.deprecatedSource;
  return {
    last:
      ev.series?.lastObservedTime ??
      ev.lastTimestamp ??
      ev.deprecatedLastTimestamp ??
      ev.eventTime ??
      ev.metadata?.creationTimestamp,
    first: ev.firstTimestamp ?? ev.deprecatedFirstTimestamp ?? ev.eventTime ?? ev.metadata?.creationTimestamp,
    object: ev.involvedObject ?? ev.regarding ?? {},
    component: source?.component ?? ev.reportingComponent ?? ev.reportingController ?? '',
    host: source?.host ?? '',
    message: ev.message ?? ev.note ?? '',
    count: ev.series?.count ?? ev.count ?? ev.deprecatedCount ?? 1,
  };
}

const events: Printer = {
  omitNameColumn: true,
  columns: [
    col('Last Seen'),
    col('Type'),
    col('Reason'),
    col('Object'),
    col('Subobject', 'string', 1),
    col('Source', 'string', 1),
    col('Message'),
    col('First Seen', 'string', 1),
    col('Count', 'string', 1),
    col('Name', 'string', 1),
  ],
  cells(obj, now) {
    const ev = obj as Any;
    const f = eventFields(ev);
    return [
      f.last ? humanDuration(now - Date.parse(f.last)) : '<unknown>',
      ev.type ?? '',
      ev.reason ?? '',
      `${String(f.object.kind ?? '').toLowerCase()}/${f.object.name ?? ''}`,
      f.object.fieldPath ?? '',
      f.component + (f.host ? `, ${f.host}` : ''),
      String(f.message).trim(),
      f.first ? humanDuration(now - Date.parse(f.first)) : '<unknown>',
      String(f.count),
      ev.metadata?.name ?? '',
    ];
  },
};

const jobs: Printer = {
  columns: [
    col('Status'),
    col('Completions'),
    col('Duration'),
    AGE,
    col('Containers', 'string', 1),
    col('Images', 'string', 1),
    col('Selector', 'string', 1),
  ],
  cells(obj, now) {
    const job = obj as Any;
    const conds: Any[] = job.status?.conditions ?? [];
    const has = (t: string) => conds.some(c => c.type === t && c.status === 'True');
    const status = has('Complete')
      ? 'Complete'
      : has('Failed')
        ? 'Failed'
        : job.metadata?.deletionTimestamp
          ? 'Terminating'
          : has('Suspended')
            ? 'Suspended'
            : 'Running';
    const start = job.status?.startTime ? Date.parse(job.status.startTime) : undefined;
    const end = job.status?.completionTime ? Date.parse(job.status.completionTime) : now;
    const containers: Any[] = job.spec?.template?.spec?.containers ?? [];
    const labels = (job.spec?.selector?.matchLabels ?? {}) as Record<string, string>;
    return [
      status,
      `${job.status?.succeeded ?? 0}/${job.spec?.completions ?? 1}`,
      start === undefined ? '' : humanDuration(end - start),
      age(obj, now),
      containers.map(c => c.name).join(','),
      containers.map(c => c.image).join(','),
      Object.entries(labels)
        .map(([k, v]) => `${k}=${v}`)
        .join(','),
    ];
  },
};

const pdbs: Printer = {
  columns: [col('Min Available'), col('Max Unavailable'), col('Allowed Disruptions', 'integer'), AGE],
  cells(obj, now) {
    const pdb = obj as Any;
    return [
      pdb.spec?.minAvailable === undefined ? 'N/A' : String(pdb.spec.minAvailable),
      pdb.spec?.maxUnavailable === undefined ? 'N/A' : String(pdb.spec.maxUnavailable),
      pdb.status?.disruptionsAllowed ?? 0,
      age(obj, now),
    ];
  },
};

const leases: Printer = {
  columns: [col('Holder'), AGE],
  cells: (obj, now) => [(obj as Any).spec?.holderIdentity ?? '', age(obj, now)],
};

const crds: Printer = {
  columns: [col('Created At', 'date')],
  cells: obj => [obj.metadata.creationTimestamp ?? ''],
};

const nodes: Printer = {
  columns: [col('Status'), col('Roles'), AGE, col('Version'), col('Internal-IP', 'string', 1)],
  cells(obj, now) {
    const node = obj as Any;
    const ready = ((node.status?.conditions ?? []) as Any[]).find(c => c.type === 'Ready');
    const addr = ((node.status?.addresses ?? []) as Any[]).find(a => a.type === 'InternalIP');
    return [
      ready?.status === 'True' ? 'Ready' : 'NotReady',
      '<none>',
      age(obj, now),
      node.status?.nodeInfo?.kubeletVersion ?? '',
      addr?.address ?? '<none>',
    ];
  },
};

export const PRINTERS: Record<string, Printer> = {
  pods,
  namespaces,
  services,
  persistentvolumeclaims: pvcs,
  secrets,
  configmaps,
  endpoints,
  events,
  jobs,
  poddisruptionbudgets: pdbs,
  leases,
  customresourcedefinitions: crds,
  nodes,
};

/** Printer used when a resource has none: the name and the age. */
export const DEFAULT_PRINTER: Printer = {
  columns: [AGE],
  cells: (obj: KObject, now: number) => [age(obj, now)],
};
