// Retention's S3 delete against s3rver: idempotent (an object or bucket that is not there is deleted
// already), and a refusal comes back as a value with the store's code.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import { deleteObject } from '../../shared/s3/delete.ts';
import { snapshotTarget } from '../../shared/s3/location.ts';
import { S3RVER_CREDENTIALS, startS3rver, type TestS3 } from '../support/s3rver.ts';

const BUCKET = 'etcd-backups';

describe('deleteObject against s3rver', () => {
  let s3: TestS3;
  before(async () => {
    s3 = await startS3rver([BUCKET]);
  });
  after(async () => {
    await s3?.stop();
  });
  const target = (name: string, bucket = BUCKET) =>
    snapshotTarget(
      { endpoint: s3.endpoint, bucket, key: 'prune/', credentialsSecretRef: { name: 'x' } },
      name,
    );
  const exists = async (key: string) =>
    s3.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key })).then(
      () => true,
      () => false,
    );

  it('deletes the object, and deleting it again is done too', async () => {
    await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'prune/old.db', Body: 'bytes' }));
    assert.equal(await exists('prune/old.db'), true);
    assert.deepEqual(await deleteObject(target('old'), S3RVER_CREDENTIALS), { kind: 'deleted' });
    assert.equal(await exists('prune/old.db'), false);
    assert.deepEqual(await deleteObject(target('old'), S3RVER_CREDENTIALS), { kind: 'deleted' });
  });

  it('a bucket that is gone holds no object: done', async () => {
    assert.deepEqual(await deleteObject(target('old', 'no-such-bucket'), S3RVER_CREDENTIALS), {
      kind: 'deleted',
    });
  });

  it('wrong credentials are refused with the store’s code', async () => {
    await s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: 'prune/kept.db', Body: 'bytes' }));
    const result = await deleteObject(target('kept'), { accessKeyId: 'NOBODY', secretAccessKey: 'S3RVER' });
    assert.equal(result.kind, 'refused');
    assert.equal(result.kind === 'refused' ? result.code : '', 'InvalidAccessKeyId');
    assert.equal(await exists('prune/kept.db'), true);
  });

  it('an unreachable store is unavailable (retried), not refused', async () => {
    const unreachable = snapshotTarget(
      { endpoint: 'http://127.0.0.1:9', bucket: BUCKET, credentialsSecretRef: { name: 'x' } },
      'x',
    );
    assert.equal((await deleteObject(unreachable, S3RVER_CREDENTIALS)).kind, 'unavailable');
  });
});
