// The etcd command line of a member's Pod, for the etcd minor release it runs. Everything a
// member needs to know is in its EtcdMember (copied from the cluster's locked target) plus two
// facts only the caller can read: whether the cluster has formed and the member's etcd ID.
import type { EtcdMember } from '../api/etcd-member.ts';
import { SUPPORTED_ETCD_MINORS } from '../api/defaults.ts';
import { clientUrl, DATA_DIR, peerUrl } from '../names.ts';
import { certPinFlags, listenFlags, type PodIPFamily } from './etcd-listen.ts';
import { storageBytes } from './storage.ts';

export type EtcdMinor = (typeof SUPPORTED_ETCD_MINORS)[number];

export const CLIENT_TLS_DIR = '/etc/etcd/tls/client';
export const PEER_TLS_DIR = '/etc/etcd/tls/peer';

/** Restart a member as a one-member cluster on its data (etcd keeps its member ID and cluster ID). */
export const FORCE_NEW_CLUSTER_FLAG = '--force-new-cluster';

/** etcd's own backend quota when --quota-backend-bytes is 0 or absent. */
export const ETCD_DEFAULT_QUOTA_BYTES = 2n * 1024n ** 3n;

export interface EtcdFlagOptions {
  namespace: string;
  /** The cluster's ID is recorded in status: a cluster already exists for this member to join. */
  clusterFormed: boolean;
  /** The member's etcd ID, once recorded; falls back to member.status.memberID. */
  memberID?: string;
  /** The family of the Pod's IP, which etcd listens on (IPv6 goes in brackets); IPv4 when unset. */
  podIPFamily?: PodIPFamily;
}

/** "3.6.16" → "3.6"; throws for a release the operator does not know how to run. */
export function etcdMinor(version: string): EtcdMinor {
  const match = /^(\d+)\.(\d+)\.(\d+)$/.exec(version);
  const minor = match ? `${match[1]}.${match[2]}` : undefined;
  const known = SUPPORTED_ETCD_MINORS.find(m => m === minor);
  if (!known) {
    throw new Error(
      `etcd version "${version}" is not supported: use a ${SUPPORTED_ETCD_MINORS.join(', ')} release ` +
        'written MAJOR.MINOR.PATCH',
    );
  }
  return known;
}

/**
 * The quota etcd runs with when the user sets none: half the volume, at most etcd's 2 GiB default.
 *
 * The volume holds more than the backend file the quota bounds: up to --max-wals (5) retained WAL
 * segments of 64 MB plus one preallocated, the raft snapshots, and — when recovering from the
 * NOSPACE alarm — the temporary copy a defragmentation writes. With etcd's 2 GiB default on the
 * default 1 GiB volume the disk fills first and etcd crashes instead of raising its alarm; with half
 * the volume the alarm fires while there is still room to compact and defragment. Volumes of 4 GiB
 * and more keep etcd's own default. An explicit options.quotaBackendBytes always wins.
 */
export function defaultQuotaBackendBytes(member: EtcdMember): bigint {
  const half = storageBytes(member.spec.storage) / 2n;
  return half < ETCD_DEFAULT_QUOTA_BYTES ? half : ETCD_DEFAULT_QUOTA_BYTES;
}

/**
 * The seed of a one-seed bootstrap: `new` only while no member ID is recorded and the cluster has
 * not formed; then `existing`, so a seed whose data directory was lost fails to start rather than
 * silently found a fresh, empty cluster under the old name (and pass its health check).
 *
 * A member of a static bootstrap (created with the whole initial list) that has not run yet is
 * `new` however late its Pod comes, as etcd's static bootstrap wants of every initial member: with
 * `existing`, etcd asks every peer for its version before it serves its own peer port
 * (isCompatibleWithCluster, an HTTP call with no timeout), so two late initial members started
 * together each wait for the other forever (seen on the sandbox: 3 of 5 ready, 2 hung in etcd
 * 3.5.16's getVersion). With `new` and no WAL, etcd itself refuses to start a member the cluster
 * has seen running ("member … has already been bootstrapped", plan/member/failure.ts: data lost).
 * Once it has run (status.hasData), the empty-data guard (hasDataGuard) replaces both settings.
 */
