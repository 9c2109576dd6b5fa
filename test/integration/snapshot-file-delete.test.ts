// The agent's `snapshot-delete` step (shared/snapshot-file/delete.ts) on real files: it removes only
// the file its EtcdSnapshot wrote, unchanged; anything else stays byte for byte, with the reason.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { deleteSnapshotFile } from '../../shared/snapshot-file/delete.ts';
import { OWNER_SUFFIX, parseDeleteReport } from '../../shared/snapshot-file/result.ts';

const UID = '0f1e2d3c-4b5a-6978-8796-a5b4c3d2e1f0';
const FILE = 'nightly-0f1e2d3c.db';
const BYTES = Buffer.from('pretend snapshot bytes\n'.repeat(100));
const SHA = createHash('sha256').update(BYTES).digest('hex');

describe('snapshot-delete: a file goes only if its snapshot wrote it and it is unchanged', () => {
  let root: string;
  let n = 0;
  /** A fresh directory holding the file and (unless told otherwise) its owner file. */
  const dirWith = (o: { owner?: string | null; bytes?: Buffer | null } = {}) => {
    const dir = join(root, String(n++));
    mkdirSync(dir, { recursive: true });
    if (o.bytes !== null) writeFileSync(join(dir, FILE), o.bytes ?? BYTES);
    if (o.owner !== null) writeFileSync(join(dir, FILE + OWNER_SUFFIX), `${o.owner ?? UID}\n`);
    return dir;
  };
  const run = (dir: string, sha256 = SHA) =>
    deleteSnapshotFile({ mount: root, dir, file: FILE, recordedPath: `etcd/${FILE}`, ownerUid: UID, sha256 });

  before(() => {
    root = mkdtempSync(join(tmpdir(), 'snapshot-delete-'));
  });
  after(() => rmSync(root, { recursive: true, force: true }));

  it('its own unchanged file: deleted, with its owner file', async () => {
    const dir = dirWith();
    const r = await run(dir);
    assert.equal(r.kind, 'deleted', r.message);
    assert.match(r.message, new RegExp(`deleted etcd/${FILE} \\(2300 bytes, sha256:${SHA}\\)`));
    assert.equal(existsSync(join(dir, FILE)), false);
    assert.equal(existsSync(join(dir, FILE + OWNER_SUFFIX)), false);
  });

  const kept: [string, Parameters<typeof dirWith>[0], string | undefined, RegExp][] = [
    ['no owner file', { owner: null }, undefined, /has no owner file: this snapshot did not write it/],
    [
      'another snapshot owns it',
      { owner: 'ffffffff-0000' },
      undefined,
      /belongs to another EtcdSnapshot \(ffffffff-0000\)/,
    ],
    [
      'changed since it was written',
      { bytes: Buffer.from('other') },
      undefined,
      /changed since it was written/,
    ],
    ['a different recorded checksum', {}, 'ab'.repeat(32), /changed since it was written/],
  ];
  for (const [what, files, sha, message] of kept) {
    it(`${what}: kept byte for byte, and the report says why`, async () => {
      const dir = dirWith(files);
      const before = readFileSync(join(dir, FILE));
      const r = await run(dir, sha);
      assert.equal(r.kind, 'kept');
      assert.match(r.message, message);
      assert.deepEqual(readFileSync(join(dir, FILE)), before);
    });
  }

  it('nothing there: gone; an owner file left by a crash after the file went is removed', async () => {
    assert.equal((await run(dirWith({ owner: null, bytes: null }))).kind, 'gone');
    const dir = dirWith({ bytes: null });
    const r = await run(dir);
    assert.equal(r.kind, 'gone');
    assert.equal(existsSync(join(dir, FILE + OWNER_SUFFIX)), false);
  });

  it('the agent command writes the report run-snapshot reads back', () => {
    const dir = dirWith();
    const log = join(dir, 'termination-log');
    const repo = resolve(import.meta.dirname, '..', '..');
    execFileSync(
      process.execPath,
      [
        '--import',
        'tsx',
        join(repo, 'agent', 'main.ts'),
        'snapshot-delete',
        `--mount=${root}`,
        `--dir=${dir}`,
        `--file=${FILE}`,
        `--recorded-path=etcd/${FILE}`,
        `--owner-uid=${UID}`,
        `--sha256=${SHA}`,
        `--termination-log=${log}`,
      ],
      { cwd: repo, stdio: 'pipe' },
    );
    const report = parseDeleteReport(readFileSync(log, 'utf8'));
    assert.equal(report?.kind, 'deleted');
    assert.equal(existsSync(join(dir, FILE)), false);
  });
});
