// The S3 adapter with real parts: a snapshot streamed from real etcd 3.5 into s3rver, downloaded
// again, checked against the figures the adapter reports (what status.artifact records), restored
// with etcdutl into a new member, and read back. Then every way an upload can go wrong, as the
// typed outcome run-snapshot decides on.
import assert from 'node:assert/strict';
import { writeFileSync } from 'node:fs';
import { createServer } from 'node:net';
import type { AddressInfo } from 'node:net';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { snapshot } from '../../shared/etcd/index.ts';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { parseAllowList } from '../../shared/s3/endpoint-policy.ts';
import { snapshotTarget } from '../../shared/s3/location.ts';
import { uploadStream as upload_, type UploadOptions, type UploadResult } from '../../shared/s3/upload.ts';
import { readBack } from '../../shared/snapshot-file/verify.ts';
import { EtcdTestCluster } from '../support/etcd-process.ts';
import { S3RVER_CREDENTIALS, sha256, startS3rver, type TestS3 } from '../support/s3rver.ts';

const BUCKET = 'backups';
/** What the sandbox allow-lists: plain http on loopback, where s3rver listens. */
const ALLOW = parseAllowList('http://127.0.0.0/8').entries;
const uploadStream = (...[t, c, b, o]: Parameters<typeof upload_>) =>
  upload_(t, c, b, { allowList: ALLOW, ...o } satisfies UploadOptions);
const uid = (name: string) => `${name.padEnd(8, '0').slice(0, 8)}-uid-of-${name}`;
const KEYS = 200;
const BIG = 64 * 1024;

