// The agent's `snapshot-save` step (shared/snapshot-file/save.ts) against a real etcd 3.5: the file
// it writes is etcd's snapshot with its integrity hash, read back and checked; a file it did not
// write is never replaced; its own leftover is; a full or read-only volume (real tmpfs mounts, when
// the test may mount) is reported as such with nothing left behind.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import {
  OWNER_SUFFIX,
  parseStepReport,
  SaveFailure,
  savedMessage,
} from '../../shared/snapshot-file/result.ts';
import { digestFile, saveSnapshotFile } from '../../shared/snapshot-file/save.ts';
import { bboltStatus } from '../../shared/snapshot-file/bbolt-status.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';
import { EtcdTestCluster } from '../support/etcd-process.ts';

const UID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const OTHER = 'ffffffff-0000-1111-2222-333333333333';
const FILE = 'nightly-0f1e2d3c.db';

const ETCDUTL = etcdBinaries('3.5').etcdutl ?? 'etcdutl';
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

function canMount(dir: string): boolean {
  try {
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir], { stdio: 'ignore' });
    execFileSync('umount', [dir], { stdio: 'ignore' });
    return true;
  } catch {
    return false;
  }
}

describe(
  'snapshot-save: a snapshot file on a volume, verified, never over a file it did not write',
  { timeout: 300_000 },
  () => {
    let etcd: EtcdTestCluster;
    let root: string;
    const sources = () => [
      { member: 'down', endpoint: 'http://127.0.0.1:1' },
      { member: 'm0', endpoint: etcd.endpoints[0] },
    ];

    before(async () => {
      root = mkdtempSync(join(tmpdir(), 'snapshot-file-'));
      etcd = await EtcdTestCluster.start({ minor: '3.5', size: 1 });
      const client = new Etcd3({ hosts: etcd.endpoints });
      try {
        // ~2 MiB of values: more than the 1 MiB volume of the "full" case.
        for (let batch = 0; batch < 4; batch++) {
          await Promise.all(
            Array.from({ length: 50 }, (_, i) =>
              client.put(`k/${batch}-${i}`).value('x'.repeat(10_000)).exec(),
            ),
          );
        }
      } finally {
        client.close();
      }
    });
    after(async () => {
      await etcd?.cleanup();
      rmSync(root, { recursive: true, force: true });
    });

    it('writes the snapshot, reads it back, and reports size, SHA-256, member and revision', async () => {
      const dir = join(root, 'ok', 'etcd', 'daily');
      const saved = await saveSnapshotFile({
        mount: root,
        dir,
        file: FILE,
        recordedPath: `etcd/daily/${FILE}`,
        ownerUid: UID,
        sources: sources(),
      });
      const bytes = readFileSync(join(dir, FILE));
      assert.equal(saved.sizeBytes, bytes.length);
      assert.equal(saved.sha256, sha256(bytes));
      assert.equal(saved.member, 'm0', 'the unreachable first source is skipped');
      assert.ok(saved.revision > 200, `revision ${saved.revision}`);
      assert.equal(saved.path, `etcd/daily/${FILE}`);
      assert.equal((await digestFile(join(dir, FILE))).integrity, 'ok');
      const etcdutl = JSON.parse(
        execFileSync(ETCDUTL, ['snapshot', 'status', join(dir, FILE), '-w', 'json'], { encoding: 'utf8' }),
      ) as { revision: number; totalKey: number };
      assert.equal(saved.totalKey, etcdutl.totalKey, 'the key count etcdutl snapshot status reports');
      assert.equal(saved.dbRevision, etcdutl.revision, 'the revision etcdutl snapshot status reports');
      assert.equal(readFileSync(join(dir, FILE + OWNER_SUFFIX), 'utf8').trim(), UID);
      assert.deepEqual(readdirSync(dir).sort(), [FILE, FILE + OWNER_SUFFIX], 'no partial file is left');
      // What the Job's termination message carries, read back as run-snapshot reads it.
      assert.deepEqual(parseStepReport(savedMessage(saved)), { kind: 'saved', saved });
      // And it is a snapshot etcd restores.
      const slot = await etcd.reserve('restored');
      const dataDir = await etcd.restoreSnapshot(join(dir, FILE), slot);
      assert.ok(existsSync(join(dataDir, 'member')));
    });

    it("reads the same key count and revision from the file's bbolt database as etcdutl snapshot status", async () => {
      const dir = join(root, 'ok', 'etcd', 'daily');
      const file = join(dir, FILE);
      const ours = await bboltStatus(file);
      const out = execFileSync(ETCDUTL, ['snapshot', 'status', file, '-w', 'json'], {
        encoding: 'utf8',
      });
      const theirs = JSON.parse(out) as { revision: number; totalKey: number };
      assert.equal(ours.totalKey, theirs.totalKey, out);
      assert.equal(ours.revision, theirs.revision, out);
      assert.ok(ours.buckets.includes('key') && ours.buckets.includes('meta'), ours.buckets.join(','));
      assert.ok(ours.totalKey > 200);
    });

    it('refuses a file at the path it did not write (no owner file), leaving it byte for byte', async () => {
      const dir = join(root, 'foreign');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, FILE), 'a user file');
      await assert.rejects(
        saveSnapshotFile({
          mount: root,
          dir,
          file: FILE,
          recordedPath: FILE,
          ownerUid: UID,
          sources: sources(),
        }),
        (err: unknown) =>
          err instanceof SaveFailure && err.reason === 'ObjectExists' && /did not write/.test(err.message),
      );
      assert.equal(readFileSync(join(dir, FILE), 'utf8'), 'a user file');
      assert.deepEqual(readdirSync(dir), [FILE]);
    });

    it('refuses a path another EtcdSnapshot owns, even with no file there yet', async () => {
      const dir = join(root, 'other-owner');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, FILE + OWNER_SUFFIX), `${OTHER}\n`);
      await assert.rejects(
        saveSnapshotFile({
          mount: root,
          dir,
          file: FILE,
          recordedPath: FILE,
          ownerUid: UID,
          sources: sources(),
        }),
        (err: unknown) =>
          err instanceof SaveFailure && err.reason === 'ObjectExists' && err.message.includes(OTHER),
      );
      assert.deepEqual(readdirSync(dir), [FILE + OWNER_SUFFIX]);
    });

    it('replaces its own leftover (a retake after a crash), truncated file and partial file alike', async () => {
      const dir = join(root, 'leftover');
      mkdirSync(dir, { recursive: true });
      writeFileSync(join(dir, FILE + OWNER_SUFFIX), `${UID}\n`);
      writeFileSync(join(dir, FILE), 'truncated');
      writeFileSync(join(dir, `${FILE}.partial`), 'half');
      const saved = await saveSnapshotFile({
        mount: root,
        dir,
        file: FILE,
        recordedPath: FILE,
        ownerUid: UID,
        sources: sources(),
      });
      assert.equal(sha256(readFileSync(join(dir, FILE))), saved.sha256);
      assert.equal((await digestFile(join(dir, FILE))).integrity, 'ok');
      assert.deepEqual(readdirSync(dir).sort(), [FILE, FILE + OWNER_SUFFIX]);
    });

    it('no member serves a snapshot: EtcdUnavailable, naming each member', async () => {
      const dir = join(root, 'down');
      await assert.rejects(
        saveSnapshotFile({
          mount: root,
          dir,
          file: FILE,
          recordedPath: FILE,
          ownerUid: UID,
          sources: [{ member: 'down', endpoint: 'http://127.0.0.1:1' }],
        }),
        (err: unknown) =>
          err instanceof SaveFailure && err.reason === 'EtcdUnavailable' && /down:/.test(err.message),
      );
      assert.ok(!existsSync(join(dir, FILE)));
    });

    describe('volumes that cannot take the file (tmpfs mounts)', () => {
      const mounts: string[] = [];
      after(() => {
        for (const m of mounts) {
          try {
            execFileSync('umount', [m], { stdio: 'ignore' });
          } catch {
            // already gone
          }
        }
      });

      it('a full volume: VolumeFull, and no partial file is left on it', async t => {
        const dir = join(root, 'full');
        mkdirSync(dir, { recursive: true });
        if (!canMount(dir)) return t.skip('this test process may not mount tmpfs');
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m', 'tmpfs', dir]);
        mounts.push(dir);
        await assert.rejects(
          saveSnapshotFile({
            mount: root,
            dir,
            file: FILE,
            recordedPath: FILE,
            ownerUid: UID,
            sources: sources(),
          }),
          (err: unknown) =>
            err instanceof SaveFailure && err.reason === 'VolumeFull' && /no space left/.test(err.message),
        );
        assert.ok(!existsSync(join(dir, FILE)));
        assert.ok(!existsSync(join(dir, `${FILE}.partial`)));
      });

      it('a read-only volume: VolumeReadOnly', async t => {
        const dir = join(root, 'readonly');
        mkdirSync(dir, { recursive: true });
        if (!canMount(dir)) return t.skip('this test process may not mount tmpfs');
        execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=4m,ro', 'tmpfs', dir]);
        mounts.push(dir);
        await assert.rejects(
          saveSnapshotFile({
            mount: root,
            dir: join(dir, 'etcd'),
            file: FILE,
            recordedPath: FILE,
            ownerUid: UID,
            sources: sources(),
          }),
          (err: unknown) =>
            err instanceof SaveFailure && err.reason === 'VolumeReadOnly' && /EROFS/.test(err.message),
        );
      });
    });
  },
);
