// Node heartbeats, as the kubelet sends them: each node's Lease in kube-node-lease renewed every
// 10 s (leaseDurationSeconds 40). Without them kube-controller-manager's node lifecycle controller
// marks the node NotReady after its grace period, taints it and evicts its Pods.
import { microTime } from '../../../standalone/leader.ts';
import type { Api } from './api.ts';
import { errorText, isConflict, isNotFound } from './api.ts';
import type { Logger } from './types.ts';

export const LEASE_NAMESPACE = 'kube-node-lease';
export const LEASE_DURATION_SECONDS = 40;
export const RENEW_INTERVAL_MS = 10_000;
const LEASES = `/apis/coordination.k8s.io/v1/namespaces/${LEASE_NAMESPACE}/leases`;

/** The Lease a node's heartbeat creates (renewTime `now`). */
export function nodeLease(node: string, uid: string | undefined, now: Date): Record<string, unknown> {
  return {
    apiVersion: 'coordination.k8s.io/v1',
    kind: 'Lease',
    metadata: {
      name: node,
      namespace: LEASE_NAMESPACE,
      ...(uid && { ownerReferences: [{ apiVersion: 'v1', kind: 'Node', name: node, uid }] }),
    },
    spec: { holderIdentity: node, leaseDurationSeconds: LEASE_DURATION_SECONDS, renewTime: microTime(now) },
  };
}

export class NodeHeartbeat {
  private timer: NodeJS.Timeout | undefined;
  private readonly api: Api;
  /** the nodes to renew now (a lost node's Lease is left to expire) */
  private readonly nodes: () => string[];
  private readonly log: Logger;
  /** true while the kubelet is frozen (a hung node sends no heartbeat) */
  private readonly paused: () => boolean;

  constructor(api: Api, nodes: () => string[], log: Logger, paused: () => boolean = () => false) {
    this.api = api;
    this.nodes = nodes;
    this.log = log;
    this.paused = paused;
  }

  async start(): Promise<void> {
    await this.beat();
    this.timer = setInterval(() => void this.beat(), RENEW_INTERVAL_MS);
    this.timer.unref();
  }

  stop(): void {
    if (this.timer) clearInterval(this.timer);
  }

  private async beat(): Promise<void> {
    if (this.paused()) return;
    await Promise.all(this.nodes().map(node => this.renew(node)));
  }

  private async renew(node: string): Promise<void> {
    const now = new Date();
    try {
      await this.api.sendJson(
        'PATCH',
        `${LEASES}/${node}`,
        {
          spec: {
            holderIdentity: node,
            leaseDurationSeconds: LEASE_DURATION_SECONDS,
            renewTime: microTime(now),
          },
        },
        'application/merge-patch+json',
      );
    } catch (err) {
      if (!isNotFound(err)) return this.log(`node ${node}: lease renewal failed: ${errorText(err)}`);
      try {
        const uid = (await this.api.core.readNode({ name: node })).metadata?.uid;
        await this.api.sendJson('POST', LEASES, nodeLease(node, uid, now));
      } catch (createErr) {
        if (!isConflict(createErr))
          this.log(`node ${node}: cannot create its lease: ${errorText(createErr)}`);
      }
    }
  }
}
