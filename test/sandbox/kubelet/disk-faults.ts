// Disk faults for a claim's directory, as a real volume fails: it fills up (a tmpfs of the given
// size is mounted over the directory, holding a copy of what was there, so writes past the size
// fail with ENOSPC), or the file system is remounted read-only after errors (a read-only bind
// mount over the directory: writes fail with EROFS). `release` undoes either, keeping what the
// small disk held. Needs mount(8) and the right to use it (root); `supported()` says whether the
// machine allows it, so a test can skip rather than fail where it does not.
import { execFileSync } from 'node:child_process';
import { cpSync, mkdtempSync, readdirSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

type Fault = 'full' | 'read-only';

function mount(args: string[]): void {
  execFileSync('mount', args, { stdio: 'pipe' });
}

function umount(dir: string): void {
  execFileSync('umount', [dir], { stdio: 'pipe' });
}

function copyContents(from: string, to: string): void {
  for (const entry of readdirSync(from)) cpSync(join(from, entry), join(to, entry), { recursive: true });
}

export class DiskFaults {
  private readonly active = new Map<string, Fault>();

  /** Whether this machine lets the sandbox mount (tried once on a scratch directory). */
  static supported(): boolean {
    const dir = mkdtempSync(join(tmpdir(), 'disk-fault-probe-'));
    try {
      mount(['-t', 'tmpfs', '-o', 'size=64k', 'tmpfs', dir]);
      umount(dir);
      return true;
    } catch {
      return false;
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /** The directory becomes a disk of `bytes` bytes holding what it held. */
  fill(dir: string, bytes: number): void {
    this.release(dir);
    const keep = mkdtempSync(join(tmpdir(), 'disk-fault-'));
    try {
      copyContents(dir, keep);
      mount(['-t', 'tmpfs', '-o', `size=${Math.max(4096, Math.floor(bytes))},mode=0777`, 'tmpfs', dir]);
      this.active.set(dir, 'full');
      copyContents(keep, dir);
    } finally {
      rmSync(keep, { recursive: true, force: true });
    }
  }

  /** The directory's file system turns read-only. */
  readOnly(dir: string): void {
    this.release(dir);
    mount(['--bind', dir, dir]);
    this.active.set(dir, 'read-only');
    mount(['-o', 'remount,bind,ro', dir]);
  }

  /** Undoes the fault on `dir`; what a small disk held is copied back. Nothing to undo: no-op. */
  release(dir: string): void {
    const fault = this.active.get(dir);
    if (!fault) return;
    this.active.delete(dir);
    if (fault === 'read-only') {
      umount(dir);
      return;
    }
    const keep = mkdtempSync(join(tmpdir(), 'disk-fault-'));
    try {
      copyContents(dir, keep);
      umount(dir);
      for (const entry of readdirSync(dir)) rmSync(join(dir, entry), { recursive: true, force: true });
      copyContents(keep, dir);
    } finally {
      rmSync(keep, { recursive: true, force: true });
    }
  }

  releaseAll(): void {
    for (const dir of [...this.active.keys()]) {
      try {
        this.release(dir);
      } catch {
        // best effort on the way out: a busy mount is lazily detached
        try {
          execFileSync('umount', ['-l', dir], { stdio: 'ignore' });
        } catch {
          // gone already
        }
      }
    }
  }
}
