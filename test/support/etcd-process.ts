// Real etcd members as child processes of the test, on loopback addresses.
//
// Linux routes all of 127.0.0.0/8 to `lo`, so every member gets its own IP (127.a.b.c) and etcd's
// default ports (2379 client, 2380 peer) with no interface setup. Each `LoopbackAddresses` picks a
// random 127.a.b.0/24 and probes both ports before handing an address out, so test files running
// in parallel do not collide.
//
// Typical use (one cluster per test file or describe block):
//
//   const cluster = await EtcdTestCluster.start({ minor: '3.5', size: 3 });
//   after(() => cluster.cleanup());            // stops every process (even on failure), removes dirs
//   cluster.endpoints;                         // client URLs of the running members
//   const slot = await cluster.reserve('m4');  // an address for a member about to be added
//   ... memberAdd(slot.peerURL) through the adapter ...
//   await cluster.startMember(slot, { state: 'existing', initialCluster: initialClusterFlag([...]) });
//
// Processes are spawned directly (no shell) and awaited on 'exit', so a stopped member really is
// gone when `stop()` resolves. A process-exit hook SIGKILLs anything still running if a test run
// dies before its `after` hooks.
import { spawn, execFile } from 'node:child_process';
import type { ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { etcdBinaries } from './etcd-binaries.ts';
import type { EtcdBinaries, EtcdMinor } from './etcd-binaries.ts';

const execFileAsync = promisify(execFile);

export const CLIENT_PORT = 2379;
export const PEER_PORT = 2380;

/** An address reserved for one member: its name and the URLs it listens on and advertises. */
export interface EtcdSlot {
  name: string;
  host: string;
  clientURL: string;
  peerURL: string;
}

export interface ExitInfo {
  code: number | null;
  signal: NodeJS.Signals | null;
}

/** Raft timings. Fast timings make elections and startup take tens of milliseconds. */
export interface RaftTimings {
  heartbeatMs: number;
  electionMs: number;
}

/** Fast but not twitchy on a loaded 2-core machine. */
export const FAST_RAFT: RaftTimings = { heartbeatMs: 20, electionMs: 200 };

export interface SpawnEtcdOptions {
  binaries: EtcdBinaries;
  slot: EtcdSlot;
  dataDir: string;
  /** `--initial-cluster`, see `initialClusterFlag`. Ignored by etcd when dataDir already holds data. */
  initialCluster: string;
  /** 'new' when bootstrapping, 'existing' for a member added to a running cluster. */
  state: 'new' | 'existing';
  token: string;
  raft?: RaftTimings;
  /** Skip fsync (3.5+ only; ignored for 3.4, which has no such flag). Default true: data is thrown away. */
  unsafeNoFsync?: boolean;
  /** Appended last, so they can override anything above. */
  extraArgs?: string[];
  /**
   * Pass the join settings (initialCluster, state) as ETCD_INITIAL_CLUSTER and
   * ETCD_INITIAL_CLUSTER_STATE instead of flags, as a member's Pod does (shared/builders/pod.ts).
   */
  joinFromEnv?: boolean;
}

/** Hands out loopback addresses from a random 127.a.b.0/24 whose ports are free. */
export class LoopbackAddresses {
  private readonly prefix: string;
  private next = 1;

  constructor() {
    const a = 20 + Math.floor(Math.random() * 230);
    const b = Math.floor(Math.random() * 256);
    this.prefix = `127.${a}.${b}`;
  }

  /** Reserves the next free host of this block for a member called `name`. */
  async reserve(name: string): Promise<EtcdSlot> {
    while (this.next < 255) {
      const host = `${this.prefix}.${this.next++}`;
      if ((await portFree(host, CLIENT_PORT)) && (await portFree(host, PEER_PORT))) {
        return {
          name,
          host,
          clientURL: `http://${host}:${CLIENT_PORT}`,
          peerURL: `http://${host}:${PEER_PORT}`,
        };
      }
    }
    throw new Error(`no free loopback address left in ${this.prefix}.0/24`);
  }
}

function portFree(host: string, port: number): Promise<boolean> {
  return new Promise(resolve => {
    const server = createServer();
    server.once('error', () => resolve(false));
    server.listen({ host, port, exclusive: true }, () => server.close(() => resolve(true)));
  });
}

/** `--initial-cluster` value: `name=peerURL` pairs. */
export function initialClusterFlag(members: { name: string; peerURL: string }[]): string {
  return members.map(m => `${m.name}=${m.peerURL}`).join(',');
}

const live = new Set<ChildProcess>();
let exitHookInstalled = false;

function installExitHook(): void {
  if (exitHookInstalled) return;
  exitHookInstalled = true;
  process.on('exit', () => {
    for (const child of live) child.kill('SIGKILL');
  });
}

const LOG_LINES = 200;

/** One running (or exited) etcd process. */
export class EtcdProcess {
  readonly name: string;
  readonly slot: EtcdSlot;
  readonly clientURL: string;
  readonly peerURL: string;
  readonly dataDir: string;
  readonly pid: number;
  /** Resolves once the process has exited, for whatever reason. */
  readonly exited: Promise<ExitInfo>;
  private readonly child: ChildProcess;
  private readonly logTail: string[] = [];
  private exitInfo: ExitInfo | undefined;

  constructor(options: SpawnEtcdOptions) {
    const { binaries, slot } = options;
    this.name = slot.name;
    this.slot = slot;
    this.clientURL = slot.clientURL;
    this.peerURL = slot.peerURL;
    this.dataDir = options.dataDir;
    installExitHook();
    const env = options.joinFromEnv
      ? {
          ...process.env,
          ETCD_INITIAL_CLUSTER: options.initialCluster,
          ETCD_INITIAL_CLUSTER_STATE: options.state,
        }
      : process.env;
    this.child = spawn(binaries.etcd, etcdArgs(options), { stdio: ['ignore', 'ignore', 'pipe'], env });
    if (this.child.pid === undefined) throw new Error(`could not spawn ${binaries.etcd}`);
    this.pid = this.child.pid;
    live.add(this.child);
    this.exited = new Promise(resolve => {
      this.child.once('exit', (code, signal) => {
        live.delete(this.child);
        this.exitInfo = { code, signal };
        resolve(this.exitInfo);
      });
    });
    this.captureLogs();
  }

  get running(): boolean {
    return this.exitInfo === undefined;
  }

  /** The last lines etcd wrote to stderr (for failure messages). */
  logs(): string {
    return this.logTail.join('\n');
  }

  /**
   * Stops the process and resolves when it has exited: SIGTERM (a graceful stop, 1-2 s while its
   * peers are up), then SIGKILL after `timeoutMs`. `force` sends SIGKILL straight away, which is
   * right for teardown when the data is thrown away.
   */
  async stop(options: { timeoutMs?: number; force?: boolean } = {}): Promise<ExitInfo> {
    if (this.exitInfo) return this.exitInfo;
    this.child.kill(options.force ? 'SIGKILL' : 'SIGTERM');
    const timer = setTimeout(() => this.child.kill('SIGKILL'), options.timeoutMs ?? 5_000);
    try {
      return await this.exited;
    } finally {
      clearTimeout(timer);
    }
  }

  private captureLogs(): void {
    const echo = process.env.ETCD_TEST_LOGS === '1';
    let partial = '';
    this.child.stderr?.setEncoding('utf8');
    this.child.stderr?.on('data', (chunk: string) => {
      const lines = (partial + chunk).split('\n');
      partial = lines.pop() ?? '';
      for (const line of lines) {
        if (echo) process.stderr.write(`[${this.name}] ${line}\n`);
        this.logTail.push(line);
        if (this.logTail.length > LOG_LINES) this.logTail.shift();
      }
    });
  }
}

function etcdArgs(o: SpawnEtcdOptions): string[] {
  const raft = o.raft ?? FAST_RAFT;
  const args = [
    `--name=${o.slot.name}`,
    `--data-dir=${o.dataDir}`,
    `--listen-client-urls=${o.slot.clientURL}`,
    `--advertise-client-urls=${o.slot.clientURL}`,
    `--listen-peer-urls=${o.slot.peerURL}`,
    `--initial-advertise-peer-urls=${o.slot.peerURL}`,
    ...(o.joinFromEnv ? [] : [`--initial-cluster=${o.initialCluster}`, `--initial-cluster-state=${o.state}`]),
    `--initial-cluster-token=${o.token}`,
    `--heartbeat-interval=${raft.heartbeatMs}`,
    `--election-timeout=${raft.electionMs}`,
    '--logger=zap',
    '--log-outputs=stderr',
  ];
  if ((o.unsafeNoFsync ?? true) && o.binaries.minor !== '3.4') args.push('--unsafe-no-fsync');
  return [...args, ...(o.extraArgs ?? [])];
}

/** What `/v3/maintenance/status` says, reduced to what readiness needs. */
export interface ProbeStatus {
  memberId: string;
  leader: string;
  isLearner: boolean;
  version: string;
}

/**
 * Asks one member for its status over the gRPC gateway (plain HTTP, so no client library is
 * involved). Resolves undefined when the member does not answer within `timeoutMs`.
 */
/** A user etcd's auth knows, for probing a cluster with auth on. */
export interface ProbeCredentials {
  username: string;
  password: string;
}

/**
 * With auth on, etcd 3.5.35, 3.6.16 and 3.7.3 refuse an anonymous maintenance status ("user name
 * is empty"; 3.4.23 and 3.5.16 answered it): `credentials` get a token first.
 */
export async function probeStatus(
  clientURL: string,
  timeoutMs = 1_000,
  credentials?: ProbeCredentials,
): Promise<ProbeStatus | undefined> {
  try {
    const headers: Record<string, string> = {};
    if (credentials) {
      const auth = await fetch(`${clientURL}/v3/auth/authenticate`, {
        method: 'POST',
        body: JSON.stringify({ name: credentials.username, password: credentials.password }),
        signal: AbortSignal.timeout(timeoutMs),
      });
      const token = auth.ok ? ((await auth.json()) as { token?: string }).token : undefined;
      if (token) headers.Authorization = token;
    }
    const res = await fetch(`${clientURL}/v3/maintenance/status`, {
      method: 'POST',
      body: '{}',
      headers,
      signal: AbortSignal.timeout(timeoutMs),
    });
    if (!res.ok) return undefined;
    // The gateway's JSON: uint64s as decimal strings, fields left out when zero or false.
    const body = (await res.json()) as {
      header?: { member_id?: string };
      leader?: string;
      isLearner?: boolean;
      version?: string;
    };
    return {
      memberId: body.header?.member_id ?? '0',
      leader: body.leader ?? '0',
      isLearner: body.isLearner === true,
      version: body.version ?? '',
    };
  } catch {
    return undefined;
  }
}

/**
 * Waits until every given member answers and all of them report the same, non-zero leader.
 * Throws with the members' last log lines on timeout or when one of them exits.
 */
export async function waitForLeader(
  members: EtcdProcess[],
  timeoutMs = 15_000,
  credentials?: ProbeCredentials,
): Promise<string> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const exited = members.find(m => !m.running);
    if (exited) throw new Error(`etcd member ${exited.name} exited while starting:\n${exited.logs()}`);
    const statuses = await Promise.all(members.map(m => probeStatus(m.clientURL, 1_000, credentials)));
    const leaders = new Set(statuses.map(s => s?.leader ?? '0'));
    const [leader] = [...leaders];
    if (leaders.size === 1 && leader !== undefined && leader !== '0') return leader;
    if (Date.now() > deadline) {
      const logs = members.map(m => `--- ${m.name} ---\n${m.logs()}`).join('\n');
      throw new Error(`etcd members did not agree on a leader within ${timeoutMs} ms:\n${logs}`);
    }
    await sleep(50);
  }
}

