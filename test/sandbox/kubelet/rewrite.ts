// Rewriting of a container's command line and environment for a process that runs on the host.
//
// 1. Paths. A container sees its volumes at their mountPath (e.g. /var/lib/etcd); the sandbox
//    process sees the host directory backing the volume. Every occurrence of a mountPath in an
//    argument or env value — at the start, after `=`, `:`, `,`, `;`, whitespace, a quote or `(`,
//    and followed by the end, `/` or one of those separators — is replaced by the host directory
//    (longest mountPath first, in one pass, so a replacement is never rewritten again). That is
//    what lets unmodified flags like `--data-dir=/var/lib/etcd` or `--data-dir /var/lib/etcd/data`,
//    and scripts in `sh -c "..."`, work. Paths that are not under a mount are left alone (they
//    then name host paths). The container's terminationMessagePath is mapped the same way.
//
// 2. Addresses. All Pods share the host's network namespace, each with its own loopback IP, so
//    "every interface" and "this Pod's loopback" must both mean the Pod's IP: `0.0.0.0`, `[::]`,
//    `127.0.0.1`, `localhost` and `[::1]` as a URL/host:port host, and a bare `:port`, become the
//    Pod IP (e.g. `--listen-client-urls=http://0.0.0.0:2379` → `http://127.66.0.2:2379`).
//    Addresses listed in `keep` (the API server's host:port) are never rewritten.

export interface PathMapping {
  /** the path inside the container (a mountPath, or a subPath mount's path) */
  containerPath: string;
  /** the host path the process uses instead */
  hostPath: string;
}

const BEFORE = `(^|[\\s=:,;'"(])`;
const AFTER = `(?=$|[/\\s=:,;'")])`;

function escapeRegExp(s: string): string {
  return s.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function normalize(path: string): string {
  return path.length > 1 ? path.replace(/\/+$/, '') : path;
}

/** Builds a function that rewrites container paths to host paths in a string. */
export function pathRewriter(mappings: PathMapping[]): (value: string) => string {
  const usable = mappings
    .map(m => ({ containerPath: normalize(m.containerPath), hostPath: normalize(m.hostPath) }))
    .filter(m => m.containerPath.startsWith('/') && m.containerPath !== '/')
    .sort((a, b) => b.containerPath.length - a.containerPath.length);
  if (usable.length === 0) return v => v;
  const byPath = new Map(usable.map(m => [m.containerPath, m.hostPath]));
  const alternatives = usable.map(m => escapeRegExp(m.containerPath)).join('|');
  const re = new RegExp(`${BEFORE}(${alternatives})${AFTER}`, 'g');
  return value =>
    value.replace(re, (_all, before: string, path: string) => before + (byPath.get(path) ?? path));
}

/** Builds a function that points wildcard and loopback addresses at the Pod's IP. */
export function addressRewriter(podIP: string, keep: string[] = []): (value: string) => string {
  const hosts = `0\\.0\\.0\\.0|127\\.0\\.0\\.1|localhost|\\[::\\]|\\[::1\\]`;
  const hostRe = new RegExp(`(^|[\\s=,;'"(@]|//)(${hosts})(?=$|[:/\\s,;'")])`, 'g');
  const barePortRe = /(^|=|\/\/)(:\d+)(?=$|[/\s,;])/g;
  const keepRe = keep.length ? new RegExp(keep.map(escapeRegExp).join('|'), 'g') : undefined;
  return value => {
    // Protect kept addresses with placeholders that the patterns cannot match.
    const kept: string[] = [];
    let v = keepRe ? value.replace(keepRe, m => `\uE000${kept.push(m) - 1}\uE001`) : value;
    v = v.replace(hostRe, (_all, before: string) => `${before}${podIP}`);
    v = v.replace(barePortRe, (_all, before: string, port: string) => `${before}${podIP}${port}`);
    return kept.length ? v.replace(/\uE000(\d+)\uE001/g, (_m, i: string) => kept[Number(i)]) : v;
  };
}

/** Both rewrites, paths first. */
export function valueRewriter(
  mappings: PathMapping[],
  podIP: string,
  keep: string[] = [],
): (value: string) => string {
  const paths = pathRewriter(mappings);
  const addresses = addressRewriter(podIP, keep);
  return value => addresses(paths(value));
}
