// The restore steps the agent runs in a member Pod, against s3rver and the real etcd tools: fetch
// (S3 or a file) with its checks, etcd's own restore, commit with the marker; and run-once: after
// the marker, fetch hands over an empty snapshot that both 3.4's etcdctl and 3.5's etcdutl restore,
// and commit leaves the live data alone. Failures carry the reason the cluster's condition shows.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, describe, it } from 'node:test';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import { commitRestore } from '../../shared/restore/commit.ts';
import { fetchSnapshot, type FetchRequest, type FetchSource } from '../../shared/restore/fetch.ts';
import { RestoreFailure, parseFailure, restorePaths } from '../../shared/restore/layout.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';
import { EtcdTestCluster } from '../support/etcd-process.ts';
import { S3RVER_CREDENTIALS, sha256, startS3rver, type TestS3 } from '../support/s3rver.ts';

const run = promisify(execFile);
const BUCKET = 'snaps';

describe('restore agent steps (s3rver, real etcd tools)', { timeout: 300_000 }, () => {
  let dir: string;
  let s3: TestS3;
  const snapshots: Record<string, Buffer> = {};

  before(async () => {
    // The policy the operator hands the fetch step (as the sandbox's functions have it): s3rver
    // listens on plain http on loopback, which only an allow-list admits.
    process.env.ETCDFN_S3_ALLOWED_ENDPOINTS = 'http://127.0.0.0/8';
    dir = mkdtempSync(join(tmpdir(), 'restore-agent-'));
    s3 = await startS3rver([BUCKET]);
    // One real snapshot per minor, with a few keys.
    for (const minor of ['3.4', '3.5'] as const) {
      const cluster = await EtcdTestCluster.start({ minor, size: 1 });
      try {
        const client = new Etcd3({ hosts: cluster.endpoints });
        for (let i = 0; i < 50; i++) await client.put(`k/${i}`).value(`v${i}`);
        client.close();
        const file = join(dir, `snap-${minor}.db`);
        const bins = etcdBinaries(minor);
        await run(bins.etcdctl, [`--endpoints=${cluster.endpoints[0]}`, 'snapshot', 'save', file], {
          env: { ...process.env, ETCDCTL_API: '3' },
        });
        snapshots[minor] = readFileSync(file);
        await s3.client.send(
          new PutObjectCommand({ Bucket: BUCKET, Key: `snap-${minor}.db`, Body: snapshots[minor] }),
        );
      } finally {
        await cluster.cleanup();
      }
    }
  });
  after(async () => {
    await s3?.stop();
    rmSync(dir, { recursive: true, force: true });
  });

  let n = 0;
  function dataDir(): string {
    const d = join(dir, `data-${n++}`);
    mkdirSync(d);
    return d;
  }
  const s3Source = (key: string, credentials = S3RVER_CREDENTIALS): FetchSource => ({
    kind: 's3',
    endpoint: s3.endpoint,
    bucket: BUCKET,
    key,
    forcePathStyle: true,
    credentials,
    secretName: 'creds',
  });
  const request = (d: string, source: FetchSource, extra: Partial<FetchRequest> = {}): FetchRequest => ({
    paths: restorePaths(d),
    source,
    etcdVersion: '3.5.16',
    ...extra,
  });
  async function failure(req: FetchRequest): Promise<RestoreFailure> {
    try {
      await fetchSnapshot(req);
    } catch (err) {
      assert.ok(err instanceof RestoreFailure, String(err));
      return err;
    }
    throw new Error('the fetch did not fail');
  }

  async function etcdRestore(minor: '3.4' | '3.5', d: string): Promise<void> {
    const bins = etcdBinaries(minor);
    const p = restorePaths(d);
    const tool = minor === '3.4' ? bins.etcdctl : bins.etcdutl!;
    await run(
      tool,
      [
        'snapshot',
        'restore',
        p.snapshotFile,
        `--data-dir=${p.restoredDir}`,
        '--name=m0',
        '--initial-cluster=m0=http://127.0.0.1:2380',
        '--initial-cluster-token=t',
        '--initial-advertise-peer-urls=http://127.0.0.1:2380',
      ],
      { env: { ...process.env, ETCDCTL_API: '3' } },
    );
  }

  for (const minor of ['3.4', '3.5'] as const) {
    it(`etcd ${minor}: fetches from S3 with the checksum, restores, commits; a second run keeps the data`, async () => {
      const d = dataDir();
      const version = minor === '3.4' ? '3.4.23' : '3.5.16';
      const fetched = await fetchSnapshot(
        request(d, s3Source(`snap-${minor}.db`), { sha256: sha256(snapshots[minor]), etcdVersion: version }),
      );
      assert.deepEqual(fetched, {
        kind: 'fetched',
        sizeBytes: snapshots[minor].length,
        sha256: sha256(snapshots[minor]),
        snapshotMinor: minor,
      });
      await etcdRestore(minor, d);
      assert.deepEqual(await commitRestore(restorePaths(d), { source: 'x' }), { kind: 'committed' });
      const p = restorePaths(d);
      assert.ok(existsSync(join(d, 'member', 'snap', 'db')));
      assert.ok(existsSync(p.marker));
      assert.equal(existsSync(p.workDir), false);
      // Live data now: mark it, and run the three steps again as a recreated Pod would.
      writeFileSync(join(d, 'member', 'live'), 'written after the restore');
      assert.deepEqual(await fetchSnapshot(request(d, s3Source('no-such-key'), { etcdVersion: version })), {
        kind: 'already-restored',
      });
      await etcdRestore(minor, d); // the empty snapshot restores with this release's tool
      assert.deepEqual(await commitRestore(restorePaths(d), { source: 'x' }), { kind: 'already-restored' });
      assert.equal(readFileSync(join(d, 'member', 'live'), 'utf8'), 'written after the restore');
      assert.equal(existsSync(p.workDir), false);
    });
  }

  it('a half-done attempt (no marker) is thrown away and redone', async () => {
    const d = dataDir();
    const p = restorePaths(d);
    mkdirSync(join(d, 'member', 'snap'), { recursive: true });
    writeFileSync(join(d, 'member', 'snap', 'db'), 'half');
    mkdirSync(p.workDir, { recursive: true });
    writeFileSync(`${p.snapshotFile}.partial`, 'partial');
    await fetchSnapshot(request(d, s3Source('snap-3.5.db')));
    assert.equal(existsSync(join(d, 'member')), false);
    assert.equal(readFileSync(p.snapshotFile).length, snapshots['3.5'].length);
  });

  it('reads a file source (a PVC), and says when it is absent', async () => {
    const d = dataDir();
    const file = join(dir, 'on-pvc.db');
    writeFileSync(file, snapshots['3.4']);
    const ok = await fetchSnapshot(
      request(d, { kind: 'file', mount: dir, path: file, display: 'pvc://b/on-pvc.db' }),
    );
    assert.equal(ok.kind, 'fetched');
    const missing = await failure(
      request(dataDir(), {
        kind: 'file',
        mount: dir,
        path: join(dir, 'absent.db'),
        display: 'pvc://b/absent.db',
      }),
    );
    assert.equal(missing.reason, 'SnapshotNotFound');
    assert.match(missing.message, /pvc:\/\/b\/absent\.db does not exist/);
  });

  it('refuses: 404, 403, missing credentials, checksum, a newer minor, too little space', async () => {
    const cases: [FetchRequest, string, RegExp][] = [
      [request(dataDir(), s3Source('nope.db')), 'SnapshotNotFound', /s3:\/\/snaps\/nope\.db does not exist/],
      [
        request(dataDir(), s3Source('snap-3.5.db', { accessKeyId: 'WRONG', secretAccessKey: 'WRONG' })),
        'AccessDenied',
        /refused to read s3:\/\/snaps\/snap-3\.5\.db \(HTTP 403\).*Secret creds/,
      ],
      [
        request(dataDir(), { ...s3Source('snap-3.5.db'), credentials: undefined } as FetchSource),
        'CredentialsMissing',
        /Secret creds is missing or lacks AWS_ACCESS_KEY_ID/,
      ],
      [
        request(dataDir(), s3Source('snap-3.5.db'), { sha256: '0'.repeat(64) }),
        'ChecksumMismatch',
        /not the expected 0{64}/,
      ],
      [
        request(dataDir(), s3Source('snap-3.5.db'), { etcdVersion: '3.4.23' }),
        'SnapshotTooNew',
        /written by etcd 3\.5 and this cluster runs etcd 3\.4\.23/,
      ],
      [
        request(dataDir(), s3Source('snap-3.5.db'), { freeBytes: async () => snapshots['3.5'].length }),
        'InsufficientSpace',
        /needs twice the snapshot/,
      ],
    ];
    for (const [req, reason, message] of cases) {
      const f = await failure(req);
      assert.equal(f.reason, reason, f.message);
      assert.match(f.message, message);
      assert.equal(existsSync(req.paths.snapshotFile), false, 'nothing left to restore from');
      assert.equal(existsSync(req.paths.marker), false);
      assert.deepEqual(parseFailure(`${f.reason}: ${f.message}`), { reason, message: f.message });
    }
  });

  it('a corrupt snapshot is refused before the restore, with the check etcd itself makes', async () => {
    const d = dataDir();
    const file = join(dir, 'corrupt.db');
    const bytes = Buffer.from(snapshots['3.5']);
    bytes[bytes.length - 100] ^= 0xff;
    writeFileSync(file, bytes);
    const refused = await failure(
      request(d, { kind: 'file', mount: dir, path: file, display: 'corrupt.db' }),
    );
    assert.equal(refused.reason, 'SnapshotCorrupt');
    assert.match(refused.message, /fails etcd's own integrity check/);
    assert.equal(existsSync(restorePaths(d).snapshotFile), false);
    // etcd agrees, and its own refusal (a Pod's FallbackToLogsOnError message) reads the same way.
    mkdirSync(restorePaths(d).workDir, { recursive: true });
    writeFileSync(restorePaths(d).snapshotFile, bytes);
    const err = await etcdRestore('3.5', d).then(
      () => undefined,
      (e: unknown) => e as Error,
    );
    assert.ok(err, 'etcdutl refuses the file');
    assert.equal(parseFailure(err.message).reason, 'SnapshotCorrupt');
    // A file that is no etcd snapshot at all (no appended hash) is refused too.
    writeFileSync(file, Buffer.alloc(4096, 1));
    const plain = await failure(
      request(dataDir(), { kind: 'file', mount: dir, path: file, display: 'plain.db' }),
    );
    assert.equal(plain.reason, 'SnapshotCorrupt');
  });
});
