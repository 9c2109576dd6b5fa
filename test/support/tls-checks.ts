// Checks the three TLS e2e files (tls-byo, tls-auto, tls-certmanager) make the same way: a client
// with a certificate writes and reads, etcd refuses one without a certificate and a plaintext one;
// an EtcdSnapshot of a TLS cluster to S3 ends Complete and its restore holds the keys; a rotation of
// the certificates under a writer loses no acknowledged put, keeps every member Ready, and ends with
// every member serving the new certificates.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { connect } from 'node:tls';
import { Etcd3 } from 'etcd3';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import type { KubeObject, KubeObjects } from '../../shared/k8s/objects.ts';
import { startWriter } from './acked-writer.ts';
import { memberClientOptions, type MemberClient } from './converge.ts';
import type { TlsWorld } from './tls-world.ts';
import { waitFor } from './wait.ts';

type Snapshot = EtcdSnapshot & KubeObject;

/**
 * Puts `keys` keys `<prefix>/0000…` (values `v<n>`) through `ip` with the client certificate, reads
 * one back, then shows etcd refuses the same call without a client certificate and in plaintext.
 */
export async function fillAndCheckMutualTls(
  ip: string | undefined,
  withCert: MemberClient,
  withoutCert: MemberClient,
  prefix: string,
  keys: number,
): Promise<void> {
  const client = new Etcd3(memberClientOptions(ip, withCert));
  try {
    await Promise.all(
      Array.from({ length: keys }, (_, n) =>
        client
          .put(`${prefix}/${String(n).padStart(4, '0')}`)
          .value(`v${n}`)
          .exec(),
      ),
    );
    assert.equal(await client.get(`${prefix}/0042`).string(), 'v42');
  } finally {
    client.close();
  }
  for (const [who, options] of [
    ['no client certificate', memberClientOptions(ip, withoutCert)],
    ['plaintext', memberClientOptions(ip)],
  ] as const) {
    const refused = new Etcd3({ ...options, dialTimeout: 3000 });
    try {
      await assert.rejects(refused.get(`${prefix}/0042`).string(), Error, `${who} was served`);
    } finally {
      refused.close();
    }
  }
}

export interface S3Target {
  endpoint: string;
  bucket: string;
  key: string;
  credentialsSecret: string;
}

/** Creates EtcdSnapshot `name` of `cluster` to S3 and waits until it ends; asserts Complete. */
export async function snapshotToS3(
  kube: KubeObjects,
  { namespace, name, cluster }: { namespace: string; name: string; cluster: string },
  to: S3Target,
  describe: () => Promise<string>,
): Promise<Snapshot> {
  const created = await kube.create({
    apiVersion: API_VERSION,
    kind: 'EtcdSnapshot',
    metadata: { name, namespace },
    spec: {
      clusterRef: { name: cluster },
      destination: {
        s3: {
          endpoint: to.endpoint,
          bucket: to.bucket,
          key: to.key,
          credentialsSecretRef: { name: to.credentialsSecret },
        },
      },
    },
  });
  assert.equal(created.kind, 'created');
  const snapshot = await waitFor(
    `EtcdSnapshot ${name} Complete or Failed`,
    async () => {
      const read = await kube.get<Snapshot>({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshot',
        namespace,
        name,
      });
      const phase = read.kind === 'found' ? read.object.status?.phase : undefined;
      return phase === 'Complete' || phase === 'Failed' ? read.kind === 'found' && read.object : false;
    },
    { timeoutMs: 180_000, intervalMs: 500 },
    describe,
  );
  assert.equal(snapshot.status?.phase, 'Complete', JSON.stringify(snapshot.status));
  return snapshot;
}

/** The restored cluster holds the `keys` keys fillAndCheckMutualTls put under `prefix`. */
export async function checkRestoredKeys(
  ip: string | undefined,
  dial: MemberClient,
  prefix: string,
  keys: number,
): Promise<void> {
  const client = new Etcd3(memberClientOptions(ip, dial));
  try {
    assert.equal(await client.getAll().prefix(`${prefix}/`).count(), keys);
    assert.equal(await client.get(`${prefix}/0123`).string(), 'v123');
  } finally {
    client.close();
  }
}

/**
 * The certificate a member serves on `port`, dialled with `dial`'s CA and client certificate and
 * `serverName` as SNI (the host name is not checked here: callers check what they mean to).
 */
