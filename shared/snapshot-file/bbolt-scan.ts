// What `etcdutl snapshot status` of etcd 3.5 reports (totalKey: entries in every bucket; 3.6's
// counts the key bucket only), and the revision, computed from a snapshot read once,
// front to back: the S3 read-back has a stream, not a file to seek in. Each page is summarised as
// it passes (a leaf's element count, its last key, the sub-buckets it names; a branch's children),
// and the trees are walked over the summaries at the end, from the current meta page's root. Only
// pages reachable from that root count, so freed pages with stale contents change nothing.
// Memory: a few dozen bytes per page plus the multi-page (overflow) pages being assembled, capped;
// past the cap the count is given up (reported, never guessed). bbolt's layout: bbolt-status.ts.
import { parseMeta, type Meta } from './bbolt-status.ts';

const HEADER = 16;
const ELEMENT = 16;
const BRANCH = 0x01;
const LEAF = 0x02;
const BUCKET_LEAF = 0x01;
/** The most bytes of overflow pages held at once while they are assembled. */
export const SCAN_PENDING_CAP = 64 * 1024 * 1024;

type Root = { page: number } | { inline: Buffer };

type Summary =
  | { kind: 'branch'; children: number[] }
  | { kind: 'leaf'; count: number; lastMain: number; buckets: { name: string; root: Root }[] };

export type ScanResult =
  { kind: 'counted'; totalKey: number; revision: number } | { kind: 'unknown'; reason: string };

function summarise(page: Buffer): Summary {
  const flags = page.readUInt16LE(8);
  const count = page.readUInt16LE(10);
  if (flags & BRANCH) {
    const children: number[] = [];
    for (let i = 0; i < count; i++) children.push(Number(page.readBigUInt64LE(HEADER + i * ELEMENT + 8)));
    return { kind: 'branch', children };
  }
  const buckets: { name: string; root: Root }[] = [];
  let lastMain = 0;
  for (let i = 0; i < count; i++) {
    const at = HEADER + i * ELEMENT;
    const pos = at + page.readUInt32LE(at + 4);
    const ksize = page.readUInt32LE(at + 8);
    const vsize = page.readUInt32LE(at + 12);
    const key = page.subarray(pos, pos + ksize);
    // `key` bucket keys start with the 8-byte big-endian main revision and are sorted, so the
    // page's last key holds its highest revision.
    if (i === count - 1 && key.length >= 8) lastMain = Number(key.readBigUInt64BE(0));
    if ((page.readUInt32LE(at) & BUCKET_LEAF) !== 0) {
      const value = page.subarray(pos + ksize, pos + ksize + vsize);
      const root = Number(value.readBigUInt64LE(0));
      buckets.push({
        name: key.toString('latin1'),
        root: root === 0 ? { inline: Buffer.from(value.subarray(16)) } : { page: root },
      });
    }
  }
  return { kind: 'leaf', count, lastMain, buckets };
}

class Missing extends Error {}

/** Feed it every byte of a snapshot in order; `result()` at the end. */
export class BboltScan {
  private pageSize = 0;
  private carry = Buffer.alloc(0);
  private block = 0;
  private readonly metas: Meta[] = [];
  private readonly pages = new Map<number, Summary>();
  private pending: { id: number; buf: Buffer; filled: number }[] = [];
  private pendingBytes = 0;
  private gaveUp?: string;

  update(chunk: Buffer): void {
    if (this.gaveUp) return;
    let bytes = this.carry.length === 0 ? chunk : Buffer.concat([this.carry, chunk]);
    if (this.pageSize === 0) {
      // Meta page 0 names the page size: its first 80 bytes are all it takes.
      if (bytes.length < HEADER + 64) {
        this.carry = Buffer.from(bytes);
        return;
      }
      const meta = parseMeta(bytes.subarray(0, HEADER + 64));
      this.pageSize = meta?.pageSize ?? 4096;
    }
    while (bytes.length >= this.pageSize && !this.gaveUp) {
      this.take(bytes.subarray(0, this.pageSize));
      bytes = bytes.subarray(this.pageSize);
    }
    this.carry = Buffer.from(bytes);
  }

  private take(block: Buffer): void {
    const id = this.block++;
    this.pending = this.pending.filter(p => {
      block.copy(p.buf, p.filled);
      p.filled += block.length;
      if (p.filled < p.buf.length) return true;
      this.pages.set(p.id, summarise(p.buf));
      this.pendingBytes -= p.buf.length;
      return false;
    });
    if (id < 2) {
      const meta = parseMeta(block);
      if (meta) this.metas.push(meta);
      return;
    }
    // A page starts with its own id; bytes inside another page or a freed run rarely do, and a
    // stray match is harmless unless something reachable points at it.
    if (Number(block.readBigUInt64LE(0)) !== id) return;
    const kind = block.readUInt16LE(8);
    if (kind !== BRANCH && kind !== LEAF) return;
    const overflow = block.readUInt32LE(12);
    if (overflow === 0) {
      this.pages.set(id, summarise(block));
      return;
    }
    const size = (overflow + 1) * this.pageSize;
    if (this.pendingBytes + size > SCAN_PENDING_CAP) {
      this.gaveUp = `page ${id} spans ${size} bytes, more than the ${SCAN_PENDING_CAP >> 20} MiB the scan holds`;
      this.pages.clear();
      this.pending = [];
      return;
    }
    const buf = Buffer.alloc(size);
    block.copy(buf, 0);
    this.pending.push({ id, buf, filled: block.length });
    this.pendingBytes += size;
  }

  result(): ScanResult {
    if (this.gaveUp) return { kind: 'unknown', reason: this.gaveUp };
    const meta = [...this.metas].sort((a, b) => (a.txid > b.txid ? -1 : 1))[0];
    if (!meta) return { kind: 'unknown', reason: 'no valid bbolt meta page' };
    let totalKey = 0;
    let revision = 0;
    try {
      const buckets = [...this.leaves({ page: Number(meta.root) })].flatMap(leaf => leaf.buckets);
      for (const bucket of buckets) {
        for (const inner of this.leaves(bucket.root)) {
          totalKey += inner.count;
          if (bucket.name === 'key') revision = Math.max(revision, inner.lastMain);
        }
      }
    } catch (err) {
      if (err instanceof Missing) return { kind: 'unknown', reason: err.message };
      throw err;
    }
    return { kind: 'counted', totalKey, revision };
  }

  /** The leaf summaries of the tree rooted at `root`. */
  private *leaves(root: Root): Generator<Extract<Summary, { kind: 'leaf' }>> {
    const summary = 'inline' in root ? summarise(root.inline) : this.pages.get(root.page);
    if (!summary) throw new Missing(`page ${'page' in root ? root.page : '?'} is missing from the database`);
    if (summary.kind === 'leaf') {
      yield summary;
      return;
    }
    for (const child of summary.children) yield* this.leaves({ page: child });
  }
}