export const sleep = (ms: number): Promise<void> => new Promise(resolve => setTimeout(resolve, ms));

export interface StartClusterOptions {
  minor: EtcdMinor;
  size: number;
  /** Member names; default m1..mN. */
  names?: string[];
  raft?: RaftTimings;
  unsafeNoFsync?: boolean;
  extraArgs?: string[];
  /** One exact release instead of the minor's newest (the bench's hand-run clusters run the Pods'). */
  binaries?: EtcdBinaries;
}

export interface StartMemberOptions {
  state: 'new' | 'existing';
  /** Another release for this member (a rolling upgrade or downgrade); default the cluster's. */
  binaries?: EtcdBinaries;
  initialCluster: string;
  /** Default: a fresh folder under the cluster's temp dir. Pass a restored data dir to boot from it. */
  dataDir?: string;
  /** Wait until it reports a leader (default true). */
  wait?: boolean;
  /** See SpawnEtcdOptions.joinFromEnv. */
  joinFromEnv?: boolean;
}

/** A set of etcd processes sharing one temp dir, one token and one address block. */
export class EtcdTestCluster {
  readonly binaries: EtcdBinaries;
  /** Temp dir holding every member's data dir; removed by `cleanup()`. */
  readonly rootDir: string;
  readonly token: string;
  private readonly addresses = new LoopbackAddresses();
  private readonly procs: EtcdProcess[] = [];
  private readonly options: StartClusterOptions;
  /** Set by a test that turns auth on: how the harness probes members from then on. */
  credentials: ProbeCredentials | undefined;

