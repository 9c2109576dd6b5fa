// Restore throughput and the fetching step's memory, for real etcd 3.5 snapshots of about 50 MB and
// 200 MB in s3rver on loopback. Each round runs, as a restoring seed's init containers do:
//   1. `etcdfn-agent restore-fetch` from the built output (dist/agent/main.js, as in the image):
//      streams the object into the data directory while checking SHA-256, etcd's own integrity hash
//      and the release that wrote it; its peak RSS is the kernel's (GNU time's maximum resident set);
//   2. `etcdutl snapshot restore` (etcd's own tool);
//   3. `etcdfn-agent restore-commit`.
// Throughput = snapshot size / time of the step(s). Rounds interleave the sizes, so load on the
// machine falls on both alike. Aim (issue 12): the fetch's peak RSS flat, ≤ 1.2× between the sizes.
import { execFile, execFileSync, spawnSync } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { createReadStream, existsSync, mkdtempSync, readFileSync, rmSync, statSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import { restorePaths } from '../../shared/restore/layout.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';
import { S3RVER_CREDENTIALS, startS3rver } from '../support/s3rver.ts';

const root = resolve(import.meta.dirname, '..', '..');
const AGENT = join(root, 'dist', 'agent', 'main.js');
const BUCKET = 'bench';
const MiB = 1024 * 1024;
const VALUE = 1000 * 1024; // under etcd's 1.5 MiB request limit

interface Round {
  fetchSeconds: number;
  fetchPeakRssMiB: number;
  restoreSeconds: number;
}

const median = (xs: number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? (s[mid] ?? 0) : ((s[mid - 1] ?? 0) + (s[mid] ?? 0)) / 2;
};

function run(cmd: string, args: string[], env: NodeJS.ProcessEnv = process.env): Promise<string> {
  return new Promise((ok, fail) =>
    execFile(cmd, args, { env, maxBuffer: 16 * MiB }, (err, stdout, stderr) =>
      err ? fail(new Error(`${cmd} ${args[0] ?? ''}: ${stderr || err.message}`)) : ok(stdout + stderr),
    ),
  );
}

/** A real etcd 3.5 on loopback whose database grows to `sizes` MB in turn; a snapshot saved at each. */
async function makeSnapshots(dir: string, sizes: number[]): Promise<Map<number, string>> {
  const bins = etcdBinaries('3.5');
  const url = 'http://127.0.0.77:23790';
  const etcd = execFile(bins.etcd, [
    `--data-dir=${join(dir, 'etcd')}`,
    `--listen-client-urls=${url}`,
    `--advertise-client-urls=${url}`,
    '--listen-peer-urls=http://127.0.0.77:23800',
    '--initial-advertise-peer-urls=http://127.0.0.77:23800',
    '--initial-cluster=default=http://127.0.0.77:23800',
    '--quota-backend-bytes=4294967296',
    '--log-level=error',
  ]);
  const files = new Map<number, string>();
  const client = new Etcd3({ hosts: url });
  try {
    for (let i = 0; ; i++) {
      try {
        await client.maintenance.status();
        break;
      } catch (err) {
        if (i > 100) throw err;
        await new Promise(r => setTimeout(r, 100));
      }
    }
    let written = 0;
    for (const size of [...sizes].sort((a, b) => a - b)) {
      // Until etcd's own database file is that size (it holds more than the values: keys, index).
      while (Number((await client.maintenance.status()).dbSize) < size * 1_000_000) {
        for (let i = 0; i < 5; i++, written++) await client.put(`bench/${written}`).value(randomBytes(VALUE));
      }
      const file = join(dir, `snapshot-${size}.db`);
      execFileSync(bins.etcdctl, [`--endpoints=${url}`, 'snapshot', 'save', file], {
        env: { ...process.env, ETCDCTL_API: '3' },
        stdio: 'ignore',
      });
      files.set(size, file);
    }
  } finally {
    client.close();
    etcd.kill('SIGKILL');
  }
  return files;
}

async function sha256Of(file: string): Promise<string> {
  const hash = createHash('sha256');
  for await (const chunk of createReadStream(file)) hash.update(chunk as Buffer);
  return hash.digest('hex');
}

/** One restore as the seed's init containers run it, in a fresh data directory. */
async function round(endpoint: string, key: string, sha256: string, work: string): Promise<Round> {
  const dataDir = mkdtempSync(join(work, 'data-'));
  const paths = restorePaths(dataDir);
  const env = {
    ...process.env,
    AWS_ACCESS_KEY_ID: S3RVER_CREDENTIALS.accessKeyId,
    AWS_SECRET_ACCESS_KEY: S3RVER_CREDENTIALS.secretAccessKey,
    ETCDFN_S3_ALLOWED_ENDPOINTS: endpoint,
    NODE_OPTIONS: '',
  };
  try {
    const rssFile = join(work, 'rss');
    const t0 = performance.now();
    await run(
      '/usr/bin/time',
      [
        '-f',
        '%M',
        '-o',
        rssFile,
        process.execPath,
        AGENT,
        'restore-fetch',
        `--data-dir=${dataDir}`,
        '--etcd-version=3.5.16',
        `--termination-log=${join(work, 'termination-log')}`,
        `--sha256=${sha256}`,
        `--s3-endpoint=${endpoint}`,
        `--s3-bucket=${BUCKET}`,
        `--s3-key=${key}`,
        '--s3-path-style=true',
        '--s3-secret=bench',
      ],
      env,
    );
    const t1 = performance.now();
    const bins = etcdBinaries('3.5');
    await run(bins.etcdutl ?? '', [
      'snapshot',
      'restore',
      paths.snapshotFile,
      `--data-dir=${paths.restoredDir}`,
      '--name=bench-0',
      '--initial-cluster=bench-0=http://127.0.0.1:2380',
      '--initial-cluster-token=bench',
      '--initial-advertise-peer-urls=http://127.0.0.1:2380',
    ]);
    await run(
      process.execPath,
      [AGENT, 'restore-commit', `--data-dir=${dataDir}`, '--source-name=bench'],
      env,
    );
    const t2 = performance.now();
    if (!existsSync(paths.marker)) throw new Error('the restore did not complete (no marker)');
    const kib = Number(readFileSync(rssFile, 'utf8').trim().split('\n').pop());
    return { fetchSeconds: (t1 - t0) / 1000, fetchPeakRssMiB: kib / 1024, restoreSeconds: (t2 - t0) / 1000 };
  } finally {
    rmSync(dataDir, { recursive: true, force: true });
  }
}

export async function benchRestore(
  opts: { runs?: number; sizes?: number[] } = {},
): Promise<Record<string, unknown>[]> {
  const runs = opts.runs ?? 5;
  const sizes = opts.sizes ?? [50, 200];
  if (!existsSync(AGENT)) {
    console.error('[restore] dist/ missing: npm run build');
    const built = spawnSync(process.execPath, [join(root, 'scripts', 'build.ts')], { stdio: 'inherit' });
    if (built.status !== 0) throw new Error('npm run build failed');
  }
  const work = mkdtempSync(join(tmpdir(), 'etcdfn-bench-restore-'));
  const s3 = await startS3rver([BUCKET]);
  try {
    console.error(`[restore] writing ${sizes.join(' and ')} MB into etcd 3.5 and saving snapshots…`);
    const files = await makeSnapshots(work, sizes);
    const objects = new Map<number, { key: string; sha256: string; mb: number }>();
    for (const [size, file] of files) {
      const key = `snapshots/${size}.db`;
      await s3.client.send(
        new PutObjectCommand({
          Bucket: BUCKET,
          Key: key,
          Body: createReadStream(file),
          ContentLength: statSync(file).size,
        }),
      );
      objects.set(size, { key, sha256: await sha256Of(file), mb: statSync(file).size / 1_000_000 });
      rmSync(file);
    }
    const results = new Map<number, Round[]>(sizes.map(s => [s, []]));
    for (let r = 0; r < runs; r++) {
      for (const size of sizes) {
        const o = objects.get(size)!;
        console.error(`[restore] round ${r + 1}/${runs}, ${size} MB`);
        results.get(size)!.push(await round(s3.endpoint, o.key, o.sha256, work));
      }
    }
    const rows: Record<string, unknown>[] = [];
    const stat = (xs: number[]) => ({ median: median(xs), min: Math.min(...xs), max: Math.max(...xs) });
    for (const size of sizes) {
      const o = objects.get(size)!;
      const rounds = results.get(size)!;
      const figures: [string, number[], string][] = [
        ['fetch throughput', rounds.map(x => o.mb / x.fetchSeconds), 'MB/s'],
        [
          'whole restore throughput (fetch + etcdutl + commit)',
          rounds.map(x => o.mb / x.restoreSeconds),
          'MB/s',
        ],
        ['fetch peak RSS', rounds.map(x => x.fetchPeakRssMiB), 'MiB'],
      ];
      for (const [what, xs, unit] of figures)
        rows.push({ snapshot: `${o.mb.toFixed(1)} MB`, figure: what, unit, ...stat(xs), rounds: xs.length });
    }
    if (sizes.length === 2) {
      const [small, large] = sizes.map(s => median(results.get(s)!.map(x => x.fetchPeakRssMiB)));
      rows.push({
        snapshot: `${sizes[1]} vs ${sizes[0]}`,
        figure: 'fetch peak RSS ratio of medians (aim ≤ 1.2)',
        unit: '×',
        median: (large ?? 0) / (small ?? 1),
      });
    }
    return rows;
  } finally {
    await s3.stop();
    rmSync(work, { recursive: true, force: true });
  }
}
