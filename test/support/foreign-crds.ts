// The real CRDs of the kinds etcdfn's manifests use but do not define (Knative Eventing's and
// Serving's, cert-manager's, the Prometheus operator's), read from those projects' own Go modules
// as the go command downloads them into its module cache: nothing is copied into this repository.
// Knative Eventing's version is the one test/go/knative builds the sandbox's Knative programs from,
// so the CRDs and the programs always agree; the others are pinned here.
import { execFileSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ROOT } from './helm.ts';

export interface ForeignModule {
  path: string;
  version: string;
  /** the folders of the module that hold its CRDs */
  crdDirs: string[];
}

/** The version of a module that test/go/<dir>/go.mod requires. */
export function requiredVersion(dir: string, module: string): string {
  const goMod = readFileSync(join(ROOT, 'test', 'go', dir, 'go.mod'), 'utf8');
  const m = new RegExp(`^\\s*${module.replaceAll('.', '\\.')} (v\\S+)`, 'm').exec(goMod);
  if (!m?.[1]) throw new Error(`test/go/${dir}/go.mod requires no ${module}`);
  return m[1];
}

export const KNATIVE_EVENTING: ForeignModule = {
  path: 'knative.dev/eventing',
  version: requiredVersion('knative', 'knative.dev/eventing'),
  crdDirs: ['config/core/resources', 'config/channels/in-memory-channel/resources'],
};

export const FOREIGN_MODULES: ForeignModule[] = [
  KNATIVE_EVENTING,
  // the Serving release of the same Knative minor (its Service is what the functions run as)
  { path: 'knative.dev/serving', version: 'v0.49.0', crdDirs: ['config/core/300-resources'] },
  { path: 'github.com/cert-manager/cert-manager', version: 'v1.21.2', crdDirs: ['deploy/crds'] },
  {
    path: 'github.com/prometheus-operator/prometheus-operator',
    version: 'v0.85.0',
    crdDirs: ['example/prometheus-operator-crd'],
  },
];

/**
 * The module's folder in the Go module cache, downloaded (and checked against the checksum
 * database) by `go mod download` when it is not there yet.
 */
export function moduleDir(module: ForeignModule): string {
  let out: string;
  try {
    out = execFileSync('go', ['mod', 'download', '-json', `${module.path}@${module.version}`], {
      cwd: tmpdir(),
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'pipe'],
    });
  } catch (err) {
    const stdout = (err as { stdout?: string }).stdout ?? '';
    throw new Error(`go mod download ${module.path}@${module.version} failed: ${stdout || String(err)}`, {
      cause: err,
    });
  }
  const info = JSON.parse(out) as { Dir?: string; Error?: string };
  if (!info.Dir || !existsSync(info.Dir))
    throw new Error(`go mod download ${module.path}@${module.version}: ${info.Error ?? 'no Dir'}`);
  return info.Dir;
}

/** Every folder holding a foreign module's CRDs, downloading the modules as needed. */
export function foreignCrdDirs(modules: ForeignModule[] = FOREIGN_MODULES): string[] {
  return modules.flatMap(m => {
    const dir = moduleDir(m);
    return m.crdDirs.map(d => {
      const path = join(dir, d);
      if (!existsSync(path)) throw new Error(`${m.path}@${m.version} has no ${d}`);
      return path;
    });
  });
}
