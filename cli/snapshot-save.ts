// `kubectl etcdfn snapshot save <cluster> <file>`: streams a snapshot from a member straight to a
// local file, with progress on stderr, then checks it as etcd does: the integrity hash at its end,
// and the key count and revision `etcdutl snapshot status` would report. No store, no credentials,
// no EtcdSnapshot: for the hard days, when you want a copy in your hands. An existing file is never
// overwritten; the bytes go to <file>.partial and are renamed only once checked.
import { createWriteStream } from 'node:fs';
import { link, rm, stat } from 'node:fs/promises';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { snapshot } from '../shared/etcd/snapshot.ts';
import { SnapshotDigest } from '../shared/snapshot-file/verify.ts';
import { bboltStatus } from '../shared/snapshot-file/bbolt-status.ts';
import { CliError, getCluster, type Cli } from './context.ts';
import { memberEndpoints } from './endpoints.ts';
import { formatBytes, structuredOutput } from './format.ts';

export interface SnapshotSaveOptions {
  /** Stream from this member (default: each in name order until one serves). */
  member?: string;
  output?: string;
}

export interface SavedFile {
  file: string;
  member: string;
  sizeBytes: number;
  sha256: string;
  /** The member's revision when streaming began. */
  revision: number;
  /** What etcdutl snapshot status reports for the file. */
  totalKey: number;
  dbRevision: number;
}

const errno = (err: unknown): string | undefined => (err as NodeJS.ErrnoException | undefined)?.code;

/** A progress line at most once a second while bytes flow. */
function progress(say: (line: string) => void): Transform & { bytes: () => number } {
  let bytes = 0;
  let last = Date.now();
  const started = last;
  const t = new Transform({
    transform(chunk: Buffer, _enc, done) {
      bytes += chunk.length;
      const now = Date.now();
      if (now - last >= 1000) {
        last = now;
        const rate = bytes / Math.max(0.001, (now - started) / 1000);
        say(`  ${formatBytes(bytes)} received (${formatBytes(rate)}/s)`);
      }
      done(null, chunk);
    },
  });
  return Object.assign(t, { bytes: () => bytes });
}

export async function runSnapshotSave(
  cli: Cli,
  name: string,
  file: string,
  opts: SnapshotSaveOptions,
  say: (line: string) => void,
): Promise<string> {
  const exists = await stat(file).then(
    () => true,
    (err: unknown) => {
      if (errno(err) === 'ENOENT') return false;
      throw err;
    },
  );
  if (exists) throw new CliError(`${file} exists; it is never overwritten: choose another file name`);
  const cluster = await getCluster(cli, name);
  const reach = await memberEndpoints(cli, cluster);
  let members = reach.members;
  if (opts.member) {
    members = members.filter(m => m.name === opts.member);
    if (members.length === 0) throw new CliError(`no running member "${opts.member}" in ${name}`);
  }
  const failures: string[] = [];
  const partial = `${file}.partial`;
  for (const member of members) {
    const opened = await snapshot(member.endpoint, reach.options);
    if (opened.kind !== 'ok') {
      failures.push(`${member.name}: ${opened.message}`);
      continue;
    }
    say(`streaming a snapshot of ${name} from ${member.name} (revision ${opened.revision}) to ${file}`);
    const digest = new SnapshotDigest();
    const tap = progress(say);
    tap.on('data', (chunk: Buffer) => digest.update(chunk));
    try {
      await pipeline(opened.stream, tap, createWriteStream(partial, { flags: 'wx', mode: 0o600 }));
    } catch (err) {
      await rm(partial, { force: true });
      if (errno(err) === 'EEXIST')
        throw new CliError(`${partial} exists (another save?); remove it and retry`);
      failures.push(
        `${member.name}: the stream broke off: ${err instanceof Error ? err.message : String(err)}`,
      );
      continue;
    }
    const d = digest.digest();
    if (d.integrity !== 'ok') {
      await rm(partial, { force: true });
      throw new CliError(`the snapshot from ${member.name} fails etcd's integrity hash; nothing was saved`);
    }
    const db = await bboltStatus(partial);
    try {
      await link(partial, file);
    } finally {
      await rm(partial, { force: true });
    }
    const saved: SavedFile = {
      file,
      member: member.name,
      sizeBytes: d.sizeBytes,
      sha256: d.sha256,
      revision: opened.revision,
      totalKey: db.totalKey,
      dbRevision: db.revision,
    };
    return (
      structuredOutput(opts.output, saved) ??
      [
        `saved ${file}: ${formatBytes(saved.sizeBytes)} (${saved.sizeBytes} bytes) from ${saved.member}`,
        `  sha256:   ${saved.sha256}`,
        `  keys:     ${saved.totalKey} at revision ${saved.dbRevision} (entries in every bucket, as etcdutl 3.5's snapshot status counts them, and revision)`,
        `  integrity hash: ok`,
      ].join('\n')
    );
  }
  throw new CliError(`no member of ${name} served a snapshot (${failures.join('; ')})`);
}
