// Values the CRD schemas default or enforce, for code that reads objects the API server has not
// defaulted (fixtures, tests). test/unit/crd-rules.test.ts checks they agree with crds/.
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
 * etcd minor releases the operator runs; spec.version must be one of their patch releases. 3.6 is
 * left out (and refused by the CRD) until a real 3.6 binary runs in the tests.
 */
export const SUPPORTED_ETCD_MINORS = ['3.4', '3.5'] as const;

/** Not schema defaults: what the operator uses when the spec leaves these unset. */
export const DEFAULT_RESOURCE_REQUESTS = { cpu: '100m', memory: '128Mi' } as const;
/**
 * The default memory limit of an etcd container (a Memory-medium data volume is added on top, as it
 * is charged to the same cgroup). No default CPU limit: CFS throttling in the middle of a heartbeat
 * costs leader elections, and the CPU request already gives the scheduler what it needs.
 */
export const DEFAULT_MEMORY_LIMIT_BYTES = 2n * 1024n ** 3n;
export const DEFAULT_S3_REGION = 'us-east-1';
export const DEFAULT_TIME_ZONE = 'UTC';
