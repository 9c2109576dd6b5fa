// Which etcd minor wrote a snapshot, read from its bytes as they stream past
// (shared/restore/snapshot-version.ts): the markers split across chunks, several storage versions in
// one file (the newest counts), and the version text that is not one.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { minorOf, SnapshotVersionScanner } from '../../shared/restore/snapshot-version.ts';

/** The minor a scanner reads from these chunks, pushed in order. */
function scan(...chunks: string[]): string {
  const scanner = new SnapshotVersionScanner();
  for (const c of chunks) scanner.push(Buffer.from(c, 'latin1'));
  return scanner.minor();
}

describe('the etcd minor a snapshot was written by', () => {
  it('neither marker: 3.4; the confState key: 3.5; a storage version: its minor', () => {
    assert.equal(scan('\0\0bucket\0key\0value'), '3.4');
    assert.equal(scan('\0meta\0confState{"voters":[1]}'), '3.5');
    assert.equal(scan('storageVersion3.6.0\0confState{"voters":[1]}'), '3.6');
    assert.equal(scan('\0confState{"voters":[1]}\0storageVersion3.7.1'), '3.7');
  });

  it('a storage version of several digits is read whole', () => {
    assert.equal(scan('\0storageVersion3.10.0'), '3.10');
    assert.equal(scan('\0storageVersion10.1.0'), '10.1');
  });

  it('markers split across chunks are still found', () => {
    assert.equal(scan('\0\0storageVer', 'sion3.6.0\0'), '3.6');
    assert.equal(scan('\0\0storageVersion3.', '6.0\0'), '3.6');
    assert.equal(scan('\0\0confSt', 'ate{"voters":[1]}'), '3.5');
    // A window of 24 bytes ending in the key: all of it is kept for the next chunk.
    assert.equal(scan('0123456789storageVersion', '3.6.0'), '3.6');
    assert.equal(scan('x'.repeat(4096) + 'storageVersion', '3.6.0' + 'y'.repeat(4096)), '3.6');
  });

  it('the key with no version after it is no storage version (a user value, a half-written page)', () => {
    assert.equal(scan('storageVersion\0\0\0'), '3.4');
    assert.equal(scan('\0confState{"x"\0storageVersionabc'), '3.5');
    assert.equal(scan('storageVersionv3.6.0'), '3.4');
  });

  it('several storage versions: the newest, whichever comes first', () => {
    const pairs: [string, string, string][] = [
      ['3.6.0', '3.7.0', '3.7'],
      ['3.7.0', '3.6.0', '3.7'],
      ['3.9.0', '3.10.0', '3.10'],
      ['3.10.0', '3.9.0', '3.10'],
      ['3.9.0', '4.0.0', '4.0'],
      ['4.0.0', '3.9.0', '4.0'],
      ['3.6.0', '3.6.2', '3.6'],
    ];
    for (const [first, second, want] of pairs) {
      assert.equal(
        scan(`storageVersion${first}\0`, `\0storageVersion${second}`),
        want,
        `${first}, ${second}`,
      );
      assert.equal(scan(`storageVersion${first}\0storageVersion${second}`), want, `${first} ${second}`);
    }
  });
});

describe("an etcd version's minor", () => {
  it('is its first two numbers', () => {
    assert.equal(minorOf('3.5.16'), '3.5');
    assert.equal(minorOf('3.10.0'), '3.10');
    assert.equal(minorOf('10.2.1'), '10.2');
  });

  it('anything else is refused, naming it', () => {
    assert.throws(() => minorOf('v3.5.16'), /^Error: not an etcd version: v3\.5\.16$/);
    assert.throws(() => minorOf('latest'), /^Error: not an etcd version: latest$/);
  });
});
