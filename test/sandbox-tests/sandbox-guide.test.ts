// What `npm run sandbox` tells a newcomer to type works: the example cluster comes up, and the
// snapshot manifest it writes (into its own object store, with its own Secret) ends Complete, with
// the object in the store as big as the status says.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { parse } from 'yaml';
import { kubectl } from '../support/kubectl.ts';
import { S3RVER_CREDENTIALS } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { waitFor } from '../support/wait.ts';

interface SnapshotManifest {
  spec: { destination: { s3: { endpoint: string; bucket: string; key: string } } };
}

describe('the sandbox guide (example cluster, local object store)', { timeout: 300_000 }, () => {
  let sandbox: FullSandbox;
  const k = (...args: string[]) => kubectl(sandbox.kubeconfig, ...args);

  before(async () => {
    sandbox = await startFullSandbox({ asUserSees: true, tickSeconds: 5, startTimeoutMs: 300_000 });
  });
  after(async () => sandbox?.stop());

  it('brings the example cluster demo to 3/3', async () => {
    const ready = await waitFor(
      'demo to be 3/3',
      async () => (await k('get', 'etcdcluster', 'demo', '-o', 'jsonpath={.status.ready}')) === '3/3',
      { timeoutMs: 120_000 },
      () => k('get', 'etcdcluster,pods', '-o', 'wide'),
    );
    assert.equal(ready, true);
  });

  it('takes a snapshot with the manifest it wrote, into its own object store', async () => {
    const manifestPath = join(sandbox.dir, 'etcdsnapshot.yaml');
    const created = await k('create', '-f', manifestPath, '-o', 'name');
    const name = created.trim().replace(/^etcdsnapshot\.etcdfn\.io\//, '');
    const phase = await waitFor(
      `${name} to finish`,
      async () => {
        const p = await k('get', 'etcdsnapshot', name, '-o', 'jsonpath={.status.phase}');
        return p === 'Complete' || p === 'Failed' ? p : undefined;
      },
      { timeoutMs: 60_000 },
      () => k('get', 'etcdsnapshot', name, '-o', 'yaml'),
    );
    assert.equal(phase, 'Complete', await k('get', 'etcdsnapshot', name, '-o', 'yaml'));
    const size = Number(await k('get', 'etcdsnapshot', name, '-o', 'jsonpath={.status.artifact.sizeBytes}'));
    const { endpoint, bucket, key } = (parse(readFileSync(manifestPath, 'utf8')) as SnapshotManifest).spec
      .destination.s3;
    const client = new S3Client({
      endpoint,
      region: 'us-east-1',
      forcePathStyle: true,
      credentials: S3RVER_CREDENTIALS,
    });
    try {
      // The key: <prefix><namespace>/<cluster>/<name>-<uid8>.db (docs/snapshots.md).
      const uri = await k('get', 'etcdsnapshot', name, '-o', 'jsonpath={.status.artifact.uri}');
      assert.match(uri, new RegExp(`^s3://${bucket}/${key}default/demo/${name}-[0-9a-z-]{8}\\.db$`));
      const head = await client.send(
        new HeadObjectCommand({ Bucket: bucket, Key: uri.slice(`s3://${bucket}/`.length) }),
      );
      assert.ok(size > 0);
      assert.equal(head.ContentLength, size, 'the stored object is as big as status.artifact.sizeBytes');
    } finally {
      client.destroy();
    }
  });
});
