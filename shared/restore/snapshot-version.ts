// Which etcd minor release wrote a snapshot, read from the bytes as they stream past (no second
// pass, a few bytes of memory). bbolt stores a key and its value side by side in a leaf page, so the
// meta bucket's entries are visible in the raw file:
// - `storageVersion` + "3.6.0" (and later): etcd 3.6 and newer record their storage version;
// - `confState{"` : etcd 3.5 added the confState key (JSON value) to the meta bucket;
// - neither: etcd 3.4.
// etcd 3.6+ writes its storage version a few seconds after it starts (checked with 3.6.16 and 3.7.3):
// a snapshot taken before then carries no storage version and reads as 3.5 (a guess on the old side).
// A user value that happens to hold those bytes could make a 3.4 snapshot look newer (refused, never
// accepted wrongly).
const STORAGE_VERSION = Buffer.from('storageVersion');
const CONF_STATE = Buffer.from('confState{"');
const KEEP = 32;

export class SnapshotVersionScanner {
  private tail = Buffer.alloc(0);
  private storageMinor: string | undefined;
  private confState = false;

  push(chunk: Buffer): void {
    const window = Buffer.concat([this.tail, chunk]);
    if (!this.confState && window.includes(CONF_STATE)) this.confState = true;
    let at = window.indexOf(STORAGE_VERSION);
    while (at >= 0) {
      const m = /^(\d+)\.(\d+)\.\d+/.exec(
        window.subarray(at + STORAGE_VERSION.length, at + STORAGE_VERSION.length + 12).toString('latin1'),
      );
      if (m) {
        const minor = `${m[1]}.${m[2]}`;
        if (!this.storageMinor || newer(minor, this.storageMinor)) this.storageMinor = minor;
      }
      at = window.indexOf(STORAGE_VERSION, at + 1);
    }
    this.tail = Buffer.from(window.subarray(Math.max(0, window.length - KEEP)));
  }

  minor(): string {
    if (this.storageMinor) return this.storageMinor;
    return this.confState ? '3.5' : '3.4';
  }
}

/** "3.5.16" → "3.5". */
export function minorOf(version: string): string {
  const m = /^(\d+)\.(\d+)/.exec(version);
  if (!m) throw new Error(`not an etcd version: ${version}`);
  return `${m[1]}.${m[2]}`;
}

function newer(a: string, b: string): boolean {
  const [a1, a2] = a.split('.').map(Number);
  const [b1, b2] = b.split('.').map(Number);
  return a1 - b1 > 0 || (a1 === b1 && a2 > b2);
}
