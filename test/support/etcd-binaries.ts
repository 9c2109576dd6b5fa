// Locates the real etcd releases the tests run against, one per supported minor version.
//
// Lookup order for a minor version M (e.g. '3.6'):
//   1. $ETCD_3_6_BIN (dots become underscores): the etcd binary itself, or the folder holding it;
//      etcdctl and etcdutl are looked up next to it;
//   2. the Go build cache, where `npm run setup` (scripts/build-go.sh) builds 3.5, 3.6 and 3.7 from
//      their Go modules (test/go/etcd-M/go.mod): $ETCDFN_GO_CACHE/etcd-M/, by default
//      ~/.cache/etcdfn/go/etcd-M/;
//   3. .cache/etcd/M/usr/bin/, where `npm run setup` (scripts/install-etcd.sh) unpacks Debian's
//      3.4 (end of life: kept only to test upgrading away from it).
// The version is read from `etcd --version` at run time, never assumed from the folder name.
import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync, statSync } from 'node:fs';
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export type EtcdMinor = '3.4' | '3.5' | '3.6' | '3.7';

/** Every minor the sandbox's kubelet can run images of (3.4 only to upgrade away from it). */
export const LOCAL_ETCD_MINORS: readonly EtcdMinor[] = ['3.4', '3.5', '3.6', '3.7'];

/** Every minor a new cluster can run, oldest first: loop over it to run a suite per version. */
export const ETCD_MINORS: readonly EtcdMinor[] = ['3.5', '3.6', '3.7'];

export interface EtcdBinaries {
  minor: EtcdMinor;
  /** Exact release read from `etcd --version`, e.g. "3.5.16". */
  version: string;
  etcd: string;
  etcdctl: string;
  /** Present from 3.5 on; 3.4 restores snapshots with etcdctl. */
  etcdutl: string | undefined;
}

const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '..', '..');
const found = new Map<EtcdMinor, EtcdBinaries>();

/** Name of the environment variable that overrides the binary of a minor version. */
export function binEnvVar(minor: EtcdMinor): string {
  return `ETCD_${minor.replace('.', '_')}_BIN`;
}

/**
 * Finds etcd, etcdctl (and etcdutl from 3.5) for a minor version and checks that the binary really
 * is that minor version. Throws an error that says how to install them when they are missing.
 */
export function etcdBinaries(minor: EtcdMinor): EtcdBinaries {
  const cached = found.get(minor);
  if (cached) return cached;
  const etcd = locateEtcd(minor);
  const dir = dirname(etcd);
  const etcdctl = join(dir, 'etcdctl');
  if (!existsSync(etcdctl)) throw missing(minor, `etcdctl not found next to ${etcd}`);
  const etcdutl = existsSync(join(dir, 'etcdutl')) ? join(dir, 'etcdutl') : undefined;
  const version = etcdVersion(etcd);
  if (!version.startsWith(`${minor}.`)) {
    throw new Error(`${etcd} is etcd ${version}, not ${minor}.x (check $${binEnvVar(minor)})`);
  }
  const bins: EtcdBinaries = { minor, version, etcd, etcdctl, etcdutl };
  found.set(minor, bins);
  return bins;
}

/** Reads the release of an etcd binary from `etcd --version` ("etcd Version: 3.4.23"). */
export function etcdVersion(etcdPath: string): string {
  const out = execFileSync(etcdPath, ['--version'], { encoding: 'utf8', timeout: 10_000 });
  const match = /etcd Version:\s*(\d+\.\d+\.\d+\S*)/.exec(out);
  if (!match?.[1]) throw new Error(`cannot read the version of ${etcdPath} from: ${out.trim()}`);
  return match[1];
}

function locateEtcd(minor: EtcdMinor): string {
  const override = process.env[binEnvVar(minor)];
  if (override) {
    const path = isDirectory(override) ? join(override, 'etcd') : override;
    if (!existsSync(path))
      throw missing(minor, `$${binEnvVar(minor)} points to ${path}, which does not exist`);
    return path;
  }
  const built = join(goCacheDir(), `etcd-${minor}`, 'etcd');
  if (existsSync(built)) return built;
  const path = join(repoRoot, '.cache', 'etcd', minor, 'usr', 'bin', 'etcd');
  if (!existsSync(path)) throw missing(minor, `neither ${built} nor ${path} exists`);
  return path;
}

/** Where scripts/build-go.sh puts the programs it builds from Go modules (one folder per module). */
export function goCacheDir(): string {
  return (
    process.env.ETCDFN_GO_CACHE ??
    join(process.env.XDG_CACHE_HOME ?? join(homedir(), '.cache'), 'etcdfn', 'go')
  );
}

function isDirectory(path: string): boolean {
  return existsSync(path) && statSync(path).isDirectory();
}

function missing(minor: EtcdMinor, why: string): Error {
  return new Error(
    `etcd ${minor} is not installed: ${why}. Run \`npm run setup\` (it builds 3.5-3.7 from their Go ` +
      `modules with scripts/build-go.sh and fetches 3.4 with scripts/install-etcd.sh), or set ` +
      `$${binEnvVar(minor)} to an etcd ${minor}.x binary.`,
  );
}

const releases = new Map<string, EtcdBinaries>();

/**
 * Every etcd release found locally, one per exact version, oldest first: the Go-built ones
 * (scripts/build-go.sh makes a folder per module: etcd-3.6 is the newest 3.6, etcd-3.5.16 that
 * patch exactly) and Debian's 3.4. The sandbox's kubelet runs an etcd image only with the binary of
 * exactly its version.
 */
export function localEtcdReleases(): EtcdBinaries[] {
  const candidates: string[] = [];
  for (const minor of LOCAL_ETCD_MINORS) {
    try {
      candidates.push(etcdBinaries(minor).etcd);
    } catch {
      // not installed: the caller lists what there is
    }
  }
  const cache = goCacheDir();
  if (existsSync(cache)) {
    for (const name of readdirSync(cache).sort()) {
      if (/^etcd-\d+\.\d+\.\d+$/.test(name) && existsSync(join(cache, name, 'etcd')))
        candidates.push(join(cache, name, 'etcd'));
    }
  }
  for (const etcd of candidates) {
    if ([...releases.values()].some(r => r.etcd === etcd)) continue;
    const version = etcdVersion(etcd);
    if (releases.has(version)) continue;
    const dir = dirname(etcd);
    const minor = version.split('.').slice(0, 2).join('.') as EtcdMinor;
    const etcdutl = existsSync(join(dir, 'etcdutl')) ? join(dir, 'etcdutl') : undefined;
    releases.set(version, { minor, version, etcd, etcdctl: join(dir, 'etcdctl'), etcdutl });
  }
  return [...releases.values()].sort((a, b) => compareReleases(a.version, b.version));
}

/** The local binaries of exactly `version`; throws, saying how to get them, when there are none. */
export function etcdRelease(version: string): EtcdBinaries {
  const found = localEtcdReleases().find(r => r.version === version);
  if (!found) throw new Error(`no local etcd ${version}: run \`npm run setup\` (scripts/build-go.sh)`);
  return found;
}

function compareReleases(a: string, b: string): number {
  const pa = a.split('.').map(Number);
  const pb = b.split('.').map(Number);
  for (let i = 0; i < 3; i++) if ((pa[i] ?? 0) !== (pb[i] ?? 0)) return (pa[i] ?? 0) - (pb[i] ?? 0);
  return 0;
}
