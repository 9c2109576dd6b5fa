// The restore's commit step (the agent, in the member Pod's last restore init container): moves the
// database etcd's restore wrote into place and writes the marker, last. Until the marker exists
// the main container never ran, so a crash anywhere here is repaired by running the steps again.
import { existsSync } from 'node:fs';
import { open, rename, rm, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { RestoreFailure } from './layout.ts';
import type { FetchPaths } from './fetch.ts';

export interface CommitPaths extends FetchPaths {
  /** where the restore step wrote etcd's data (it holds member/) */
  restoredDir: string;
}

export type CommitResult = { kind: 'already-restored' } | { kind: 'committed' };

export async function commitRestore(
  paths: CommitPaths,
  record: Record<string, unknown>,
): Promise<CommitResult> {
  if (existsSync(paths.marker)) {
    await rm(paths.workDir, { recursive: true, force: true });
    return { kind: 'already-restored' };
  }
  if (existsSync(paths.skipFile)) {
    // The fetch step saw the marker, which is gone now: something removed it mid-way. Never guess.
    throw new RestoreFailure(
      'RestoreFailed',
      'the restore marker vanished between the fetch and commit steps; delete the Pod to start over',
    );
  }
  const restored = join(paths.restoredDir, 'member');
  if (!existsSync(join(restored, 'snap', 'db'))) {
    throw new RestoreFailure('RestoreFailed', `etcd's restore left no database in ${restored}`);
  }
  const target = join(paths.dataDir, 'member');
  await rm(target, { recursive: true, force: true });
  await rename(restored, target);
  await syncDir(paths.dataDir);
  const marker = `${paths.marker}.partial`;
  await writeFile(marker, `${JSON.stringify({ ...record, restoredAt: new Date().toISOString() })}\n`);
  await syncFile(marker);
  await rename(marker, paths.marker);
  await syncDir(paths.dataDir);
  await rm(paths.workDir, { recursive: true, force: true });
  return { kind: 'committed' };
}

async function syncFile(path: string): Promise<void> {
  const handle = await open(path, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

async function syncDir(path: string): Promise<void> {
  try {
    await syncFile(path);
  } catch {
    // some filesystems refuse fsync on a directory; the rename is still ordered by the journal
  }
}