export function initialClusterState(member: EtcdMember, opts: EtcdFlagOptions): 'new' | 'existing' {
  if (member.spec.bootstrap !== true) return 'existing';
  if (isStaticInitialMember(member)) return member.status?.hasData === true ? 'existing' : 'new';
  const memberID = opts.memberID ?? member.status?.memberID;
  return !memberID && !opts.clusterFormed ? 'new' : 'existing';
}

/** Created with the whole initial list (static bootstrap), not as a seed that is its own cluster. */
export const isStaticInitialMember = (member: EtcdMember): boolean =>
  member.spec.bootstrap === true && (member.spec.initialCluster ?? '').includes(',');

/**
 * Whether the member's Pod starts etcd with the empty-data guard: once etcd has run as this member
 * on its volume (status.hasData), the Pod lists only the member itself in --initial-cluster, with
 * state `existing`. etcd reads both flags only when its data directory has no WAL: with its data
 * it ignores them and starts as before; with an empty (wiped) directory it finds no peer to ask
 * and refuses to start ("could not retrieve cluster information from the given URLs", exit 1)
 * instead of joining under the member's ID with no data, or founding a new cluster (the seed).
 * reconcile-member reads that refusal and has the member replaced. Checked against etcd 3.4.23
 * and 3.5.16.
 */
export function hasDataGuard(member: EtcdMember): boolean {
  return member.status?.hasData === true && !!member.status.memberID;
}

/** The two settings etcd reads only when its data directory holds no WAL (see hasDataGuard). */
export interface JoinSettings {
  initialCluster: string;
  state: 'new' | 'existing';
}

/**
 * The member's Pod does not pass the join settings as flags: it carries them in these annotations
 * and its etcd container reads them through ETCD_INITIAL_CLUSTER and ETCD_INITIAL_CLUSTER_STATE
 * (downward API). A kubelet builds a container's environment each time it starts the container, so
 * the operator can arm the empty-data guard of a member's first Pod once the member has run: an
 * in-place restart on a wiped directory then refuses like a guarded Pod, while the etcd running
 * now is left alone (it reads neither setting again).
 */
export const INITIAL_CLUSTER_ANNOTATION = 'etcdfn.io/initial-cluster';
export const INITIAL_CLUSTER_STATE_ANNOTATION = 'etcdfn.io/initial-cluster-state';
export const INITIAL_CLUSTER_ENV = 'ETCD_INITIAL_CLUSTER';
export const INITIAL_CLUSTER_STATE_ENV = 'ETCD_INITIAL_CLUSTER_STATE';

/** The guard's join settings: only the member itself, state `existing`. */
export function guardedJoin(member: EtcdMember, namespace: string): JoinSettings {
  const name = member.metadata.name ?? '';
  const where = { namespace, cluster: member.spec.clusterName, member: name };
  const peerTls = member.spec.tls?.peerSecretRef !== undefined;
  return { initialCluster: `${name}=${peerUrl({ ...where, tls: peerTls })}`, state: 'existing' };
}

/** The flags after argv[0] (`etcd`), in a stable order. */
export function etcdFlags(member: EtcdMember, opts: EtcdFlagOptions): string[] {
  const name = member.metadata.name;
  if (!name) throw new Error('etcdFlags: the member has no name yet (build its Pod after creating it)');
  if (!member.spec.initialCluster) {
    throw new Error(
      `etcdFlags: EtcdMember ${name} has no initialCluster; it must be added to etcd (or be the seed ` +
        'with itself as initial cluster) before its Pod is built',
    );
  }
  const minor = etcdMinor(member.spec.version);
  const clientTls = member.spec.tls?.clientServerSecretRef !== undefined;
  const peerTls = member.spec.tls?.peerSecretRef !== undefined;
  const where = { namespace: opts.namespace, cluster: member.spec.clusterName, member: name };
  const guard = hasDataGuard(member) ? guardedJoin(member, opts.namespace) : undefined;

  return [
    `--name=${name}`,
    `--data-dir=${DATA_DIR}`,
    ...listenFlags(member.spec.tls, opts.podIPFamily),
    `--advertise-client-urls=${clientUrl({ ...where, tls: clientTls })}`,
    `--initial-advertise-peer-urls=${peerUrl({ ...where, tls: peerTls })}`,
    `--initial-cluster=${guard?.initialCluster ?? member.spec.initialCluster}`,
    `--initial-cluster-token=${member.spec.clusterToken}`,
    `--initial-cluster-state=${guard?.state ?? initialClusterState(member, opts)}`,
    ...optionFlags(member, minor),
    // Quorum-loss recovery only, for one start (shared/plan/member/force-new-cluster.ts replaces the Pod after it).
    ...(member.spec.forceNewCluster === true ? [FORCE_NEW_CLUSTER_FLAG] : []),
    ...(clientTls ? clientTlsFlags(member.spec.tls?.clientMTLS === true) : []),
    ...(peerTls ? peerTlsFlags() : []),
    ...certPinFlags(member.spec.tls),
    ...VERSION_FLAGS[minor].flags,
  ];
}

