// Values the CRD schemas default or enforce, for code that reads objects the API server has not
// defaulted (fixtures, tests). test/unit/crds.test.ts checks they agree with crds/.
import type { IssuerKind } from './etcd-cluster.ts';
import type { StorageMedium } from './common.ts';

export const DEFAULT_REPLICAS = 3;
export const DEFAULT_STORAGE_SIZE = '1Gi';
export const DEFAULT_STORAGE_MEDIUM: StorageMedium = '';
export const DEFAULT_PROGRESS_DEADLINE_SECONDS = 600;
export const DEFAULT_ISSUER_KIND: IssuerKind = 'Issuer';
export const DEFAULT_SNAPSHOT_KEEP_LAST = 7;
export const DEFAULT_SCHEDULE_SUSPEND = false;

/**
 * etcd minor releases the operator runs members of, oldest first. 3.4 (end of life) only for a
 * cluster that already runs it, until it is upgraded to 3.5: the CRD refuses a new 3.4 cluster.
 */
export const SUPPORTED_ETCD_MINORS = ['3.4', '3.5', '3.6', '3.7'] as const;
/** The minors a new cluster may ask for (the CRD's rules on spec.version). */
export const NEW_CLUSTER_ETCD_MINORS = ['3.5', '3.6', '3.7'] as const;

/** spec.version when the manifest names none (the CRD's default): the newest 3.6, what Kubernetes runs. */
export const DEFAULT_ETCD_VERSION = '3.6.16';

/**
 * The oldest patch of the previous minor that etcd's upgrade guide allows a rolling upgrade to the
 * minor from (etcd.io/docs upgrade_3_6: "3.5.26 or later"; upgrade_3_7: "3.6.11 or later").
 */
/** The newest patch of each minor etcdfn is tested on, suggested when a patch must change first. */
export const NEWEST_PATCH: Readonly<Record<string, string>> = {
  '3.5': '3.5.35',
  '3.6': '3.6.16',
  '3.7': '3.7.3',
};

export const MINIMUM_PATCH_BEFORE: Readonly<Record<string, string>> = { '3.6': '3.5.26', '3.7': '3.6.11' };

/** Not schema defaults: what the operator uses when the spec leaves these unset. */
export const DEFAULT_RESOURCE_REQUESTS = { cpu: '100m', memory: '128Mi' } as const;
/**
 * The default memory limit of an etcd container (a Memory-medium data volume is added on top, as it
 * is charged to the same cgroup). No default CPU limit: CFS throttling in the middle of a heartbeat
 * costs leader elections, and the CPU request already gives the scheduler what it needs.
 */
export const DEFAULT_MEMORY_LIMIT_BYTES = 2n * 1024n ** 3n;
export const DEFAULT_TIME_ZONE = 'UTC';
