// s3rver on loopback for tests: an ephemeral port, a temp dir, the buckets asked for; stop() removes
// everything. s3rver checks signatures against the access key S3RVER / secret S3RVER.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createHash } from 'node:crypto';
import { GetObjectCommand, S3Client } from '@aws-sdk/client-s3';
import S3rver from 's3rver';

// The AWS SDK's notice that its 2027 releases need Node 22 would be printed in the middle of the
// test report by every test process that makes a client; the locked SDK runs on Node 20.
process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

export const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };

/** A Secret holding s3rver's credentials under the keys an S3 destination's Secret must have. */
export function s3rverSecret(name: string, namespace: string) {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace },
    stringData: {
      AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
      AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    },
  };
}

export interface TestS3 {
  endpoint: string;
  /** A client with the right credentials, path style. */
  client: S3Client;
  /** The object's bytes. */
  download(bucket: string, key: string): Promise<Buffer>;
  stop(): Promise<void>;
}

/**
 * @param buckets created at start
 * @param keepIn  store objects in this directory and keep them after stop() (default: a temp dir
 *                that stop() removes)
 * @param address loopback address to listen on; Pods of the sandbox reach any but 127.0.0.1 (which
 *                the kubelet rewrites to the Pod's own IP), so stores for Pods use e.g. 127.0.0.2
 */
export async function startS3rver(
  buckets: string[],
  keepIn?: string,
  address = '127.0.0.1',
): Promise<TestS3> {
  const dir = keepIn ?? mkdtempSync(join(tmpdir(), 'etcdfn-s3rver-'));
  const server = new S3rver({
    address,
    port: 0,
    silent: true,
    directory: dir,
    configureBuckets: buckets.map(name => ({ name, configs: [] })),
  });
  const listening = await server.run();
  const endpoint = `http://${address}:${listening.port}`;
  const client = new S3Client({
    endpoint,
    region: 'us-east-1',
    forcePathStyle: true,
    credentials: S3RVER_CREDENTIALS,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    responseChecksumValidation: 'WHEN_REQUIRED',
  });
  return {
    endpoint,
    client,
    async download(bucket, key) {
      const got = await client.send(new GetObjectCommand({ Bucket: bucket, Key: key }));
      return Buffer.from(await got.Body!.transformToByteArray());
    },
    async stop() {
      client.destroy();
      await server.close();
      if (!keepIn) rmSync(dir, { recursive: true, force: true });
    },
  };
}

export const sha256 = (bytes: Buffer): string => createHash('sha256').update(bytes).digest('hex');
