// Cold start and memory of each function from the built output (dist/, `npm run build`; built here
// when missing): from process start to the first event answered (the PingSource tick, answered 200
// against a real API server), and the resident set size right after that answer. Measured in the
// same run: `node -e "import('@kubernetes/client-node')"`, the floor any function that talks to
// Kubernetes starts from. Runs are interleaved across programs so that load on the machine falls on
// all of them alike. Aims (issue 15): cold start ≤ 0.6 s, RSS ≤ 1.3 × the baseline's.
import { spawn, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { FUNCTION_NAMES } from '../../functions/registry.ts';
import { startApiServer } from '../support/api-server.ts';
import { loadEventFixture, wireBody } from '../support/fixtures.ts';

const root = resolve(import.meta.dirname, '..', '..');
const SERVE = join(root, 'dist', 'functions', 'serve.js');
const BASELINE = "import('@kubernetes/client-node').then(() => console.log(process.memoryUsage().rss))";

interface Sample {
  seconds: number;
  rssMiB: number;
}

async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>(ok => server.listen(0, '127.0.0.1', ok));
  const { port } = server.address() as { port: number };
  await new Promise(ok => server.close(ok));
  return port;
}

function rssMiB(pid: number): number {
  const kib = /VmRSS:\s+(\d+)/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'))?.[1];
  return Number(kib) / 1024;
}

/** One function: spawn → serving line → tick POSTed → answer; RSS read after the answer. */
async function functionSample(name: string, kubeconfig: string): Promise<Sample> {
  const tick = loadEventFixture('tick.json');
  const port = await freePort();
  const started = performance.now();
  const child = spawn(process.execPath, [SERVE, name, '--port', String(port)], {
    cwd: tmpdir(),
    stdio: ['ignore', 'pipe', 'pipe'],
    env: { ...process.env, KUBECONFIG: kubeconfig, LOG_LEVEL: 'warn', NODE_OPTIONS: '' },
  });
  try {
    const url = await new Promise<string>((ok, fail) => {
      let out = '';
      let err = '';
      child.stdout.on('data', (d: Buffer) => {
        out += d.toString();
        const found = /"url":"([^"]+)"/.exec(out)?.[1];
        if (found) ok(found);
      });
      child.stderr.on('data', (d: Buffer) => (err += d.toString()));
      child.once('exit', code => fail(new Error(`${name} exited ${code}: ${err.slice(-500)}`)));
    });
    const res = await fetch(url, { method: 'POST', headers: tick.headers, body: wireBody(tick) });
    await res.text();
    const seconds = (performance.now() - started) / 1000;
    if (res.status !== 200) throw new Error(`${name} answered the tick ${res.status}`);
    return { seconds, rssMiB: rssMiB(child.pid!) };
  } finally {
    const exited = new Promise(ok => child.once('exit', ok));
    if (child.exitCode === null) child.kill('SIGTERM');
    await exited;
  }
}

/** The baseline: node importing client-node, start to exit; it prints its own RSS at the end. */
async function baselineSample(): Promise<Sample> {
  const started = performance.now();
  const child = spawn(process.execPath, ['-e', BASELINE], {
    cwd: root,
    stdio: ['ignore', 'pipe', 'inherit'],
    env: { ...process.env, NODE_OPTIONS: '' },
  });
  let out = '';
  child.stdout.on('data', (d: Buffer) => (out += d.toString()));
  const code = await new Promise(ok => child.once('exit', ok));
  const seconds = (performance.now() - started) / 1000;
  if (code !== 0) throw new Error(`baseline exited ${String(code)}`);
  return { seconds, rssMiB: Number(out.trim()) / 1024 / 1024 };
}

const median = (xs: number[]) => {
  const s = [...xs].sort((a, b) => a - b);
  const mid = Math.floor(s.length / 2);
  return s.length % 2 ? s[mid] : (s[mid - 1] + s[mid]) / 2;
};

export interface ColdStartRow {
  program: string;
  'start→answer median s': number;
  'min s': number;
  'max s': number;
  'RSS median MiB': number;
  'RSS min': number;
  'RSS max': number;
  'RSS × baseline': number | string;
  'aims met': string;
}

export async function benchColdStart(options: { runs?: number } = {}): Promise<ColdStartRow[]> {
  // An explicit count (the quick mode's) wins; otherwise at least 5.
  const runs = options.runs ?? Math.max(5, Number(process.env.BENCH_COLD_RUNS ?? 5));
  if (!existsSync(SERVE)) {
    console.error('[cold-start] dist/ missing: npm run build');
    const built = spawnSync(process.execPath, [join(root, 'scripts', 'build.ts')], { stdio: 'inherit' });
    if (built.status !== 0) throw new Error('npm run build failed');
  }
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-cold-'));
  const api = await startApiServer();
  const kubeconfig = join(dir, 'kubeconfig');
  api.writeKubeconfig(kubeconfig);
  const programs = ['baseline', ...FUNCTION_NAMES];
  const samples = new Map<string, Sample[]>(programs.map(p => [p, []]));
  try {
    for (let round = 0; round < runs; round++) {
      console.error(`[cold-start] round ${round + 1}/${runs}`);
      for (const p of programs) {
        samples.get(p)!.push(p === 'baseline' ? await baselineSample() : await functionSample(p, kubeconfig));
      }
    }
  } finally {
    await api.close();
    rmSync(dir, { recursive: true, force: true });
  }
  const baseRss = median(samples.get('baseline')!.map(s => s.rssMiB));
  return programs.map(p => {
    const s = samples.get(p)!;
    const secs = s.map(x => x.seconds);
    const rss = s.map(x => x.rssMiB);
    const ratio = median(rss) / baseRss;
    const isBaseline = p === 'baseline';
    return {
      program: isBaseline ? `node -e "import('@kubernetes/client-node')" (start→exit)` : `dist: ${p}`,
      'start→answer median s': median(secs),
      'min s': Math.min(...secs),
      'max s': Math.max(...secs),
      'RSS median MiB': median(rss),
      'RSS min': Math.min(...rss),
      'RSS max': Math.max(...rss),
      'RSS × baseline': isBaseline ? '' : ratio,
      'aims met': isBaseline
        ? ''
        : `${median(secs) <= 0.6 ? 'yes' : 'no'} (≤ 0.6 s), ${ratio <= 1.3 ? 'yes' : 'no'} (≤ 1.3×)`,
    };
  });
}
