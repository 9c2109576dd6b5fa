// What `etcdutl snapshot status` reports about a snapshot file, read from its bbolt database
// without etcd: the number of keys in every bucket (etcdutl's totalKey) and the highest main
// revision in the `key` bucket (its revision). Read-only, page by page from the file, so memory
// stays at a few pages whatever the database's size.
//
// bbolt's layout (go.etcd.io/bbolt, little-endian): pages of `pageSize` bytes, each starting with a
// 16-byte header {id u64, flags u16, count u16, overflow u32}. Pages 0 and 1 are meta pages (the
// valid one with the higher txid is current) holding the root bucket {root pgid u64, sequence
// u64}. Branch pages hold `count` 16-byte elements {pos u32, ksize u32, pgid u64}; leaf pages hold
// {flags u32, pos u32, ksize u32, vsize u32}, pos counted from the element itself. A leaf element
// with flag 1 is a sub-bucket: its value is {root pgid u64, sequence u64}, followed, when root is
// 0, by an inline leaf page.
import { open, type FileHandle } from 'node:fs/promises';

const HEADER = 16;
const ELEMENT = 16;
const BRANCH = 0x01;
const LEAF = 0x02;
const META = 0x04;
const BUCKET_LEAF = 0x01;
const MAGIC = 0xed0cdaed;

export interface BboltStatus {
  totalKey: number;
  revision: number;
  buckets: string[];
}

export class NotBbolt extends Error {}

/** FNV-1a 64 over the meta page's bytes before its checksum (bbolt's meta.sum64). */
function fnv1a64(bytes: Buffer): bigint {
  let h = 0xcbf29ce484222325n;
  for (const b of bytes) {
    h ^= BigInt(b);
    h = (h * 0x100000001b3n) & 0xffffffffffffffffn;
  }
  return h;
}

export interface Meta {
  pageSize: number;
  root: bigint;
  txid: bigint;
}

export function parseMeta(page: Buffer): Meta | undefined {
  if (page.length < HEADER + 64 || (page.readUInt16LE(8) & META) === 0) return undefined;
  const m = page.subarray(HEADER);
  if (m.readUInt32LE(0) !== MAGIC || m.readUInt32LE(4) !== 2) return undefined;
  // magic u32, version u32, pageSize u32, flags u32, root {u64,u64}, freelist u64, pgid u64, txid u64, checksum u64
  if (fnv1a64(m.subarray(0, 56)) !== m.readBigUInt64LE(56)) return undefined;
  return { pageSize: m.readUInt32LE(8), root: m.readBigUInt64LE(16), txid: m.readBigUInt64LE(48) };
}

/** Reads a snapshot file's bbolt database; throws NotBbolt when it is not one. */
export async function bboltStatus(path: string): Promise<BboltStatus> {
  const file = await open(path, 'r');
  try {
    const first = Buffer.alloc(4096);
    await file.read(first, 0, first.length, 0);
    const meta0 = parseMeta(first);
    const pageSize = meta0?.pageSize ?? 4096;
    const second = Buffer.alloc(pageSize);
    await file.read(second, 0, pageSize, pageSize);
    const meta1 = parseMeta(second);
    const meta = [meta0, meta1]
      .filter((m): m is Meta => m !== undefined)
      .sort((a, b) => (a.txid > b.txid ? -1 : 1))[0];
    if (!meta) throw new NotBbolt('no valid bbolt meta page');
    const reader = new PageReader(file, meta.pageSize);
    const status: BboltStatus = { totalKey: 0, revision: 0, buckets: [] };
    // The root bucket's elements are the top-level buckets (etcd keeps only buckets there).
    await reader.walk({ page: meta.root }, async (flags, key, value) => {
      if ((flags & BUCKET_LEAF) === 0) return;
      const name = key.toString('latin1');
      status.buckets.push(name);
      await reader.walk(bucketRoot(value), async (_f, k) => {
        status.totalKey++;
        // `key` bucket keys: 8-byte big-endian main revision, '_', 8-byte sub revision.
        if (name === 'key' && k.length >= 8) {
          const main = Number(k.readBigUInt64BE(0));
          if (main > status.revision) status.revision = main;
        }
      });
    });
    return status;
  } finally {
    await file.close();
  }
}

type Root = { page: bigint } | { inline: Buffer };

function bucketRoot(value: Buffer): Root {
  const root = value.readBigUInt64LE(0);
  return root === 0n ? { inline: value.subarray(16) } : { page: root };
}

class PageReader {
  private readonly file: FileHandle;
  private readonly pageSize: number;

  constructor(file: FileHandle, pageSize: number) {
    this.file = file;
    this.pageSize = pageSize;
  }

  private async page(id: bigint): Promise<Buffer> {
    const head = Buffer.alloc(HEADER);
    const at = Number(id) * this.pageSize;
    await this.file.read(head, 0, HEADER, at);
    const overflow = head.readUInt32LE(12);
    const size = this.pageSize * (overflow + 1);
    const buf = Buffer.alloc(size);
    const { bytesRead } = await this.file.read(buf, 0, size, at);
    if (bytesRead < HEADER) throw new NotBbolt(`page ${id} is past the end of the file`);
    return buf;
  }

  /** Calls `each` for every leaf element of the tree rooted at `root`, in key order. */
  async walk(root: Root, each: (flags: number, key: Buffer, value: Buffer) => Promise<void>): Promise<void> {
    const page = 'inline' in root ? root.inline : await this.page(root.page);
    const flags = page.readUInt16LE(8);
    const count = page.readUInt16LE(10);
    for (let i = 0; i < count; i++) {
      const at = HEADER + i * ELEMENT;
      if (flags & BRANCH) {
        await this.walk({ page: page.readBigUInt64LE(at + 8) }, each);
      } else if (flags & LEAF) {
        const f = page.readUInt32LE(at);
        const pos = at + page.readUInt32LE(at + 4);
        const ksize = page.readUInt32LE(at + 8);
        const vsize = page.readUInt32LE(at + 12);
        await each(f, page.subarray(pos, pos + ksize), page.subarray(pos + ksize, pos + ksize + vsize));
      } else {
        throw new NotBbolt(`page of unknown type ${flags}`);
      }
    }
  }
}
