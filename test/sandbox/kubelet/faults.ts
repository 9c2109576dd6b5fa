// Fault injection: the operations, shared by the in-process handle (`kubelet.faults`), the
// loopback HTTP control endpoint (control.ts) and the command line (fault.ts).

export interface PodRef {
  /** default: "default" */
  namespace?: string;
  pod: string;
}

export interface KillRequest extends PodRef {
  /** default: every running container of the Pod */
  container?: string;
  /** default SIGKILL */
  signal?: NodeJS.Signals;
}

export interface KillResult {
  killed: { container: string; pid: number }[];
}

export interface WipeRequest {
  namespace?: string;
  claim: string;
}

export interface DiskFaultRequest {
  namespace?: string;
  claim: string;
  /** fill-pvc: the size of the small disk, in bytes. */
  bytes?: number;
}

export interface DelayRequest extends PodRef {
  seconds: number;
}

export interface ContainerState {
  name: string;
  pid: number | undefined;
  restartCount: number;
  state: string;
  ready: boolean;
}

export interface PodState {
  namespace: string;
  name: string;
  uid: string;
  ip: string | undefined;
  dir: string;
  /** The kubelet has seen the Pod's deletion (its deletionTimestamp). */
  deleting: boolean;
  /** The resourceVersion of the Pod as the kubelet holds it (its watch may lag the API server). */
  resourceVersion: string | undefined;
  containers: ContainerState[];
}

export interface NodeState {
  nodeName: string;
  frozen: boolean;
  hostsFile: string | undefined;
  pods: PodState[];
}

/** What a test (or the CLI) can do to the sandbox node. */
export interface Faults {
  /** Signals a Pod's container processes (SIGKILL by default); the kubelet then restarts them per restartPolicy. */
  kill(req: KillRequest): Promise<KillResult>;
  /** Deletes everything in a PVC's directory (the disk lost its data); returns the directory. */
  wipePvc(req: WipeRequest): Promise<{ path: string }>;
  /** The claim's disk becomes `bytes` small (writes past it: ENOSPC), keeping what it held. */
  fillPvc(req: DiskFaultRequest): Promise<{ path: string }>;
  /** The claim's file system turns read-only (writes: EROFS). */
  readOnlyPvc(req: DiskFaultRequest): Promise<{ path: string }>;
  /** Undoes fill-pvc or read-only-pvc on the claim. */
  releasePvc(req: DiskFaultRequest): Promise<{ path: string }>;
  /** The node stops acting: processes SIGSTOPped, no status updates, no restarts, Pods stay Terminating. */
  freeze(): Promise<void>;
  /** Resumes a frozen node: processes SIGCONTed, pending work (status, deletions) carried out. */
  unfreeze(): Promise<void>;
  /** The Pod's containers start (or restart) no earlier than `seconds` from now; works before the Pod exists. */
  delayStart(req: DelayRequest): Promise<void>;
  /** What runs where: Pod IPs, directories, container PIDs and restart counts. */
  state(): Promise<NodeState>;
}

export class FaultError extends Error {
  readonly status: number;
  constructor(message: string, status: number) {
    super(message);
    this.status = status;
  }
}
