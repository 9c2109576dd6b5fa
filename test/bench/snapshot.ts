// Snapshot throughput and the copying process's peak memory, for etcd databases of about 50 MB and
// 200 MB (issue 13): both copy paths, each run in a fresh process (test/bench/snapshot-copy.ts) so
// that its peak RSS (ru_maxrss) is the copy's — S3: etcd → multipart upload to s3rver → read back and
// verified, as run-snapshot does; PVC: etcd → file → read back and verified, as the Job's agent does.
// Rounds interleave sizes and paths, so load on the shared machine falls on all alike. The RSS
// includes the tsx loader the child starts with (the same for both sizes). Aim: RSS flat (200 MB ≤
// 1.2 × 50 MB).
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { Etcd3 } from 'etcd3';
import { EtcdTestCluster } from '../support/etcd-process.ts';
import { startS3rver } from '../support/s3rver.ts';

const root = resolve(import.meta.dirname, '..', '..');
const CHILD = join(root, 'test', 'bench', 'snapshot-copy.ts');
const BUCKET = 'bench';
const MB = 1_000_000;

interface Sample {
  bytes: number;
  seconds: number;
  maxRssMiB: number;
}

function copy(args: string[]): Promise<Sample> {
  return new Promise((ok, fail) => {
    const child = spawn(process.execPath, ['--import', 'tsx', CHILD, ...args], {
      cwd: root,
      stdio: ['ignore', 'pipe', 'pipe'],
      env: { ...process.env, LOG_LEVEL: 'warn', NODE_OPTIONS: '' },
    });
    let out = '';
    let err = '';
    child.stdout.on('data', (d: Buffer) => (out += d.toString()));
    child.stderr.on('data', (d: Buffer) => (err += d.toString()));
    child.once('exit', code => {
      const line = out.trim().split('\n').pop() ?? '';
      if (code === 0 && line.startsWith('{')) ok(JSON.parse(line) as Sample);
      else fail(new Error(`snapshot copy exited ${code}: ${err.slice(-600)}`));
    });
  });
}

/** Writes 1 MB values until etcd's backend is at least `bytes` big. */
async function fillTo(client: Etcd3, bytes: number, from: number): Promise<number> {
  let n = from;
  const value = Buffer.alloc(MB, 'x');
  for (;;) {
    const status = await client.maintenance.status();
    if (Number(status.dbSize) >= bytes) return n;
    await Promise.all(Array.from({ length: 8 }, () => client.put(`bench/${n++}`).value(value).exec()));
  }
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

export async function benchSnapshot(opts: { runs?: number } = {}): Promise<Record<string, unknown>[]> {
  const runs = opts.runs ?? 5;
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-bench-snapshot-'));
  const etcd = await EtcdTestCluster.start({ minor: '3.5', size: 1 });
  const s3 = await startS3rver([BUCKET]);
  const client = new Etcd3({ hosts: etcd.endpoints });
  const rows: Record<string, unknown>[] = [];
  const rss: Record<string, number> = {};
  try {
    let written = 0;
    for (const target of [50, 200]) {
      written = await fillTo(client, target * MB, written);
      const samples: Record<'s3' | 'pvc', Sample[]> = { s3: [], pvc: [] };
      for (let round = 0; round < runs; round++) {
        console.error(`[snapshot] ${target} MB, round ${round + 1}/${runs}`);
        samples.s3.push(
          await copy(['s3', etcd.endpoints[0] ?? '', s3.endpoint, BUCKET, `${target}/${round}.db`]),
        );
        const out = join(dir, `${target}-${round}`);
        samples.pvc.push(await copy(['pvc', etcd.endpoints[0] ?? '', out]));
        rmSync(out, { recursive: true, force: true });
      }
      for (const path of ['s3', 'pvc'] as const) {
        const s = samples[path];
        const mbps = s.map(x => x.bytes / MB / x.seconds);
        const mem = s.map(x => x.maxRssMiB);
        rss[`${path}-${target}`] = median(mem);
        rows.push({
          database: `${(median(s.map(x => x.bytes)) / MB).toFixed(0)} MB (aim ${target})`,
          path: path === 's3' ? 'S3 (upload + read-back)' : 'PVC (file + read-back)',
          runs,
          'MB/s median': median(mbps),
          'MB/s min': Math.min(...mbps),
          'MB/s max': Math.max(...mbps),
          'peak RSS MiB median': median(mem),
          'RSS min': Math.min(...mem),
          'RSS max': Math.max(...mem),
        });
      }
    }
    for (const path of ['s3', 'pvc'] as const) {
      const ratio = (rss[`${path}-200`] ?? 0) / (rss[`${path}-50`] ?? 1);
      rows.push({
        database: 'RSS 200 MB / 50 MB',
        path: path === 's3' ? 'S3 (upload + read-back)' : 'PVC (file + read-back)',
        'peak RSS MiB median': ratio,
        'RSS min': ratio <= 1.2 ? 'flat (≤ 1.2×)' : 'NOT flat (> 1.2×)',
      });
    }
  } finally {
    client.close();
    await s3.stop();
    await etcd.cleanup();
    rmSync(dir, { recursive: true, force: true });
  }
  return rows;
}
