// A path the agent is told to read or write must stay inside the volume it mounted. The API server
// already refuses a pvc.subPath with a `..` segment or a leading `/` (crds/, one rule per subPath
// field); the agent checks again where it acts, after resolving the path, so neither an object the
// rule never saw nor a symbolic link on the volume (anyone who can write to the claim can make one)
// takes a read or a write outside the mount.
import { realpath } from 'node:fs/promises';
import { dirname, isAbsolute, relative, resolve, sep } from 'node:path';

/** True when `path` is `mount` or lies under it, by the names alone (no link is followed). */
export function lexicallyInside(mount: string, path: string): boolean {
  const rel = relative(resolve(mount), resolve(mount, path));
  return rel === '' || (!isAbsolute(rel) && rel !== '..' && !rel.startsWith(`..${sep}`));
}

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

/** The real path of `path`'s deepest existing ancestor (itself when it exists), with the rest appended. */
async function realPathOfPrefix(path: string): Promise<string> {
  try {
    return await realpath(path);
  } catch (err) {
    if (errno(err) !== 'ENOENT' && errno(err) !== 'ENOTDIR') throw err;
    const parent = dirname(path);
    if (parent === path) throw err;
    return resolve(await realPathOfPrefix(parent), relative(parent, path));
  }
}

/**
 * The resolved path when `path` lies inside `mount` both by its names and after every symbolic link
 * in its existing part is followed; otherwise a message saying which path leaves which mount.
 */
export async function containedPath(
  mount: string,
  path: string,
): Promise<{ kind: 'inside'; path: string } | { kind: 'outside'; message: string }> {
  const outside = (resolved: string) => ({
    kind: 'outside' as const,
    message: `${path} resolves to ${resolved}, outside the volume mounted at ${mount}: nothing was read or written`,
  });
  const named = resolve(mount, path);
  if (!lexicallyInside(mount, named)) return outside(named);
  const realMount = await realpath(mount);
  const real = await realPathOfPrefix(named);
  if (!lexicallyInside(realMount, real)) return outside(real);
  return { kind: 'inside', path: real };
}
