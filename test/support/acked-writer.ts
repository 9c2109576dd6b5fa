// A writer that runs through a fault: one put every 10 ms through the endpoints it was given,
// each acknowledged key recorded, so a test can check afterwards that every acknowledged write is
// still readable.
import { setTimeout as sleep } from 'node:timers/promises';
import { Etcd3 } from 'etcd3';
import type { IOptions } from 'etcd3';
import { waitFor } from './wait.ts';

export interface AckedWriter {
  /** Keys etcd acknowledged, in order. */
  acknowledged: string[];
  /** Puts that failed (not acknowledged: they may or may not be stored). */
  failed(): number;
  /** Puts answered by another cluster (a reused Pod IP): not counted as acknowledged. */
  misdirected(): number;
  /** Resolves once `count` puts have been acknowledged. */
  acked(count: number, timeoutMs?: number): Promise<void>;
  /** Stops writing and waits for the last put to settle. */
  stop(): Promise<void>;
}

/**
 * `refresh`, when given, names the endpoints anew after a failed put (at most once a second): a
 * writer that outlives every Pod it started with (a rolling upgrade, then a replacement) follows the
 * members as a client of the cluster's Service would. `clusterId`, when given (etcd's cluster ID,
 * decimal as in a response header), makes a put answered by another cluster not an
 * acknowledgement: the sandbox hands a released Pod IP to the next Pod, of any cluster, so an
 * endpoint the writer started with may later be another cluster's member. `options` are added to
 * every client's (TLS credentials and the name to verify, for https:// hosts).
 */
export function startWriter(
  hosts: string[],
  prefix: string,
  refresh?: () => Promise<string[]>,
  clusterId?: string,
  options: Omit<IOptions, 'hosts'> = {},
): AckedWriter {
  const acknowledged: string[] = [];
  let failed = 0;
  let misdirected = 0;
  let writing = true;
  let current = [...hosts].sort();
  let client = new Etcd3({ dialTimeout: 1000, ...options, hosts: current });
  let refreshed = 0;
  const follow = async (): Promise<void> => {
    if (!refresh || Date.now() - refreshed < 1000) return;
    refreshed = Date.now();
    const next = [...(await refresh().catch(() => current))].sort();
    if (next.length === 0 || next.join(',') === current.join(',')) return;
    client.close();
    current = next;
    client = new Etcd3({ dialTimeout: 1000, ...options, hosts: current });
  };
  const done = (async () => {
    try {
      for (let n = 0; writing; n++) {
        const key = `${prefix}${String(n).padStart(6, '0')}`;
        try {
          const res = await client.put(key).value(String(n)).exec();
          if (clusterId === undefined || res.header.cluster_id === clusterId) {
            acknowledged.push(key);
          } else {
            misdirected++;
            await follow();
          }
        } catch {
          failed++;
          await follow();
        }
        await sleep(10);
      }
    } finally {
      client.close();
    }
  })();
  return {
    acknowledged,
    failed: () => failed,
    misdirected: () => misdirected,
    acked: async (count, timeoutMs = 60_000) => {
      await waitFor(`${count} puts acknowledged`, async () => acknowledged.length >= count, { timeoutMs });
    },
    stop: async () => {
      writing = false;
      await done;
    },
  };
}
