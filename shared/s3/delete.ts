// Deletes one snapshot object, for retention and for deletionPolicy Delete, but only the object the
// EtcdSnapshot wrote: the object at its key must name the EtcdSnapshot's UID as owner (object
// metadata) and carry the ETag status recorded. The HEAD checks both; the delete itself is
// conditional (If-Match: <ETag>) on stores that honour it (AWS S3), so an object replaced between
// the HEAD and the delete is kept there too. Idempotent: an object that is not there is deleted
// already. Every expected failure is a value, like upload.ts.
import { createS3Client, endpointVerdict, loadS3Sdk } from './client.ts';
import type { AllowedEndpoint } from './endpoint-policy.ts';
import { reduceS3Error, s3ErrorText } from './errors.ts';
import type { S3Credentials, S3Target } from './location.ts';
import { classifyS3Error, headObject } from './upload.ts';

export type DeleteObjectResult =
  | { kind: 'deleted' }
  /** Nothing was there (or the bucket is gone). */
  | { kind: 'gone' }
  /** The object at the key is not the one this EtcdSnapshot wrote: it is left as it is. */
  | { kind: 'kept'; message: string }
  /** The store refused (4xx) or the endpoint is refused by policy: a person must act. */
  | { kind: 'refused'; code: string; message: string }
  /** The store could not be reached or failed: retried later. */
  | { kind: 'unavailable'; message: string };

/** What status recorded about the object; `etag` undefined means the write was never recorded. */
export interface OwnedObject {
  etag?: string;
}

export async function deleteOwnedObject(
  target: S3Target,
  credentials: S3Credentials,
  expected: OwnedObject,
  allowList: readonly AllowedEndpoint[] = [],
): Promise<DeleteObjectResult> {
  const verdict = await endpointVerdict(target.endpoint, allowList);
  if (!verdict.allowed) return { kind: 'refused', code: verdict.reason, message: verdict.message };
  const secrets = [credentials.accessKeyId, credentials.secretAccessKey];
  const client = await createS3Client(target, credentials, allowList);
  const { DeleteObjectCommand } = await loadS3Sdk();
  try {
    const head = await headObject(client, target, secrets);
    if (head.kind === 'absent') return { kind: 'gone' };
    if (head.kind === 'failed') {
      if (head.result.kind === 'refused' && head.result.code === 'NoSuchBucket') return { kind: 'gone' };
      return head.result.kind === 'refused'
        ? { kind: 'refused', code: head.result.code, message: head.result.message }
        : head.result;
    }
    if (head.owner !== target.ownerUid) {
      return {
        kind: 'kept',
        message: `${target.uri} was not written by this EtcdSnapshot; it is left as it is`,
      };
    }
    if (expected.etag !== undefined && head.etag !== expected.etag) {
      return {
        kind: 'kept',
        message: `${target.uri} changed since this EtcdSnapshot wrote it (ETag ${head.etag}, recorded ${expected.etag}); it is left as it is`,
      };
    }
    await client.send(
      new DeleteObjectCommand({
        Bucket: target.bucket,
        Key: target.key,
        ...(head.etag && { IfMatch: head.etag }),
      }),
    );
    return { kind: 'deleted' };
  } catch (err) {
    const reduced = reduceS3Error(err, secrets);
    if (reduced.status === 412) {
      return {
        kind: 'kept',
        message: `${target.uri} changed while it was being deleted; it is left as it is`,
      };
    }
    if (reduced.status === 404) return { kind: 'gone' };
    const classified = classifyS3Error(err, secrets);
    if (classified.kind === 'refused')
      return { kind: 'refused', code: classified.code, message: classified.message };
    // classifyS3Error answers refused or unavailable, the latter with this very text.
    return { kind: 'unavailable', message: s3ErrorText(reduced) };
  } finally {
    client.destroy();
  }
}
