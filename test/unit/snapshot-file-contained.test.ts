// The agent reads and writes only inside the volume it mounted: a path that leaves the mount by
// `..` or by a symbolic link on the volume is refused before anything is read, written or deleted,
// in each of the three steps that take a path (snapshot-save, snapshot-delete, restore-fetch).
import assert from 'node:assert/strict';
import { existsSync, mkdirSync, mkdtempSync, readdirSync, rmSync, symlinkSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fetchSnapshot } from '../../shared/restore/fetch.ts';
import { RestoreFailure, restorePaths } from '../../shared/restore/layout.ts';
import { containedPath, lexicallyInside } from '../../shared/snapshot-file/contained.ts';
import { deleteSnapshotFile } from '../../shared/snapshot-file/delete.ts';
import { OWNER_SUFFIX, SaveFailure } from '../../shared/snapshot-file/result.ts';
import { saveSnapshotFile } from '../../shared/snapshot-file/save.ts';

describe('lexicallyInside', () => {
  const rows: [string, boolean][] = [
    ['/snapshots', true],
    ['/snapshots/etcd', true],
    ['/snapshots/etcd/../daily', true],
    ['/snapshots/a..b', true],
    ['/snapshots/..', false],
    ['/snapshots/../../etc', false],
    ['/snapshots/etcd/../../etc', false],
    ['/snapshotsX', false],
    ['/etc/passwd', false],
    ['etcd/daily', true],
    ['../etc', false],
  ];
  for (const [path, inside] of rows) {
    it(`${path} ${inside ? 'is' : 'is not'} inside /snapshots`, () => {
      assert.equal(lexicallyInside('/snapshots', path), inside);
    });
  }
});

describe('the agent refuses a path outside its mount', () => {
  let root: string;
  let mount: string;
  let outside: string;
  before(() => {
    root = mkdtempSync(join(tmpdir(), 'contained-'));
    mount = join(root, 'mount');
    outside = join(root, 'outside');
    mkdirSync(join(mount, 'etcd'), { recursive: true });
    mkdirSync(outside);
    writeFileSync(join(outside, 'secret.db'), 'not yours');
    writeFileSync(join(outside, 'snap.db'), 'not yours either');
    writeFileSync(join(outside, `snap.db${OWNER_SUFFIX}`), 'uid-1\n');
    // A link a user of the claim made, pointing off the volume.
    symlinkSync(outside, join(mount, 'escape'));
    symlinkSync(join(outside, 'secret.db'), join(mount, 'etcd', 'secret-link.db'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('containedPath: inside by name and by resolution; out by .., by a linked directory, by a linked file', async () => {
    assert.equal((await containedPath(mount, join(mount, 'etcd', 'new', 'file.db'))).kind, 'inside');
    for (const path of [
      join(mount, '..', 'outside', 'secret.db'),
      join(mount, 'escape', 'secret.db'),
      join(mount, 'escape', 'not-yet', 'file.db'),
      join(mount, 'etcd', 'secret-link.db'),
    ]) {
      const result = await containedPath(mount, path);
      assert.equal(result.kind, 'outside', path);
      if (result.kind === 'outside') assert.match(result.message, /outside the volume mounted at/);
    }
  });

  it('snapshot-save: PathOutsideVolume for ../ and for a linked directory, and nothing is written', async () => {
    for (const dir of [
      join(mount, '..', 'outside'),
      join(mount, 'escape'),
      join(mount, 'escape', 'deeper'),
    ]) {
      await assert.rejects(
        saveSnapshotFile({
          mount,
          dir,
          file: 'new.db',
          recordedPath: 'x/new.db',
          ownerUid: 'u',
          sources: [],
        }),
        (err: unknown) => err instanceof SaveFailure && err.reason === 'PathOutsideVolume',
        dir,
      );
    }
    assert.deepEqual(readdirSync(outside).sort(), ['secret.db', 'snap.db', `snap.db${OWNER_SUFFIX}`]);
  });

  it('snapshot-delete: a file reached through a link is kept, not deleted', async () => {
    const report = await deleteSnapshotFile({
      mount,
      dir: join(mount, 'escape'),
      file: 'snap.db',
      recordedPath: 'escape/snap.db',
      ownerUid: 'uid-1',
      sha256: '0'.repeat(64),
    });
    assert.equal(report.kind, 'kept');
    assert.match(report.message, /outside the volume/);
    assert.ok(existsSync(join(outside, 'snap.db')));
  });

  it('restore-fetch: PathOutsideVolume for a source file reached by .. or a link', async () => {
    for (const path of [join(mount, '..', 'outside', 'secret.db'), join(mount, 'etcd', 'secret-link.db')]) {
      const data = mkdtempSync(join(root, 'data-'));
      await assert.rejects(
        fetchSnapshot({
          paths: restorePaths(data),
          source: { kind: 'file', mount, path, display: 'pvc://claim/x' },
          etcdVersion: '3.5.16',
        }),
        (err: unknown) => err instanceof RestoreFailure && err.reason === 'PathOutsideVolume',
        path,
      );
    }
  });
});
