// Deleting a snapshot's object against s3rver (retention and deletionPolicy Delete): only the object
// the EtcdSnapshot wrote (its owner metadata, and the ETag status recorded) is deleted; anything else
// at the key is kept. Idempotent (an object or bucket that is not there is gone already), and a
// refusal comes back as a value with a code and no credentials.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { deleteOwnedObject } from '../../shared/s3/delete.ts';
import { parseAllowList } from '../../shared/s3/endpoint-policy.ts';
import { OWNER_METADATA, snapshotTarget } from '../../shared/s3/location.ts';
import { S3RVER_CREDENTIALS, startS3rver, type TestS3 } from '../support/s3rver.ts';

const BUCKET = 'etcd-backups';
const ALLOW = parseAllowList('http://127.0.0.0/8').entries;
const UID = 'aaaabbbb-owner';

describe('deleteOwnedObject against s3rver', () => {
  let s3: TestS3;
  before(async () => {
    s3 = await startS3rver([BUCKET]);
  });
  after(async () => {
    await s3?.stop();
  });
  const target = (name: string, bucket = BUCKET, endpoint?: string) =>
    snapshotTarget(
      { endpoint: endpoint ?? s3.endpoint, bucket, key: 'prune/', credentialsSecretRef: { name: 'x' } },
      { namespace: 'ns', cluster: 'c', name, uid: UID },
    );
  const exists = async (key: string) =>
    s3.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })).then(
      () => true,
      () => false,
    );
  /** Writes an object at `name`'s key, owned by `owner` (none: no owner metadata); returns its ETag. */
  const put = async (name: string, owner: string | undefined, body = 'bytes') => {
    const written = await s3.client.send(
      new PutObjectCommand({
        Bucket: BUCKET,
        Key: target(name).key,
        Body: body,
        ...(owner && { Metadata: { [OWNER_METADATA]: owner } }),
      }),
    );
    return written.ETag ?? '';
  };

  it('deletes the object it wrote (owner and recorded ETag match); again is gone', async () => {
    const etag = await put('old', UID);
    assert.deepEqual(await deleteOwnedObject(target('old'), S3RVER_CREDENTIALS, { etag }, ALLOW), {
      kind: 'deleted',
    });
    assert.equal(await exists(target('old').key), false);
    assert.deepEqual(await deleteOwnedObject(target('old'), S3RVER_CREDENTIALS, { etag }, ALLOW), {
      kind: 'gone',
    });
  });

  it('an object changed since it was written (another ETag) is kept', async () => {
    const etag = await put('changed', UID, 'first');
    await put('changed', UID, 'second, written by someone else');
    const result = await deleteOwnedObject(target('changed'), S3RVER_CREDENTIALS, { etag }, ALLOW);
    assert.equal(result.kind, 'kept', JSON.stringify(result));
    if (result.kind === 'kept') assert.match(result.message, /changed since this EtcdSnapshot wrote it/);
    assert.equal(await exists(target('changed').key), true);
  });

  it('an object another snapshot (or nobody we know) wrote is kept, with or without an ETag to compare', async () => {
    const etag = await put('foreign', 'someone-else');
    assert.equal(
      (await deleteOwnedObject(target('foreign'), S3RVER_CREDENTIALS, { etag }, ALLOW)).kind,
      'kept',
    );
    await put('plain', undefined);
    assert.equal((await deleteOwnedObject(target('plain'), S3RVER_CREDENTIALS, {}, ALLOW)).kind, 'kept');
    assert.equal(await exists(target('foreign').key), true);
    assert.equal(await exists(target('plain').key), true);
  });

  it('without a recorded ETag (an attempt that stopped before recording), the owner decides', async () => {
    await put('leftover', UID);
    assert.equal(
      (await deleteOwnedObject(target('leftover'), S3RVER_CREDENTIALS, {}, ALLOW)).kind,
      'deleted',
    );
    assert.equal(await exists(target('leftover').key), false);
  });

  it('a bucket that is gone holds no object: gone', async () => {
    const result = await deleteOwnedObject(target('old', 'no-such-bucket'), S3RVER_CREDENTIALS, {}, ALLOW);
    assert.equal(result.kind, 'gone', JSON.stringify(result));
  });

  it('wrong credentials are refused (403), the object kept, no credential in the answer', async () => {
    const etag = await put('kept', UID);
    const result = await deleteOwnedObject(
      target('kept'),
      { accessKeyId: 'NOBODY', secretAccessKey: 'WRONGSECRET' },
      { etag },
      ALLOW,
    );
    assert.equal(result.kind, 'refused', JSON.stringify(result));
    assert.doesNotMatch(JSON.stringify(result), /NOBODY|WRONGSECRET/);
    assert.equal(await exists(target('kept').key), true);
  });

  it('the endpoint policy applies: no allow-list, no contact', async () => {
    const etag = await put('policy', UID);
    const result = await deleteOwnedObject(target('policy'), S3RVER_CREDENTIALS, { etag });
    assert.deepEqual(result.kind === 'refused' ? result.code : result.kind, 'EndpointInsecure');
    assert.equal(await exists(target('policy').key), true);
  });

  it('an unreachable store is unavailable (retried), not refused', async () => {
    const unreachable = target('x', BUCKET, 'http://127.0.0.1:9');
    assert.equal((await deleteOwnedObject(unreachable, S3RVER_CREDENTIALS, {}, ALLOW)).kind, 'unavailable');
  });
});
