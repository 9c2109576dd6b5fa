// Leader election for standalone mode, on a coordination.k8s.io Lease, as client-go's leaderelection
// does it: the holder renews spec.renewTime every retry period; another replica takes the Lease over
// once it has seen the same record unchanged for leaseDurationSeconds (its own clock, so clock skew
// between nodes does not matter) or once the holder has released it (holderIdentity ""). Every write
// is a compare-and-swap on resourceVersion, so two replicas never both win. A leader that cannot
// renew for renewDeadline steps down by itself, before anyone else may take over.
import type { Logger } from 'pino';
import type { KubeObject, KubeObjects } from '../shared/k8s/objects.ts';
import { log as rootLog } from '../shared/log.ts';

export interface LeaseSpec {
  holderIdentity?: string;
  leaseDurationSeconds?: number;
  acquireTime?: string;
  renewTime?: string;
  leaseTransitions?: number;
}
export type Lease = KubeObject & { spec?: LeaseSpec };

export type LeaseDecision =
  | { kind: 'create' }
  | { kind: 'renew' }
  | { kind: 'take-over'; why: 'expired' | 'released' }
  | { kind: 'wait'; holder: string };

/**
 * What this replica does with the Lease it just read. Pure. `unchangedForMs` is how long this
 * replica has seen the same holder and renewTime (0 when the record just changed).
 */
export function decideLease(lease: Lease | undefined, me: string, unchangedForMs: number): LeaseDecision {
  if (!lease) return { kind: 'create' };
  const holder = lease.spec?.holderIdentity ?? '';
  if (holder === me) return { kind: 'renew' };
  if (holder === '') return { kind: 'take-over', why: 'released' };
  const durationMs = (lease.spec?.leaseDurationSeconds ?? 15) * 1000;
  if (unchangedForMs >= durationMs) return { kind: 'take-over', why: 'expired' };
  return { kind: 'wait', holder };
}

/** A MicroTime as the API server writes it (RFC 3339, six fractional digits). */
export function microTime(at: Date): string {
  return at.toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');
}

export interface LeaderElectorOptions {
  kube: KubeObjects;
  namespace: string;
  name: string;
  identity: string;
  leaseDurationSeconds?: number;
  /** A leader that has not renewed for this long steps down (default 2/3 of the lease duration). */
  renewDeadlineMs?: number;
  /** How often the Lease is read and renewed (default 1/7 of the lease duration, at least 200 ms). */
  retryPeriodMs?: number;
  onStartedLeading: () => Promise<void> | void;
  onStoppedLeading: () => Promise<void> | void;
  log?: Logger;
  now?: () => number;
}

export class LeaderElector {
  private timer: NodeJS.Timeout | undefined;
  private leading = false;
  private stopped = false;
  private lastRenewed = 0;
  private observed = { record: '', since: 0 };
  private readonly log: Logger;
  private readonly durationS: number;
  private readonly renewDeadlineMs: number;
  private readonly retryPeriodMs: number;
  private readonly now: () => number;
  private running: Promise<void> = Promise.resolve();
  private readonly options: LeaderElectorOptions;

  constructor(options: LeaderElectorOptions) {
    this.options = options;
    this.log = options.log ?? rootLog.child({ component: 'leader-election', lease: options.name });
    this.durationS = options.leaseDurationSeconds ?? 15;
    this.renewDeadlineMs = options.renewDeadlineMs ?? Math.floor((this.durationS * 1000 * 2) / 3);
    this.retryPeriodMs = options.retryPeriodMs ?? Math.max(200, Math.floor((this.durationS * 1000) / 7));
    this.now = options.now ?? (() => performance.now());
  }

  get isLeader(): boolean {
    return this.leading;
  }

  start(): void {
    const loop = () => {
      if (this.stopped) return;
      this.running = this.round().finally(() => {
        if (!this.stopped) this.timer = setTimeout(loop, this.retryPeriodMs);
      });
    };
    loop();
  }

  /** Stops trying; a leader releases the Lease (holderIdentity "") so another takes over at once. */
  async stop(): Promise<void> {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
    await this.running;
    if (!this.leading) return;
    await this.release();
    await this.setLeading(false);
  }

  private ref() {
    return {
      apiVersion: 'coordination.k8s.io/v1',
      kind: 'Lease',
      namespace: this.options.namespace,
      name: this.options.name,
    };
  }

  private async round(): Promise<void> {
    try {
      const read = await this.options.kube.get<Lease>(this.ref());
      const lease = read.kind === 'found' ? read.object : undefined;
      const record = `${lease?.spec?.holderIdentity ?? ''}|${lease?.spec?.renewTime ?? ''}`;
      if (record !== this.observed.record) this.observed = { record, since: this.now() };
      const decision = decideLease(lease, this.options.identity, this.now() - this.observed.since);
      if (decision.kind === 'wait') {
        if (this.leading) this.log.warn({ holder: decision.holder }, 'another replica holds the Lease');
        await this.setLeading(false);
        return;
      }
      const written = await this.write(decision, lease);
      if (written) {
        this.lastRenewed = this.now();
        if (!this.leading) this.log.info({ identity: this.options.identity, how: decision.kind }, 'leading');
        await this.setLeading(true);
        return;
      }
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'Lease read or write failed');
    }
    if (this.leading && this.now() - this.lastRenewed > this.renewDeadlineMs) {
      this.log.warn('could not renew the Lease in time: stepping down');
      await this.setLeading(false);
    }
  }

  /** Creates, renews or takes over the Lease; false when another write won (409) or it vanished. */
  private async write(decision: LeaseDecision, lease: Lease | undefined): Promise<boolean> {
    const at = microTime(new Date());
    const me = this.options.identity;
    if (decision.kind === 'create' || !lease) {
      const created = await this.options.kube.create<Lease>({
        apiVersion: 'coordination.k8s.io/v1',
        kind: 'Lease',
        metadata: { name: this.options.name, namespace: this.options.namespace },
        spec: {
          holderIdentity: me,
          leaseDurationSeconds: this.durationS,
          acquireTime: at,
          renewTime: at,
          leaseTransitions: 0,
        },
      });
      return created.kind === 'created';
    }
    const spec: LeaseSpec = {
      ...lease.spec,
      holderIdentity: me,
      leaseDurationSeconds: this.durationS,
      renewTime: at,
    };
    if (decision.kind === 'take-over') {
      spec.acquireTime = at;
      spec.leaseTransitions = (lease.spec?.leaseTransitions ?? 0) + 1;
    }
    const result = await this.options.kube.replace<Lease>({ ...lease, spec });
    return result.kind === 'written';
  }

  private async release(): Promise<void> {
    try {
      const read = await this.options.kube.get<Lease>(this.ref());
      if (read.kind !== 'found' || read.object.spec?.holderIdentity !== this.options.identity) return;
      const spec: LeaseSpec = {
        ...read.object.spec,
        holderIdentity: '',
        leaseDurationSeconds: 1,
        renewTime: microTime(new Date()),
      };
      await this.options.kube.replace<Lease>({ ...read.object, spec });
      this.log.info('released the Lease');
    } catch (err) {
      this.log.warn({ err: err instanceof Error ? err.message : String(err) }, 'could not release the Lease');
    }
  }

  private async setLeading(leading: boolean): Promise<void> {
    if (leading === this.leading) return;
    this.leading = leading;
    if (leading) await this.options.onStartedLeading();
    else await this.options.onStoppedLeading();
  }
}
