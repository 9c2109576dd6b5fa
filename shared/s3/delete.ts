// Deletes one snapshot object from an S3-compatible store, for retention. Idempotent: an object (or
// bucket) that is not there is deleted already. Every expected failure is a value, like upload.ts.
import type { S3Target } from './location.ts';
import { classifyS3Error, createS3Client, type S3Credentials } from './upload.ts';

export type DeleteObjectResult =
  | { kind: 'deleted' }
  /** The store refused (4xx): a person must act, e.g. give the key s3:DeleteObject. */
  | { kind: 'refused'; code: string; message: string }
  /** The store could not be reached or failed: retried on the next tick. */
  | { kind: 'unavailable'; message: string };

const GONE = new Set(['NoSuchKey', 'NotFound', 'NoSuchBucket']);

export async function deleteObject(
  target: S3Target,
  credentials: S3Credentials,
): Promise<DeleteObjectResult> {
  const { DeleteObjectCommand } = await import('@aws-sdk/client-s3');
  const client = await createS3Client(target, credentials);
  try {
    await client.send(new DeleteObjectCommand({ Bucket: target.bucket, Key: target.key }));
    return { kind: 'deleted' };
  } catch (err) {
    const classified = classifyS3Error(err);
    if (classified.kind === 'refused') {
      if (GONE.has(classified.code) || classified.status === 404) return { kind: 'deleted' };
      return { kind: 'refused', code: classified.code, message: classified.message };
    }
    return {
      kind: 'unavailable',
      message: classified.kind === 'unavailable' ? classified.message : String(err),
    };
  } finally {
    client.destroy();
  }
}
