// The sandbox's hosts file: the machine's own /etc/hosts lines (localhost, ...) first, then one
// managed section with the Pod and Service names of the sandbox.
//
// The file is bind-mounted over /etc/hosts inside the sandbox's mount namespace (namespace.ts), so
// it must always be rewritten IN PLACE: same inode, new content. Writing a temporary file and
// renaming it over the path would leave the bind mount showing the old inode forever.
//
// Readers: glibc (Node's dns.lookup, getent, curl) re-reads /etc/hosts on every lookup. Go programs
// such as etcd cache it for up to 5 seconds (net/hosts.go re-stats it only when the cache has
// expired), so a name added while an etcd member runs may take up to 5 s to resolve there. That is
// why the kubelet serves the names from its name server (kubelet/dns-server.ts) when it can, and
// then keeps only the machine's lines here.
import { closeSync, ftruncateSync, openSync, readFileSync, writeSync } from 'node:fs';

export const MANAGED_BEGIN = '# --- etcdfn sandbox: managed below, rewritten in place ---';

/** One hosts line: an address and the names that resolve to it. */
export interface HostsEntry {
  ip: string;
  names: string[];
}

/** The machine's lines of a hosts file, without a managed section left by an earlier sandbox. */
export function baseLines(content: string): string {
  const at = content.indexOf(MANAGED_BEGIN);
  const base = at >= 0 ? content.slice(0, at) : content;
  return base.endsWith('\n') || base === '' ? base : `${base}\n`;
}

/** Renders base lines plus the managed entries, one line per address, names in a stable order. */
export function renderHosts(base: string, entries: HostsEntry[]): string {
  const byIp = new Map<string, Set<string>>();
  for (const { ip, names } of entries) {
    const set = byIp.get(ip) ?? new Set<string>();
    for (const name of names) set.add(name.toLowerCase());
    byIp.set(ip, set);
  }
  const lines = [...byIp.entries()]
    .filter(([, names]) => names.size > 0)
    .sort(([a], [b]) => compareIps(a, b))
    .map(([ip, names]) => `${ip}\t${[...names].sort().join(' ')}`);
  return `${baseLines(base)}${MANAGED_BEGIN}\n${lines.join('\n')}${lines.length ? '\n' : ''}`;
}

function compareIps(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 4; i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return a.localeCompare(b);
}

/** Replaces a file's content keeping its inode: write from offset 0, then cut what is left over. */
export function writeInPlace(path: string, content: string): void {
  const fd = openSync(path, 'r+');
  try {
    const data = Buffer.from(content);
    let off = 0;
    while (off < data.length) off += writeSync(fd, data, off, data.length - off, off);
    ftruncateSync(fd, data.length);
  } finally {
    closeSync(fd);
  }
}

/** A sandbox-owned hosts file, kept in sync with a list of entries. */
export class HostsFile {
  private readonly base: string;
  private current = '';

  /**
   * @param path   the file to maintain (created with the base lines now)
   * @param source where the machine's lines come from (read once, before any bind mount)
   */
  readonly path: string;
  constructor(path: string, source = '/etc/hosts') {
    this.path = path;
    let original = '127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n';
    try {
      original = readFileSync(source, 'utf8');
    } catch {
      // no /etc/hosts: keep the minimal default
    }
    this.base = baseLines(original);
    this.current = renderHosts(this.base, []);
    // 'w' creates or truncates the file in place (the same inode if it already exists).
    const fd = openSync(path, 'w');
    closeSync(fd);
    writeInPlace(path, this.current);
  }

  /** Rewrites the managed section; returns true when the content changed. */
  set(entries: HostsEntry[]): boolean {
    const next = renderHosts(this.base, entries);
    if (next === this.current) return false;
    writeInPlace(this.path, next);
    this.current = next;
    return true;
  }

  get content(): string {
    return this.current;
  }
}