function optionFlags(member: EtcdMember, minor: EtcdMinor): string[] {
  const o = member.spec.options ?? {};
  const quota = o.quotaBackendBytes ? BigInt(o.quotaBackendBytes) : defaultQuotaBackendBytes(member);
  const flags = [`--quota-backend-bytes=${quota}`];
  if (o.autoCompactionMode) flags.push(`--auto-compaction-mode=${o.autoCompactionMode}`);
  if (o.autoCompactionRetention) flags.push(`--auto-compaction-retention=${o.autoCompactionRetention}`);
  flags.push(`--snapshot-count=${o.snapshotCount || VERSION_FLAGS[minor].defaultSnapshotCount}`);
  return flags;
}

function clientTlsFlags(mutual: boolean): string[] {
  const flags = [`--cert-file=${CLIENT_TLS_DIR}/tls.crt`, `--key-file=${CLIENT_TLS_DIR}/tls.key`];
  if (mutual) flags.push('--client-cert-auth=true', `--trusted-ca-file=${CLIENT_TLS_DIR}/ca.crt`);
  return flags;
}

function peerTlsFlags(): string[] {
  return [
    `--peer-cert-file=${PEER_TLS_DIR}/tls.crt`,
    `--peer-key-file=${PEER_TLS_DIR}/tls.key`,
    `--peer-trusted-ca-file=${PEER_TLS_DIR}/ca.crt`,
    '--peer-client-cert-auth=true',
  ];
}

/**
 * What differs between minors: one row per minor, every flag checked against that release's real
 * binary (`etcd --help`, test/unit/builders-etcd-flags.test.ts) and started with it
 * (test/integration/etcd-flags-minors.test.ts). Every minor checks its data against the peers'
 * before serving (the initial corruption check), each with the spelling it understands:
 * - 3.4: its default logger (capnslog) is deprecated, so zap is asked for explicitly; the check is
 *   the experimental flag (since 3.3; verified against etcd 3.4.23).
 * - 3.5: zap is the default; the check is --experimental-initial-corrupt-check.
 * - 3.6: the experimental flags are deprecated (3.6 still reads them, with a warning): the check is
 *   the InitialCorruptCheck feature gate, and the leader's periodic check of the followers'
 *   compaction hashes (CompactHashCheck) is turned on with it.
 * - 3.7: the `--experimental-*` spellings are gone (etcd refuses to start on them): the same gates.
 * snapshotCount: etcd's own default when the spec sets none, written out because it changed in 3.6
 * (100000 → 10000: fewer raft entries kept in memory); a member upgraded to 3.6 takes the new one.
 * None passes --enable-v2 (the v2 API is gone in 3.6, so the v2 store never holds data of ours and
 * the upgrade guide's v2store step has nothing to find) or --unsafe-no-fsync (absent in 3.4, unsafe).
 */
export interface MinorFlags {
  flags: readonly string[];
  defaultSnapshotCount: number;
}

const GATES_3_6 = '--feature-gates=InitialCorruptCheck=true,CompactHashCheck=true';

export const VERSION_FLAGS: Readonly<Record<EtcdMinor, MinorFlags>> = {
  '3.4': {
    flags: ['--logger=zap', '--experimental-initial-corrupt-check=true'],
    defaultSnapshotCount: 100_000,
  },
  '3.5': { flags: ['--experimental-initial-corrupt-check=true'], defaultSnapshotCount: 100_000 },
  '3.6': { flags: [GATES_3_6], defaultSnapshotCount: 10_000 },
  '3.7': { flags: [GATES_3_6], defaultSnapshotCount: 10_000 },
};