  private constructor(options: StartClusterOptions) {
    this.options = options;
    this.binaries = options.binaries ?? etcdBinaries(options.minor);
    this.rootDir = mkdtempSync(join(tmpdir(), `etcdfn-etcd-${options.minor}-`));
    this.token = `etcdfn-test-${process.pid}-${Math.random().toString(36).slice(2, 8)}`;
  }

  /** Bootstraps a `size`-member cluster and waits until all members agree on a leader. */
  static async start(options: StartClusterOptions): Promise<EtcdTestCluster> {
    const cluster = new EtcdTestCluster(options);
    try {
      const names = options.names ?? Array.from({ length: options.size }, (_, i) => `m${i + 1}`);
      const slots: EtcdSlot[] = [];
      for (const name of names) slots.push(await cluster.reserve(name));
      const initialCluster = initialClusterFlag(slots);
      for (const slot of slots)
        await cluster.startMember(slot, { state: 'new', initialCluster, wait: false });
      await waitForLeader(cluster.running());
      return cluster;
    } catch (err) {
      await cluster.cleanup();
      throw err;
    }
  }

  /** Every process started so far, in start order, including exited ones. */
  get processes(): readonly EtcdProcess[] {
    return this.procs;
  }

  /** Processes still running. */
  running(): EtcdProcess[] {
    return this.procs.filter(p => p.running);
  }