describe('S3 adapter: a real etcd snapshot through s3rver', { timeout: 120_000 }, () => {
  let etcd: EtcdTestCluster;
  let s3: TestS3;

  before(async () => {
    [etcd, s3] = await Promise.all([EtcdTestCluster.start({ minor: '3.5', size: 1 }), startS3rver([BUCKET])]);
    const writer = new Etcd3({ hosts: etcd.endpoints });
    try {
      // ~13 MiB of values, so the snapshot is sent in several 5 MiB parts (multipart upload).
      for (let batch = 0; batch < KEYS / 50; batch++) {
        await Promise.all(
          Array.from({ length: 50 }, (_, i) => {
            const n = batch * 50 + i;
            return writer
              .put(`s3test/${String(n).padStart(3, '0')}`)
              .value(`${n}:`.padEnd(BIG, 'x'))
              .exec();
          }),
        );
      }
    } finally {
      writer.close();
    }
  });
  after(async () => {
    await Promise.all([etcd?.cleanup(), s3?.stop()]);
  });

  const target = (name: string, over: { endpoint?: string; bucket?: string; uid?: string } = {}) =>
    snapshotTarget(
      {
        endpoint: over.endpoint ?? s3.endpoint,
        bucket: over.bucket ?? BUCKET,
        key: 'etcd/',
        credentialsSecretRef: { name: 'unused-here' },
      },
      { namespace: 'ns', cluster: 'demo', name, uid: over.uid ?? uid(name) },
    );

  async function upload(
    name: string,
    partSizeBytes = 5 * 1024 * 1024,
    owner = uid(name),
  ): Promise<UploadResult & { revision: number }> {
    const opened = await snapshot(etcd.endpoints[0]);
    assert.equal(opened.kind, 'ok', JSON.stringify(opened));
    if (opened.kind !== 'ok') throw new Error('unreachable');
    const result = await uploadStream(target(name, { uid: owner }), S3RVER_CREDENTIALS, opened.stream, {
      partSizeBytes,
    });
    return { ...result, revision: opened.revision };
  }

  it('streams a snapshot whose stored bytes match the reported size and sha256, and restores with the keys', async () => {
    const result = await upload('nightly');
    assert.equal(result.kind, 'uploaded', JSON.stringify(result));
    if (result.kind !== 'uploaded') return;
    assert.equal(result.uri, `s3://${BUCKET}/etcd/ns/demo/nightly-nightly0.db`);
    assert.match(result.etag, /^"[0-9a-f-]+"$/, 'the ETag is recorded');
    assert.ok(result.revision > KEYS, `revision ${result.revision} covers the ${KEYS} writes`);

    const stored = await s3.download(BUCKET, 'etcd/ns/demo/nightly-nightly0.db');
    assert.ok(stored.length > 10 * 1024 * 1024, `a multipart-sized snapshot (${stored.length} bytes)`);
    assert.equal(stored.length, result.sizeBytes, 'status sizeBytes is the stored size');
    assert.equal(sha256(stored), result.sha256, 'status checksum is the stored bytes');
    assert.match(`sha256:${result.sha256}`, /^sha256:[0-9a-f]{64}$/, 'the checksum fits the CRD pattern');

    const file = join(etcd.rootDir, 'downloaded.db');
    writeFileSync(file, stored);
    const slot = await etcd.reserve('restored');
    const dataDir = await etcd.restoreSnapshot(file, slot);
    const restored = await etcd.startMember(slot, {
      state: 'new',
      initialCluster: `${slot.name}=${slot.peerURL}`,
      dataDir,
    });
    const reader = new Etcd3({ hosts: restored.clientURL });
    try {
      assert.equal(await reader.getAll().prefix('s3test/').count(), KEYS);
      const value = await reader.get('s3test/123').string();
      assert.ok(value?.startsWith('123:') && value.length === BIG);
    } finally {
      reader.close();
      await restored.stop({ force: true });
    }
  });

  it("read back: size and sha256 recomputed from storage match, and etcd's integrity hash checks out", async () => {
    const result = await upload('verified');
    assert.equal(result.kind, 'uploaded');
    if (result.kind !== 'uploaded') return;
    const read = await readBack(target('verified'), S3RVER_CREDENTIALS, result.etag, { allowList: ALLOW });
    assert.equal(read.kind, 'read', JSON.stringify(read));
    if (read.kind !== 'read') return;
    assert.equal(read.sizeBytes, result.sizeBytes);
    assert.equal(read.sha256, result.sha256);
    assert.equal(read.integrity, 'ok', 'a real etcd snapshot ends with the SHA-256 of the rest');
  });

  it("an object changed in the store after upload: its ETag differs, or its bytes fail etcd's hash", async () => {
    const result = await upload('tampered');
    assert.equal(result.kind, 'uploaded');
    if (result.kind !== 'uploaded') return;
    const stored = await s3.download(BUCKET, 'etcd/ns/demo/tampered-tampered.db');
    stored[stored.length >> 1] ^= 0xff;
    await s3.client.send(
      new PutObjectCommand({ Bucket: BUCKET, Key: 'etcd/ns/demo/tampered-tampered.db', Body: stored }),
    );
    const read = await readBack(target('tampered'), S3RVER_CREDENTIALS, result.etag, { allowList: ALLOW });
    assert.equal(read.kind, 'changed', JSON.stringify(read));
    const ignoringEtag = await readBack(target('tampered'), S3RVER_CREDENTIALS, '', { allowList: ALLOW });
    assert.equal(ignoringEtag.kind, 'read');
    if (ignoringEtag.kind === 'read') {
      assert.notEqual(ignoringEtag.sha256, result.sha256);
      assert.equal(ignoringEtag.integrity, 'mismatch');
    }
  });

  it('an object another EtcdSnapshot wrote at the key is refused, never overwritten', async () => {
    const first = await upload('shared', undefined, 'shared00-first');
    assert.equal(first.kind, 'uploaded');
    const before = await s3.download(BUCKET, 'etcd/ns/demo/shared-shared00.db');
    const second = await upload('shared', undefined, 'shared00-second');
    assert.equal(second.kind, 'object-exists', JSON.stringify(second));
    if (second.kind === 'object-exists') assert.match(second.message, /did not write; it is left as it is/);
    assert.equal(sha256(await s3.download(BUCKET, 'etcd/ns/demo/shared-shared00.db')), sha256(before));
  });

  it("an object with no owner at the key (a user's file) is refused too", async () => {
    const key = 'etcd/ns/demo/foreign-foreign0.db';
    await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: "someone else's file" }));
    const result = await upload('foreign');
    assert.equal(result.kind, 'object-exists');
    assert.equal((await s3.download(BUCKET, key)).toString(), "someone else's file");
  });

  it("this snapshot's own leftover (a crashed attempt) is replaced by the retake", async () => {
    const writer = new Etcd3({ hosts: etcd.endpoints });
    const first = await upload('retake');
    assert.equal(first.kind, 'uploaded');
    try {
      await writer.put('s3test/after-first').value('late');
    } finally {
      writer.close();
    }
    const second = await upload('retake');
    assert.equal(second.kind, 'uploaded', JSON.stringify(second));
    if (first.kind !== 'uploaded' || second.kind !== 'uploaded') return;
    const stored = await s3.download(BUCKET, 'etcd/ns/demo/retake-retake00.db');
    assert.equal(sha256(stored), second.sha256);
    assert.notEqual(second.sha256, first.sha256, 'the object now holds the newer snapshot');
  });

  it('without an allow-list, the http endpoint on loopback is refused before anything is sent', async () => {
    const body = Readable.from([Buffer.from('bytes')]);
    const result = await upload_(target('policy'), S3RVER_CREDENTIALS, body);
    assert.equal(result.kind, 'endpoint-refused', JSON.stringify(result));
    if (result.kind === 'endpoint-refused') assert.equal(result.reason, 'EndpointInsecure');
    await assert.rejects(s3.download(BUCKET, 'etcd/ns/demo/policy-policy00.db'));
  });

  it('a missing bucket is refused as NoSuchBucket', async () => {
    const opened = await snapshot(etcd.endpoints[0]);
    assert.equal(opened.kind, 'ok');
    if (opened.kind !== 'ok') return;
    const result = await uploadStream(
      target('x', { bucket: 'no-such-bucket' }),
      S3RVER_CREDENTIALS,
      opened.stream,
    );
    assert.equal(result.kind, 'refused', JSON.stringify(result));
    if (result.kind === 'refused') {
      assert.equal(result.code, 'NoSuchBucket');
      assert.equal(result.status, 404);
    }
  });

  it('wrong credentials are refused (403) before anything is written, with no credential in the message', async () => {
    const body = Readable.from([Buffer.from('not a snapshot')]);
    const result = await uploadStream(
      target('x'),
      { accessKeyId: 'nobody', secretAccessKey: 'nothing' },
      body,
    );
    assert.equal(result.kind, 'refused', JSON.stringify(result));
    if (result.kind === 'refused') {
      assert.equal(result.status, 403);
      assert.doesNotMatch(JSON.stringify(result), /nobody|nothing|Signature=|Credential=/);
    }
  });

  it('an endpoint nobody listens on is unavailable (worth another attempt), not refused', async () => {
    const port = await new Promise<number>(resolve => {
      const probe = createServer();
      probe.listen(0, '127.0.0.1', () => {
        const { port } = probe.address() as AddressInfo;
        probe.close(() => resolve(port));
      });
    });
    const body = Readable.from([Buffer.from('bytes')]);
    const result = await uploadStream(
      target('x', { endpoint: `http://127.0.0.1:${port}` }),
      S3RVER_CREDENTIALS,
      body,
    );
    assert.equal(result.kind, 'unavailable', JSON.stringify(result));
  });

  it('a source that breaks off mid-stream is source-failed and leaves no object behind', async () => {
    async function* breaking(): AsyncGenerator<Buffer> {
      yield Buffer.alloc(6 * 1024 * 1024, 1);
      throw new Error('etcd went away');
    }
    const result = await uploadStream(target('broken'), S3RVER_CREDENTIALS, Readable.from(breaking()), {
      partSizeBytes: 5 * 1024 * 1024,
    });
    assert.equal(result.kind, 'source-failed', JSON.stringify(result));
    if (result.kind === 'source-failed') assert.match(result.message, /etcd went away/);
    await assert.rejects(s3.download(BUCKET, 'etcd/ns/demo/broken-broken00.db'), /NoSuchKey|does not exist/);
  });

  it('an aborted upload says so', async () => {
    const controller = new AbortController();
    async function* slow(): AsyncGenerator<Buffer> {
      yield Buffer.from('first');
      controller.abort(new Error('attempt timeout'));
      await new Promise(resolve => setTimeout(resolve, 200));
      yield Buffer.from('second');
    }
    const result = await uploadStream(target('aborted'), S3RVER_CREDENTIALS, Readable.from(slow()), {
      signal: controller.signal,
    });
    assert.equal(result.kind, 'aborted', JSON.stringify(result));
  });
});
