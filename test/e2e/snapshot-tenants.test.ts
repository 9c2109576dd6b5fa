// Snapshots that nobody else can overwrite, on the sandbox with real etcd 3.5.16 and s3rver: two
// namespaces, each with a cluster `c` and an EtcdSnapshot `s`, one bucket and prefix. Both objects
// survive with the checksums their statuses record; a snapshot deleted and re-created under its name
// gets a new object (the old one kept, deletionPolicy Retain); one schedule's retention leaves the
// other namespace's objects alone; an object corrupted between upload and read-back ends Failed and
// unverified with the object kept; an object already at the key, wrong credentials and endpoints the
// policy refuses each end in their condition with nothing overwritten. Last, every status and Event
// the suite produced is searched for credentials and request dumps.
import assert from 'node:assert/strict';
import { createServer, request, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { ListObjectsV2Command, PutObjectCommand } from '@aws-sdk/client-s3';
import type { EtcdSnapshot } from '../../shared/api/etcd-snapshot.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { SnapshotDigest } from '../../shared/snapshot-file/verify.ts';
import { s3rverSecret, sha256, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { beforeCreation, converged } from '../support/converge.ts';
import { waitFor } from '../support/wait.ts';

const BUCKET = 'shared-bucket';
const PREFIX = 'etcd/';
const SECRET = 'backup-s3';
const WRONG_KEY_ID = 'WRONGKEYID0123456789';
const WRONG_SECRET = 'wrongSecret/Value+0123456789abcdefghijklm';
type Snapshot = EtcdSnapshot & KubeObject;
interface EventLike extends KubeObject {
  reason?: string;
  message?: string;
  involvedObject?: { kind?: string; name?: string };
}

/**
 * A proxy in front of s3rver that flips one byte in every object body it serves back: an object
 * that changed in the store between upload and read-back. Headers pass through
 * unchanged, so request signatures stay valid and the ETag is the one written.
 */
async function corruptingProxy(target: string): Promise<{ endpoint: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      up => {
        // Object bodies only (the snapshots are stored as application/octet-stream; listings are XML).
        const corrupt =
          req.method === 'GET' &&
          (up.statusCode ?? 0) === 200 &&
          up.headers['content-type'] === 'application/octet-stream';
        res.writeHead(up.statusCode ?? 502, up.headers);
        let flipped = !corrupt;
        up.on('data', (chunk: Buffer) => {
          if (!flipped && chunk.length > 0) {
            chunk = Buffer.from(chunk);
            chunk[0] ^= 0xff;
            flipped = true;
          }
          res.write(chunk);
        });
        up.on('end', () => res.end());
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise(resolve => server.close(() => resolve())),
  };
}

/**
 * A proxy in front of s3rver that answers every GET of an object with 403 AccessDenied (S3's XML
 * error), as a store does for a key without s3:GetObject; HEAD, PUT and multipart pass through.
 */
async function refusingReadsProxy(target: string): Promise<{ endpoint: string; close(): Promise<void> }> {
  const upstream = new URL(target);
  const server: Server = createServer((req, res) => {
    const path = new URL(req.url ?? '/', 'http://x').pathname;
    // An object read: GET /<bucket>/<key...> (path style), not a bucket listing (GET /<bucket>).
    if (req.method === 'GET' && path.split('/').filter(Boolean).length > 1) {
      req.resume();
      const body =
        '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>AccessDenied</Code><Message>Access Denied</Message></Error>';
      res.writeHead(403, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(body) });
      res.end(body);
      return;
    }
    const forward = request(
      {
        host: upstream.hostname,
        port: upstream.port,
        method: req.method,
        path: req.url,
        headers: req.headers,
      },
      up => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      },
    );
    forward.on('error', () => res.destroy());
    req.pipe(forward);
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    close: () => new Promise(resolve => server.close(() => resolve())),
  };
}

describe('snapshots of two tenants in one bucket (etcd 3.5.16, s3rver)', { timeout: 1_200_000 }, () => {
  let sandbox: FullSandbox;
  let s3: TestS3;
  let proxy: Awaited<ReturnType<typeof corruptingProxy>>;
  let noReads: Awaited<ReturnType<typeof refusingReadsProxy>>;
  let kube: KubeObjects;

  before(async () => {
    process.env.ETCDFN_SNAPSHOT_RETRY_DELAY_SECONDS = '2';
    s3 = await startS3rver([BUCKET]);
    proxy = await corruptingProxy(s3.endpoint);
    noReads = await refusingReadsProxy(s3.endpoint);
    // Generous: the machine these tests run on is shared and often loaded.
    sandbox = await startFullSandbox({ tickSeconds: 2, startTimeoutMs: 300_000 });
    kube = new KubeObjects(sandbox.kc);
  });
  after(async () => {
    await sandbox?.stop();
    await proxy?.close();
    await noReads?.close();
    await s3?.stop();
  });

  const get = async <T extends KubeObject>(ns: string, kind: string, name: string) => {
    const read = await kube.get<T>({ apiVersion: API_VERSION, kind, namespace: ns, name });
    return read.kind === 'found' ? read.object : undefined;
  };
  const destination = (over: { endpoint?: string; secret?: string } = {}) => ({
    s3: {
      endpoint: over.endpoint ?? s3.endpoint,
      bucket: BUCKET,
      key: PREFIX,
      credentialsSecretRef: { name: over.secret ?? SECRET },
    },
  });
  const world = (ns: string, name: string) => async () =>
    `${ns}/${name}: ${JSON.stringify((await get<Snapshot>(ns, 'EtcdSnapshot', name))?.status)}\n${sandbox.output().slice(-3000)}`;
  const keyOf = (ns: string, name: string, uid: string) => `${PREFIX}${ns}/c/${name}-${uid.slice(0, 8)}.db`;

  async function createSnapshot(ns: string, name: string, dest = destination()): Promise<Snapshot> {
    const created = await kube.create<Snapshot>({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshot',
      metadata: { name, namespace: ns },
      spec: { clusterRef: { name: 'c' }, destination: dest },
    });
    assert.equal(created.kind, 'created', JSON.stringify(created));
    return (created as { object: Snapshot }).object;
  }

  async function finished(ns: string, name: string, uid?: string): Promise<Snapshot> {
    return waitFor(
      `${ns}/${name} Complete or Failed`,
      async () => {
        const s = await get<Snapshot>(ns, 'EtcdSnapshot', name);
        if (uid && s?.metadata.uid !== uid) return false;
        return s?.status?.phase === 'Complete' || s?.status?.phase === 'Failed' ? s : false;
      },
      { timeoutMs: 240_000, intervalMs: 500 },
      world(ns, name),
    );
  }

  /** The stored object's bytes: their size and sha256 equal what status records, and etcd's hash holds. */
  async function assertStoredAsRecorded(snapshot: Snapshot): Promise<string> {
    const ns = snapshot.metadata.namespace ?? '';
    const key = keyOf(ns, snapshot.metadata.name ?? '', snapshot.metadata.uid ?? '');
    assert.equal(snapshot.status?.artifact?.uri, `s3://${BUCKET}/${key}`);
    const bytes = await s3.download(BUCKET, key);
    const digest = new SnapshotDigest();
    digest.update(bytes);
    const stored = digest.digest();
    assert.equal(stored.sizeBytes, snapshot.status?.artifact?.sizeBytes);
    assert.equal(`sha256:${stored.sha256}`, snapshot.status?.artifact?.checksum);
    assert.equal(stored.integrity, 'ok');
    return key;
  }

  async function createCluster(ns: string): Promise<void> {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: 'c', namespace: ns },
      spec: { replicas: 1, version: '3.5.16' },
    });
    assert.equal(created.kind, 'created', JSON.stringify(created));
  }

  const first = new Map<string, Snapshot>();
  let collideKey = '';
  let foreignSha = '';

  it('two namespaces, each with a Secret; in team-b a snapshot waits for its cluster while a foreign object sits at its key', async () => {
    for (const ns of ['team-a', 'team-b']) {
      await kube.create({ apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
      assert.equal((await kube.create(s3rverSecret(SECRET, ns))).kind, 'created');
    }
    const collide = await createSnapshot('team-b', 'collide');
    collideKey = keyOf('team-b', 'collide', collide.metadata.uid ?? '');
    const foreign = Buffer.from("a user's own file, which etcdfn must never overwrite");
    foreignSha = sha256(foreign);
    await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: collideKey, Body: foreign }));
    await waitFor(
      'team-b/collide Pending (ClusterNotFound)',
      async () => {
        const s = await get<Snapshot>('team-b', 'EtcdSnapshot', 'collide');
        return s?.status?.conditions?.find(c => c.type === 'Ready')?.reason === 'ClusterNotFound';
      },
      { timeoutMs: 60_000, intervalMs: 250 },
      world('team-b', 'collide'),
    );
  });

  it('same-named clusters c in both namespaces become Ready', async () => {
    await Promise.all(['team-a', 'team-b'].map(createCluster));
    for (const ns of ['team-a', 'team-b']) {
      await converged(
        { kube, namespace: ns, name: 'c' },
        {
          replicas: 1,
          since: beforeCreation(),
          timeoutMs: 300_000,
          describe: () => sandbox.output().slice(-3000),
        },
      );
    }
  });

  it('the object already at a key is refused, left as it was: Failed ObjectExists', async () => {
    const done = await finished('team-b', 'collide');
    assert.equal(done.status?.phase, 'Failed', JSON.stringify(done.status));
    const ready = done.status?.conditions?.find(c => c.type === 'Ready');
    assert.equal(ready?.reason, 'ObjectExists');
    assert.match(ready?.message ?? '', /did not write; it is left as it is/);
    assert.equal(
      sha256(await s3.download(BUCKET, collideKey)),
      foreignSha,
      'the foreign object is untouched',
    );
  });

  it('EtcdSnapshot s in both namespaces, same bucket and prefix: both Complete and verified, both objects kept', async () => {
    const made = await Promise.all(['team-a', 'team-b'].map(ns => createSnapshot(ns, 's')));
    const keys: string[] = [];
    for (const snapshot of made) {
      const ns = snapshot.metadata.namespace ?? '';
      const done = await finished(ns, 's');
      assert.equal(done.status?.phase, 'Complete', JSON.stringify(done.status));
      assert.equal(done.status?.conditions?.find(c => c.type === 'Verified')?.status, 'True');
      first.set(ns, done);
    }
    for (const done of first.values()) keys.push(await assertStoredAsRecorded(done));
    assert.notEqual(keys[0], keys[1]);
    assert.notEqual(
      first.get('team-a')?.status?.artifact?.checksum,
      first.get('team-b')?.status?.artifact?.checksum,
    );
  });

  it('deleted and re-created under its name: a new object; the old one (Retain) keeps its bytes', async () => {
    const old = first.get('team-a')!;
    const oldKey = keyOf('team-a', 's', old.metadata.uid ?? '');
    assert.equal(
      (await kube.delete({ apiVersion: API_VERSION, kind: 'EtcdSnapshot', namespace: 'team-a', name: 's' }))
        .kind,
      'deleted',
    );
    await waitFor(
      'team-a/s gone',
      async () => (await get<Snapshot>('team-a', 'EtcdSnapshot', 's')) === undefined,
    );
    const again = await createSnapshot('team-a', 's');
    const done = await finished('team-a', 's', again.metadata.uid);
    assert.equal(done.status?.phase, 'Complete', JSON.stringify(done.status));
    const newKey = await assertStoredAsRecorded(done);
    assert.notEqual(newKey, oldKey);
    assert.equal(`sha256:${sha256(await s3.download(BUCKET, oldKey))}`, old.status?.artifact?.checksum);
    await assertStoredAsRecorded(first.get('team-b')!);
  });

  it("one schedule's retention (keepLast 1) never deletes the other namespace's objects", async () => {
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshotSchedule',
      metadata: { name: 'minutely', namespace: 'team-a' },
      spec: {
        clusterRef: { name: 'c' },
        schedule: '@every 1m',
        retention: { keepLast: 1 },
        destination: destination(),
      },
    });
    assert.equal(created.kind, 'created');
    const pruned = await waitFor(
      'a SnapshotPruned Event of team-a/minutely that deleted an object',
      async () => {
        const events = await kube.list<EventLike>('v1', 'Event', 'team-a');
        return events.find(
          e =>
            e.involvedObject?.name === 'minutely' &&
            e.reason === 'SnapshotPruned' &&
            /and s3:\/\//.test(e.message ?? ''),
        );
      },
      { timeoutMs: 300_000, intervalMs: 1000 },
      () => sandbox.output().slice(-3000),
    );
    assert.match(pruned.message ?? '', /s3:\/\/shared-bucket\/etcd\/team-a\/c\/minutely-/);
    await assertStoredAsRecorded(first.get('team-b')!);
    assert.equal(sha256(await s3.download(BUCKET, collideKey)), foreignSha);
    const listed = await s3.client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${PREFIX}team-b/` }),
    );
    assert.ok((listed.KeyCount ?? 0) >= 2, "team-b's objects are all there");
    await kube.delete({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshotSchedule',
      namespace: 'team-a',
      name: 'minutely',
    });
  });

  it('an object corrupted between upload and read-back: Failed, Verified False, the object kept', async () => {
    const made = await createSnapshot('team-b', 'corrupted', destination({ endpoint: proxy.endpoint }));
    const done = await finished('team-b', 'corrupted');
    assert.equal(done.status?.phase, 'Failed', JSON.stringify(done.status));
    const verified = done.status?.conditions?.find(c => c.type === 'Verified');
    assert.equal(verified?.status, 'False');
    assert.equal(verified?.reason, 'ChecksumMismatch');
    assert.equal(done.status?.conditions?.find(c => c.type === 'Ready')?.reason, 'VerificationFailed');
    const key = keyOf('team-b', 'corrupted', made.metadata.uid ?? '');
    const stored = await s3.download(BUCKET, key);
    assert.equal(`sha256:${sha256(stored)}`, done.status?.artifact?.checksum, 'kept, as uploaded');
  });

  it('403 on read-back (no s3:GetObject): Failed, Verified False ReadBackRefused, the object kept', async () => {
    const made = await createSnapshot('team-b', 'no-read', destination({ endpoint: noReads.endpoint }));
    const done = await finished('team-b', 'no-read');
    assert.equal(done.status?.phase, 'Failed', JSON.stringify(done.status));
    const verified = done.status?.conditions?.find(c => c.type === 'Verified');
    assert.equal(verified?.status, 'False');
    assert.equal(verified?.reason, 'ReadBackRefused');
    assert.match(verified?.message ?? '', /AccessDenied.*s3:GetObject/);
    assert.equal(done.status?.conditions?.find(c => c.type === 'Ready')?.reason, 'VerificationFailed');
    const key = keyOf('team-b', 'no-read', made.metadata.uid ?? '');
    assert.equal(done.status?.artifact?.uri, `s3://${BUCKET}/${key}`);
    const stored = await s3.download(BUCKET, key);
    assert.equal(`sha256:${sha256(stored)}`, done.status?.artifact?.checksum, 'kept, as uploaded');
  });

  it('wrong credentials: Failed UploadRefused, nothing written, no credential in the message', async () => {
    const created = await kube.create({
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: 'wrong', namespace: 'team-b' },
      stringData: { AWS_ACCESS_KEY_ID: WRONG_KEY_ID, AWS_SECRET_ACCESS_KEY: WRONG_SECRET },
    });
    assert.equal(created.kind, 'created');
    await createSnapshot('team-b', 'wrong-creds', destination({ secret: 'wrong' }));
    const done = await finished('team-b', 'wrong-creds');
    assert.equal(done.status?.phase, 'Failed');
    const ready = done.status?.conditions?.find(c => c.type === 'Ready');
    assert.equal(ready?.reason, 'UploadRefused');
    assert.match(ready?.message ?? '', /HTTP 403|HTTP403/);
    assert.match(ready?.message ?? '', /Secret wrong/);
    const listed = await s3.client.send(
      new ListObjectsV2Command({ Bucket: BUCKET, Prefix: `${PREFIX}team-b/c/wrong-creds-` }),
    );
    assert.equal(listed.KeyCount ?? 0, 0);
  });

  for (const [name, endpoint, reason] of [
    ['plain-http', 'http://192.0.2.10:9000', 'EndpointInsecure'],
    ['metadata', 'http://169.254.169.254', 'EndpointLinkLocal'],
    ['loopback-https', 'https://127.0.0.1:9', 'EndpointLoopback'],
  ] as const) {
    it(`endpoint ${endpoint} (not allow-listed): Failed ${reason} before anything is contacted`, async () => {
      await createSnapshot('team-a', name, destination({ endpoint }));
      const done = await finished('team-a', name);
      assert.equal(done.status?.phase, 'Failed');
      const ready = done.status?.conditions?.find(c => c.type === 'Ready');
      assert.equal(ready?.reason, reason, JSON.stringify(ready));
      assert.match(ready?.message ?? '', /destination\.s3\.endpoint/);
    });
  }

  it('no status and no Event of the suite holds a credential, a signature or a request dump', async () => {
    const texts: string[] = [];
    for (const ns of ['team-a', 'team-b']) {
      for (const kind of ['EtcdSnapshot', 'EtcdSnapshotSchedule', 'EtcdCluster']) {
        for (const o of await kube.list<KubeObject & { status?: unknown }>(API_VERSION, kind, ns)) {
          texts.push(JSON.stringify(o.status ?? {}));
        }
      }
      for (const e of await kube.list<EventLike>('v1', 'Event', ns)) texts.push(JSON.stringify(e));
    }
    const all = texts.join('\n');
    assert.ok(all.includes('UploadRefused'), 'the suite did produce failures to search');
    for (const forbidden of [
      WRONG_KEY_ID,
      WRONG_SECRET,
      'S3RVER',
      'AWS4-HMAC-SHA256',
      'Signature=',
      'Credential=',
      'X-Amz-',
      'x-amz-date',
      '$response',
      '<?xml',
      '$metadata',
    ]) {
      assert.ok(!all.includes(forbidden), `found ${forbidden} in a status or Event`);
    }
  });
});
