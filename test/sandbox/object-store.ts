// The sandbox's object store, so that snapshots can be tried without an S3 account: s3rver on
// loopback with a bucket, a Secret holding its credentials in the default namespace, and a
// ready-to-apply EtcdSnapshot manifest pointing at it (the port changes from run to run).
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { stringify } from 'yaml';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects } from '../../shared/k8s/objects.ts';
import { s3rverSecret, startS3rver, type TestS3 } from '../support/s3rver.ts';
import type { SandboxCore } from './core.ts';

export const SANDBOX_BUCKET = 'etcdfn';
export const SANDBOX_S3_SECRET = 'sandbox-s3';

export interface SandboxObjectStore {
  endpoint: string;
  /** An EtcdSnapshot of the demo cluster into the store, for `kubectl create -f`. */
  exampleManifest: string;
  stop(): Promise<void>;
}

/** Starts the store (objects kept under `<dir>/s3`) and creates its Secret. */
export async function startObjectStore(core: SandboxCore, dir: string): Promise<SandboxObjectStore> {
  const storeDir = join(dir, 's3');
  mkdirSync(storeDir, { recursive: true });
  // 127.0.0.2: member Pods (a restore's fetch step) reach it too; 127.0.0.1 would mean the Pod itself.
  const s3: TestS3 = await startS3rver([SANDBOX_BUCKET], storeDir, '127.0.0.2');
  try {
    const kube = new KubeObjects(core.kc);
    const created = await kube.create(s3rverSecret(SANDBOX_S3_SECRET, 'default'));
    if (created.kind === 'invalid')
      throw new Error(`the Secret ${SANDBOX_S3_SECRET} was refused: ${created.message}`);
    const exampleManifest = join(dir, 'etcdsnapshot.yaml');
    writeFileSync(exampleManifest, snapshotManifest(s3.endpoint));
    return { endpoint: s3.endpoint, exampleManifest, stop: () => s3.stop() };
  } catch (err) {
    await s3.stop();
    throw err;
  }
}

function snapshotManifest(endpoint: string): string {
  const header =
    "# A snapshot of the demo cluster into the sandbox's object store (s3rver on loopback).\n" +
    '# `kubectl create -f` this file (each time: a new snapshot), then: kubectl get etcdsnapshot -o wide\n';
  return (
    header +
    stringify({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshot',
      metadata: { generateName: 'demo-', namespace: 'default' },
      spec: {
        clusterRef: { name: 'demo' },
        destination: {
          s3: {
            endpoint,
            bucket: SANDBOX_BUCKET,
            key: 'demo/',
            credentialsSecretRef: { name: SANDBOX_S3_SECRET },
          },
        },
      },
    })
  );
}