export const servedCertificate = (
  ip: string,
  port: number,
  dial: MemberClient,
  serverName = dial.serverName,
): Promise<X509Certificate> =>
  new Promise((resolve, reject) => {
    const socket = connect({
      host: ip,
      port,
      servername: serverName,
      ca: dial.ca,
      cert: dial.cert,
      key: dial.key,
      checkServerIdentity: () => undefined,
    });
    socket.once('secureConnect', () => {
      const raw = socket.getPeerCertificate().raw;
      socket.end();
      resolve(new X509Certificate(raw));
    });
    socket.once('error', reject);
    socket.setTimeout(5000, () => socket.destroy(new Error(`TLS handshake with ${ip}:${port} timed out`)));
  });

/** A certificate's serial number, hex in lower case without leading zeros. */
export const serialOf = (cert: string | X509Certificate): string =>
  (typeof cert === 'string' ? new X509Certificate(cert) : cert).serialNumber.toLowerCase().replace(/^0+/, '');

/** What every member must serve after a rotation: serials (as serialOf gives them) per port. */
export interface ServedSerials {
  /** On 2379. */
  client: string;
  /** On 2380. */
  peer: string;
}

export interface RotationUnderWriter {
  cluster: string;
  /** Its members: every readiness sample must be replicas/replicas with that many Pods Ready. */
  replicas: number;
  /** How the writer, the reader and the TLS handshakes dial the members. */
  dial: MemberClient;
  /** For messages: a 'rotation' the test makes, or a 'renewal' (asked or the operator's own). */
  what: 'rotation' | 'renewal';
  /** Brings the rotation about once 100 puts are acknowledged; resolves to what must be served. */
  rotate(): Promise<ServedSerials>;
}

export interface RotationOutcome {
  /** The Pod IPs of the members the writer wrote through. */
  ips: string[];
  served: ServedSerials;
  acknowledged: string[];
  failed: number;
  samples: number;
}

/**
 * Rotates a TLS cluster's certificates under an acknowledged writer (one put every 10 ms under
 * rotation/) while sampling readiness; waits until every member serves `served` on 2379 and 2380
 * and 100 more puts are acknowledged. Asserts more than 200 puts acknowledged and every sample
 * all Ready. Whether any acknowledged put was lost is checkNoAckedPutLost's, once the caller has
 * seen the operator reach the cluster again.
 */
export async function rotateUnderWriter(world: TlsWorld, r: RotationUnderWriter): Promise<RotationOutcome> {
  const ips = await world.readyIPs(r.cluster);
  assert.equal(ips.length, r.replicas);
  const writer = startWriter(
    ips.map(ip => `https://${ip}:2379`),
    'rotation/',
    undefined,
    undefined,
    memberClientOptions(undefined, r.dial),
  );
  // Readiness sampled all along the rotation: every sample must be all Ready with every Pod Ready.
  const samples: string[] = [];
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const cluster = await world.getCluster(r.cluster);
      samples.push(`${cluster?.status?.ready} ${(await world.readyIPs(r.cluster)).length}`);
      await new Promise(resolve => setTimeout(resolve, 250));
    }
  })();
  let served: ServedSerials;
  try {
    await writer.acked(100);
    served = await r.rotate();
    const want = served;
    await waitFor(
      `every member to serve the ${r.what === 'rotation' ? 'new' : 'renewed'} client and peer certificates`,
      async () => {
        for (const ip of ips) {
          if (serialOf(await servedCertificate(ip, 2379, r.dial)) !== want.client) return false;
          if (serialOf(await servedCertificate(ip, 2380, r.dial)) !== want.peer) return false;
        }
        return true;
      },
      { timeoutMs: 120_000, intervalMs: 500 },
      world.describeCluster(r.cluster),
    );
    const acked = writer.acknowledged.length;
    await writer.acked(acked + 100);
  } finally {
    await writer.stop();
    sampling = false;
    await sampler;
  }
  assert.ok(writer.acknowledged.length > 200, `${writer.acknowledged.length} puts acknowledged`);
  const all = `${r.replicas}/${r.replicas} ${r.replicas}`;
  const bad = samples.filter(s => s !== all);
  assert.deepEqual(bad, [], `readiness during the ${r.what} (${samples.length} samples)`);
  return { ips, served, acknowledged: writer.acknowledged, failed: writer.failed(), samples: samples.length };
}

/** Every put the writer saw acknowledged is stored (read through `ip`); returns how many were lost. */
export async function checkNoAckedPutLost(
  ip: string | undefined,
  dial: MemberClient,
  acknowledged: string[],
): Promise<number> {
  const reader = new Etcd3(memberClientOptions(ip, dial));
  try {
    const stored = new Set(await reader.getAll().prefix('rotation/').keys());
    const lost = acknowledged.filter(k => !stored.has(k));
    assert.deepEqual(lost, [], `${lost.length} of ${acknowledged.length} acknowledged puts lost`);
    return lost.length;
  } finally {
    reader.close();
  }
}