  /** Client URLs of the running processes. */
  get endpoints(): string[] {
    return this.running().map(p => p.clientURL);
  }

  /** The most recently started process called `name`. */
  process(name: string): EtcdProcess {
    const proc = [...this.procs].reverse().find(p => p.name === name);
    if (!proc) throw new Error(`no etcd process called ${name}`);
    return proc;
  }

  /** The process whose member ID (decimal, as etcd's JSON and etcd3 give it) is `memberId`. */
  async processById(memberId: string): Promise<EtcdProcess | undefined> {
    for (const proc of this.running()) {
      if ((await probeStatus(proc.clientURL))?.memberId === memberId) return proc;
    }
    return undefined;
  }

  /** An address for a member that is about to be added (its peer URL is needed for memberAdd). */
  reserve(name: string): Promise<EtcdSlot> {
    return this.addresses.reserve(name);
  }

  /** Starts a member on a reserved slot; by default waits until it reports a leader. */
  async startMember(slot: EtcdSlot, options: StartMemberOptions): Promise<EtcdProcess> {
    const proc = new EtcdProcess({
      binaries: options.binaries ?? this.binaries,
      slot,
      dataDir: options.dataDir ?? join(this.rootDir, `${slot.name}-${this.procs.length}`),
      initialCluster: options.initialCluster,
      state: options.state,
      token: this.token,
      raft: this.options.raft,
      unsafeNoFsync: this.options.unsafeNoFsync,
      extraArgs: this.options.extraArgs,
      joinFromEnv: options.joinFromEnv,
    });
    this.procs.push(proc);
    if (options.wait ?? true) await waitForLeader([proc], undefined, this.credentials);
    return proc;
  }

  /**
   * Restores a snapshot file into a fresh data dir for a single-member cluster on `slot`, with
   * `etcdutl snapshot restore` (3.5+) or `etcdctl snapshot restore` (3.4). Returns the data dir,
   * ready for `startMember(slot, { state: 'new', initialCluster: \`${slot.name}=${slot.peerURL}\`, dataDir })`.
   */
  async restoreSnapshot(snapshotFile: string, slot: EtcdSlot): Promise<string> {
    const dataDir = join(this.rootDir, `${slot.name}-restored`);
    const tool = this.binaries.etcdutl ?? this.binaries.etcdctl;
    await execFileAsync(
      tool,
      [
        'snapshot',
        'restore',
        snapshotFile,
        `--name=${slot.name}`,
        `--data-dir=${dataDir}`,
        `--initial-cluster=${slot.name}=${slot.peerURL}`,
        `--initial-advertise-peer-urls=${slot.peerURL}`,
        `--initial-cluster-token=${this.token}-restored`,
      ],
      { env: { ...process.env, ETCDCTL_API: '3' }, timeout: 30_000 },
    );
    return dataDir;
  }

  /** Stops every running process (in parallel) and waits for all of them to exit. */
  async stopAll(options: { force?: boolean; timeoutMs?: number } = {}): Promise<void> {
    await Promise.all(this.running().map(p => p.stop(options)));
  }

  /** Kills every process (SIGKILL: the data is discarded) and removes the temp dir. Safe to call twice. */
  async cleanup(): Promise<void> {
    await this.stopAll({ force: true });
    rmSync(this.rootDir, { recursive: true, force: true });
  }
}
