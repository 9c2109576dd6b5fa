// A private mount namespace for the sandbox, so that it can give every process its own /etc/hosts
// (Pod and Service DNS names) without touching the machine's file.
//
// How it works:
//   1. `ensurePrivateMountNamespace()` re-executes the current node command under
//      `unshare --mount --propagation private` (as root) or `unshare --mount --map-root-user` (as a
//      normal user: needs unprivileged user namespaces, i.e. kernel.unprivileged_userns_clone=1 /
//      user.max_user_namespaces > 0, the default on Debian 11+ and most distributions). `unshare`
//      execs the program in place (no fork), so the re-executed node has the PID `spawn` returned.
//      The outer process forwards SIGINT/SIGTERM/SIGHUP and exits with the child's code.
//   2. Inside, `bindHostsFile(path)` bind-mounts a sandbox-owned file over /etc/hosts. The mount is
//      visible only to this process and its descendants (etcd members, agents, probes), and goes
//      away with the namespace: nothing needs undoing, even after a SIGKILL.
//
// The marker variable holds the mount namespace of the process that re-executed, so a process
// that merely inherited the variable (but not a new namespace) is never allowed to bind-mount.
import { execFile, spawn } from 'node:child_process';
import { readFileSync, readlinkSync } from 'node:fs';
import { promisify } from 'node:util';

const execFileAsync = promisify(execFile);

/** Environment variable set on processes started inside the sandbox's mount namespace. */
export const NAMESPACE_MARKER = 'ETCDFN_SANDBOX_MNTNS';

/** The current process's mount namespace, e.g. "mnt:[4026531841]" (undefined if /proc hides it). */
export function currentMountNamespace(): string | undefined {
  try {
    return readlinkSync('/proc/self/ns/mnt');
  } catch {
    return undefined;
  }
}

/** True when this process runs in a mount namespace created by `ensurePrivateMountNamespace`. */
export function insidePrivateMountNamespace(): boolean {
  const outer = process.env[NAMESPACE_MARKER];
  if (!outer) return false;
  const mine = currentMountNamespace();
  // Without /proc we cannot compare; trust the marker only if it says so explicitly.
  return mine === undefined ? outer === 'unknown' : mine !== outer;
}

/** The `unshare` options for the current user: root can create a mount namespace directly. */
export function unshareOptions(): string[] {
  const root = process.getuid?.() === 0;
  return root
    ? ['--mount', '--propagation', 'private']
    : ['--mount', '--map-root-user', '--propagation', 'private'];
}

export interface NamespacedCommand {
  command: string;
  args: string[];
  env: NodeJS.ProcessEnv;
}

/** The command line that runs `argv` inside a fresh private mount namespace (with the marker set). */
export function namespacedCommand(argv: string[], env: NodeJS.ProcessEnv = process.env): NamespacedCommand {
  if (argv.length === 0) throw new Error('namespacedCommand: empty argv');
  return {
    command: 'unshare',
    args: [...unshareOptions(), '--', ...argv],
    env: { ...env, [NAMESPACE_MARKER]: currentMountNamespace() ?? 'unknown' },
  };
}

/** The node command line of the current process (node, its flags such as --import tsx, script, args). */
export function currentNodeArgv(): string[] {
  return [process.execPath, ...process.execArgv, ...process.argv.slice(1)];
}

/**
 * Makes sure the rest of the program runs inside a private mount namespace. Returns at once when
 * already inside; otherwise re-executes `argv` (default: this very node command) under unshare,
 * waits for it and exits this process with its exit code, so the returned promise never settles.
 */
export async function ensurePrivateMountNamespace(argv: string[] = currentNodeArgv()): Promise<void> {
  if (insidePrivateMountNamespace()) return;
  const { command, args, env } = namespacedCommand(argv);
  const child = spawn(command, args, { env, stdio: 'inherit' });
  const forward = (signal: NodeJS.Signals): void => {
    child.kill(signal);
  };
  for (const signal of ['SIGINT', 'SIGTERM', 'SIGHUP'] as const) process.on(signal, forward);
  child.on('error', err => {
    process.stderr.write(`cannot start unshare (util-linux): ${err.message}\n`);
    process.exit(127);
  });
  child.on('exit', (code, signal) => process.exit(code ?? (signal ? 128 + signalNumber(signal) : 1)));
  await new Promise<never>(() => undefined);
}

function signalNumber(signal: NodeJS.Signals): number {
  const numbers: Partial<Record<NodeJS.Signals, number>> = { SIGHUP: 1, SIGINT: 2, SIGKILL: 9, SIGTERM: 15 };
  return numbers[signal] ?? 1;
}

/**
 * Bind-mounts `path` over /etc/hosts. Refuses to run outside a private mount namespace, since the
 * mount would otherwise change name resolution for the whole machine. Rewrite `path` in place
 * afterwards (see hosts.ts): replacing it with a new file (rename) would leave the old inode mounted.
 */
export async function bindHostsFile(path: string, target = '/etc/hosts'): Promise<void> {
  if (!insidePrivateMountNamespace()) {
    throw new Error(
      `refusing to bind-mount ${path} over ${target}: not inside the sandbox's private mount namespace ` +
        '(call ensurePrivateMountNamespace() first, or start the process with namespacedCommand())',
    );
  }
  try {
    await execFileAsync('mount', ['--bind', path, target]);
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`mount --bind ${path} ${target} failed: ${stderr.trim() || (err as Error).message}`, {
      cause: err,
    });
  }
  if (readFileSync(target, 'utf8') !== readFileSync(path, 'utf8')) {
    throw new Error(`after mount --bind, ${target} does not show the content of ${path}`);
  }
}

/**
 * Undoes `bindHostsFile` on `target` (the file under it shows again). A sandbox that stops must do
 * this before its directory is deleted: a bind mount whose source file was deleted cannot be
 * mounted over (mount(2) answers ENOENT), so the next sandbox in the same process could not bind
 * its own hosts file, and would copy the stale one's names besides.
 */
export async function unbindFile(target: string): Promise<void> {
  if (!insidePrivateMountNamespace()) return;
  try {
    await execFileAsync('umount', [target]);
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr ?? '';
    throw new Error(`umount ${target} failed: ${stderr.trim() || (err as Error).message}`, { cause: err });
  }
}
