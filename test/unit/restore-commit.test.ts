// The restore's commit step (shared/restore/commit.ts) on a real directory tree: etcd's restored
// data moves into place over whatever was there and the marker is written last; with the marker
// present nothing is touched but the work directory; a skip file without the marker, or a restore
// that left no database, is refused with the data left as it was.
import assert from 'node:assert/strict';
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
import { after, describe, it } from 'node:test';
import { commitRestore } from '../../shared/restore/commit.ts';
import { RestoreFailure, restorePaths } from '../../shared/restore/layout.ts';

const dirs: string[] = [];
after(() => dirs.forEach(d => rmSync(d, { recursive: true, force: true })));

/** A data volume with a restore's work laid out: etcd's restored database, and old data in place. */
function volume(opts: { restored?: boolean; old?: boolean; marker?: boolean; skip?: boolean } = {}) {
  const root = mkdtempSync(join(tmpdir(), 'etcdfn-commit-'));
  dirs.push(root);
  const paths = restorePaths(join(root, 'data'));
  mkdirSync(paths.workDir, { recursive: true });
  writeFileSync(paths.snapshotFile, 'snapshot');
  if (opts.restored ?? true) {
    mkdirSync(join(paths.restoredDir, 'member', 'snap'), { recursive: true });
    mkdirSync(join(paths.restoredDir, 'member', 'wal'), { recursive: true });
    writeFileSync(join(paths.restoredDir, 'member', 'snap', 'db'), 'restored db');
  }
  if (opts.old) {
    mkdirSync(join(paths.dataDir, 'member', 'snap'), { recursive: true });
    writeFileSync(join(paths.dataDir, 'member', 'snap', 'db'), 'old db');
    writeFileSync(join(paths.dataDir, 'member', 'stale'), 'old file');
  }
  if (opts.marker) writeFileSync(paths.marker, '{"done":true}\n');
  if (opts.skip) writeFileSync(paths.skipFile, '');
  return paths;
}

describe('the restore commit step', () => {
  it("moves etcd's restored data over the old, writes the marker last with the record, and clears the work", async () => {
    const paths = volume({ old: true });
    const before = Date.now();
    assert.deepEqual(await commitRestore(paths, { snapshot: 's3://b/k', sha256: 'abc' }), {
      kind: 'committed',
    });
    assert.equal(readFileSync(join(paths.dataDir, 'member', 'snap', 'db'), 'utf8'), 'restored db');
    assert.ok(existsSync(join(paths.dataDir, 'member', 'wal')));
    assert.equal(
      existsSync(join(paths.dataDir, 'member', 'stale')),
      false,
      'nothing of the old data is left',
    );
    const text = readFileSync(paths.marker, 'utf8');
    assert.ok(text.endsWith('}\n'));
    const marker = JSON.parse(text) as Record<string, unknown>;
    assert.equal(marker.snapshot, 's3://b/k');
    assert.equal(marker.sha256, 'abc');
    const at = Date.parse(String(marker.restoredAt));
    assert.ok(at >= before - 1000 && at <= Date.now() + 1000, String(marker.restoredAt));
    assert.equal(existsSync(paths.workDir), false);
    assert.deepEqual(readdirSync(paths.dataDir).sort(), ['.etcdfn-restored', 'member']);
  });

  it('on an empty volume too', async () => {
    const paths = volume();
    assert.deepEqual(await commitRestore(paths, {}), { kind: 'committed' });
    assert.equal(readFileSync(join(paths.dataDir, 'member', 'snap', 'db'), 'utf8'), 'restored db');
    assert.deepEqual(Object.keys(JSON.parse(readFileSync(paths.marker, 'utf8')) as object), ['restoredAt']);
  });

  it('with the marker: the live data and the marker stay, only the work directory goes', async () => {
    const paths = volume({ old: true, marker: true });
    assert.deepEqual(await commitRestore(paths, { snapshot: 'x' }), { kind: 'already-restored' });
    assert.equal(readFileSync(join(paths.dataDir, 'member', 'snap', 'db'), 'utf8'), 'old db');
    assert.equal(readFileSync(paths.marker, 'utf8'), '{"done":true}\n');
    assert.equal(existsSync(paths.workDir), false);
  });

  it('with the marker and the work directory gone already (a restart after the commit): the same', async () => {
    const paths = volume({ old: true, marker: true });
    rmSync(paths.workDir, { recursive: true });
    assert.deepEqual(await commitRestore(paths, {}), { kind: 'already-restored' });
    assert.equal(readFileSync(join(paths.dataDir, 'member', 'snap', 'db'), 'utf8'), 'old db');
  });

  it('a skip file without the marker: refused, nothing touched', async () => {
    const paths = volume({ old: true, skip: true });
    await assert.rejects(commitRestore(paths, {}), (err: unknown) => {
      assert.ok(err instanceof RestoreFailure);
      assert.equal(err.reason, 'RestoreFailed');
      assert.match(err.message, /marker vanished between the fetch and commit steps; delete the Pod/);
      return true;
    });
    assert.equal(readFileSync(join(paths.dataDir, 'member', 'snap', 'db'), 'utf8'), 'old db');
    assert.ok(existsSync(join(paths.restoredDir, 'member', 'snap', 'db')));
    assert.equal(existsSync(paths.marker), false);
  });

  it('no database from the restore: refused, the old data left in place', async () => {
    const paths = volume({ old: true, restored: false });
    mkdirSync(join(paths.restoredDir, 'member', 'snap'), { recursive: true });
    await assert.rejects(commitRestore(paths, {}), (err: unknown) => {
      assert.ok(err instanceof RestoreFailure);
      assert.equal(err.reason, 'RestoreFailed');
      assert.equal(err.message, `etcd's restore left no database in ${join(paths.restoredDir, 'member')}`);
      return true;
    });
    assert.equal(readFileSync(join(paths.dataDir, 'member', 'snap', 'db'), 'utf8'), 'old db');
    assert.equal(existsSync(paths.marker), false);
    assert.ok(existsSync(paths.workDir));
  });
});
