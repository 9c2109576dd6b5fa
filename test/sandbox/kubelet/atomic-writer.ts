// The files of a secret / configMap / downwardAPI / projected volume, written as the kubelet's
// AtomicWriter does so that a reader never sees a half-written or half-updated volume:
//   <dir>/..<version>/<path>      the whole payload of one version
//   <dir>/..data -> ..<version>   swapped to a new version with one rename (atomic on POSIX)
//   <dir>/<top> -> ..data/<top>   one link per top-level entry, so `<dir>/tls.crt` always resolves
// The version name is a digest of the payload: the same content is never written twice.
import { createHash } from 'node:crypto';
import {
  chmodSync,
  lstatSync,
  mkdirSync,
  readdirSync,
  readlinkSync,
  renameSync,
  rmSync,
  symlinkSync,
  writeFileSync,
} from 'node:fs';
import { dirname, join } from 'node:path';

export interface PayloadFile {
  data: Buffer;
  mode: number;
}

/** Relative path (may contain `/`) → content and mode. */
export type Payload = Map<string, PayloadFile>;

const DATA_LINK = '..data';

function version(payload: Payload): string {
  const hash = createHash('sha256');
  for (const path of [...payload.keys()].sort()) {
    const file = payload.get(path)!;
    hash.update(`${path}\0${file.mode}\0${file.data.length}\0`).update(file.data);
  }
  return `..${hash.digest('hex').slice(0, 16)}`;
}

function readLink(path: string): string | undefined {
  try {
    return readlinkSync(path);
  } catch {
    return undefined;
  }
}

function isLink(path: string): boolean {
  try {
    return lstatSync(path).isSymbolicLink();
  } catch {
    return false;
  }
}

/**
 * Makes `dir` show `payload`; returns false when it already did. Safe to repeat after a crash at
 * any point: a half-written version is rewritten, and `..data` only ever names a complete one.
 */
export function writeAtomically(dir: string, payload: Payload): boolean {
  mkdirSync(dir, { recursive: true });
  const next = version(payload);
  const previous = readLink(join(dir, DATA_LINK));
  if (previous === next) return false;

  const versionDir = join(dir, next);
  rmSync(versionDir, { recursive: true, force: true });
  mkdirSync(versionDir, { recursive: true });
  for (const [path, file] of payload) {
    const target = join(versionDir, path);
    mkdirSync(dirname(target), { recursive: true });
    writeFileSync(target, file.data);
    chmodSync(target, file.mode);
  }

  const tmpLink = join(dir, `${DATA_LINK}_tmp`);
  rmSync(tmpLink, { force: true });
  symlinkSync(next, tmpLink);
  renameSync(tmpLink, join(dir, DATA_LINK));

  const tops = new Set([...payload.keys()].map(path => path.split('/')[0]));
  for (const top of tops) {
    if (!isLink(join(dir, top))) symlinkSync(join(DATA_LINK, top), join(dir, top));
  }
  for (const entry of readdirSync(dir)) {
    if (entry.startsWith('..') || tops.has(entry)) continue;
    rmSync(join(dir, entry), { recursive: true, force: true });
  }
  if (previous && previous !== next && previous.startsWith('..'))
    rmSync(join(dir, previous), { recursive: true, force: true });
  return true;
}
