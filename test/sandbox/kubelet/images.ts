// What an image means to the process kubelet, and which host program a container runs.
//
// - etcd images: any registry, a repository whose last segment is `etcd`, tag `v3.X.Y` or `3.X.Y`
//   (suffixes like `-0` allowed: registry.k8s.io/etcd:3.5.16-0, quay.io/coreos/etcd:v3.5.16,
//   gcr.io/etcd-development/etcd:v3.4.23). They run the local binaries of the same MINOR version,
//   but only for a patch that was released (RELEASED_ETCD_PATCHES, what a registry would hold): a
//   tag such as v3.6.99 fails to pull as a registry's missing tag does (ErrImagePull).
//   The image's entry point is etcd; command[0] `etcd`, `etcdctl`, `etcdutl` (bare or any absolute
//   path such as /usr/local/bin/etcd) maps to the local binary.
// - the operator's image (`agentImages`, default $ETCDFN_IMAGE's repository and
//   ghcr.io/etcdfn/etcdfn, any tag): runs `agentCommand` followed by the container's args. A
//   container `command` replaces the image's entry point as in Kubernetes: command[0] `etcd`,
//   `etcdctl`, `etcdutl` maps to the newest local etcd; `sh`/`bash`/`env` run on the host; any other
//   command[0] is taken to name the agent binary, so `agentCommand + command[1..] + args` runs;
//   but `node dist/functions/serve.js` (the functions' Knative Services) runs `functionCommand`.
// - "host" images (`hostImages`, default busybox, alpine, debian, ubuntu, bash): the command runs
//   as a host program (looked up in PATH); handy for tests and init scripts.
// - Knative's `ko://knative.dev/eventing/cmd/...` images (knative-images.ts): the binary built from
//   that package, its entry point (a `command` replaces it).
// - anything else fails like an image pull would: ErrImagePull, then ImagePullBackOff.
import { createHash } from 'node:crypto';
import { accessSync, constants } from 'node:fs';
import { basename, delimiter, join } from 'node:path';
import type { EtcdBinaries } from '../../support/etcd-binaries.ts';

export type ImageRuntime =
  | { kind: 'etcd'; image: string; imageID: string; bins: EtcdBinaries }
  | { kind: 'agent'; image: string; imageID: string }
  | { kind: 'host'; image: string; imageID: string }
  | { kind: 'program'; image: string; imageID: string; binary: string };

export interface ImageConfig {
  /** local etcd releases by exact version ('3.5.35' → its binaries) */
  etcd: Map<string, EtcdBinaries>;
  /** repositories (no tag) or glob patterns (`*`) of the operator's image */
  agentImages: string[];
  /** argv that runs the agent; undefined = the operator image cannot run */
  agentCommand: string[] | undefined;
  /** last path segments of images whose commands run on the host */
  hostImages: string[];
  /**
   * argv that runs the function server (functions/serve.ts): the operator image's
   * `node dist/functions/serve.js` maps to it; undefined: runs as any agent command
   */
  functionCommand?: string[];
  /** `ko://` images of Knative → the binaries built from them (knative-images.ts) */
  programs?: Map<string, string>;
}

export class ImagePullError extends Error {}

/**
 * The newest released patch of each etcd minor the sandbox can run (as of 2026-11): every patch from
 * .0 up to it was published, none after. A tag above it names no image.
 */
export const RELEASED_ETCD_PATCHES: Readonly<Record<string, number>> = {
  '3.4': 37,
  '3.5': 35,
  '3.6': 16,
  '3.7': 3,
};

/** Whether `3.X.Y` (from an image tag) is a released etcd version. */
export function isReleasedEtcd(minor: string, patch: number): boolean {
  const newest = RELEASED_ETCD_PATCHES[minor];
  return newest !== undefined && patch <= newest;
}

interface ParsedImage {
  repository: string;
  tag: string | undefined;
}

export function parseImage(image: string): ParsedImage {
  const noDigest = image.split('@')[0] ?? image;
  const slash = noDigest.lastIndexOf('/');
  const colon = noDigest.lastIndexOf(':');
  if (colon > slash) return { repository: noDigest.slice(0, colon), tag: noDigest.slice(colon + 1) };
  return { repository: noDigest, tag: undefined };
}

function globMatch(pattern: string, value: string): boolean {
  const re = new RegExp(
    `^${pattern
      .split('*')
      .map(p => p.replace(/[.+?^${}()|[\]\\]/g, '\\$&'))
      .join('.*')}$`,
  );
  return re.test(value);
}

/** A stable fake digest so imageID looks like a pulled image's (`repo@sha256:...`). */
function fakeImageID(repository: string, what: string): string {
  return `${repository}@sha256:${createHash('sha256').update(what).digest('hex')}`;
}

function newest(etcd: Map<string, EtcdBinaries>): EtcdBinaries | undefined {
  return [...etcd.values()].sort((a, b) => compareVersions(b.version, a.version))[0];
}

function compareVersions(a: string, b: string): number {
  const pa = a.split(/[.-]/).map(n => Number.parseInt(n, 10) || 0);
  const pb = b.split(/[.-]/).map(n => Number.parseInt(n, 10) || 0);
  for (let i = 0; i < Math.max(pa.length, pb.length); i++) {
    const d = (pa[i] ?? 0) - (pb[i] ?? 0);
    if (d !== 0) return d;
  }
  return 0;
}

/** Resolves an image to what runs it, or throws ImagePullError with a kubelet-like message. */
export function resolveImage(image: string, cfg: ImageConfig): ImageRuntime {
  const { repository, tag } = parseImage(image);
  const last = basename(repository);
  if (cfg.agentImages.some(p => (p.includes('*') ? globMatch(p, image) : p === repository || p === image))) {
    if (!cfg.agentCommand?.length) {
      throw new ImagePullError(
        `Failed to pull image "${image}": the sandbox kubelet was started without an agentCommand for the operator's image`,
      );
    }
    return { kind: 'agent', image, imageID: fakeImageID(repository, cfg.agentCommand.join(' ')) };
  }
  const program = cfg.programs?.get(image);
  if (program) return { kind: 'program', image, imageID: fakeImageID(image, program), binary: program };
  if (last === 'etcd') return resolveEtcd(image, repository, tag, cfg);
  if (cfg.hostImages.includes(last)) return { kind: 'host', image, imageID: fakeImageID(repository, 'host') };
  throw new ImagePullError(
    `Failed to pull image "${image}": rpc error: code = NotFound desc = the sandbox cannot run this image ` +
      `(it runs etcd images ${available(cfg)}, the operator image ${cfg.agentImages.join(', ')} ` +
      `and host-command images ${cfg.hostImages.join(', ')})`,
  );
}

function available(cfg: ImageConfig): string {
  const list = [...cfg.etcd.values()].map(b => b.version).sort(compareVersions);
  return list.length ? list.join(', ') : '(none installed)';
}

function resolveEtcd(
  image: string,
  repository: string,
  tag: string | undefined,
  cfg: ImageConfig,
): ImageRuntime {
  const m = /^v?(\d+)\.(\d+)\.(\d+)/.exec(tag ?? '');
  if (!m) {
    throw new ImagePullError(
      `Failed to pull image "${image}": the sandbox needs an etcd image tagged with its version (v3.X.Y or 3.X.Y)`,
    );
  }
  const minor = `${m[1]}.${m[2]}`;
  if (!isReleasedEtcd(minor, Number(m[3]))) {
    throw new ImagePullError(
      `Failed to pull image "${image}": rpc error: code = NotFound desc = failed to pull and unpack image ` +
        `"${image}": failed to resolve reference "${image}": ${image}: not found`,
    );
  }
  const version = `${m[1]}.${m[2]}.${m[3]}`;
  const bins = cfg.etcd.get(version);
  if (!bins) {
    // Only exactly that release may run: another patch would report another version to etcdfn.
    throw new ImagePullError(
      `Failed to pull image "${image}": rpc error: code = NotFound desc = no local etcd ${version} ` +
        `for this image (the sandbox has etcd ${available(cfg)}, built by scripts/build-go.sh from test/go/)`,
    );
  }
  return { kind: 'etcd', image, imageID: fakeImageID(repository, `etcd ${bins.version}`), bins };
}

const ETCD_TOOLS = new Set(['etcd', 'etcdctl', 'etcdutl']);
const SHELLS = new Set(['sh', 'bash', 'env', 'dash']);

function etcdTool(bins: EtcdBinaries, name: string): string | undefined {
  if (name === 'etcd') return bins.etcd;
  if (name === 'etcdctl') return bins.etcdctl;
  return bins.etcdutl;
}

/**
 * The argv to execute for a container (after `$(VAR)` expansion, before path/address rewriting).
 * Throws a plain Error (→ StartError) when the executable does not exist.
 */
export function containerArgv(
  runtime: ImageRuntime,
  command: string[],
  args: string[],
  cfg: ImageConfig,
  path: string,
): string[] {
  const first = command[0];
  const tool = first !== undefined ? basename(first) : undefined;
  const etcdBins = runtime.kind === 'etcd' ? runtime.bins : newest(cfg.etcd);
  if (tool !== undefined && ETCD_TOOLS.has(tool) && runtime.kind !== 'host') {
    const bin = etcdBins ? etcdTool(etcdBins, tool) : undefined;
    if (!bin) throw new Error(`exec: "${first}": executable file not found in $PATH`);
    return [bin, ...command.slice(1), ...args];
  }
  if (runtime.kind === 'etcd' && first === undefined) return [runtime.bins.etcd, ...args];
  if (runtime.kind === 'program' && first === undefined) return [runtime.binary, ...args];
  if (
    runtime.kind === 'agent' &&
    cfg.functionCommand &&
    tool === 'node' &&
    /functions\/serve\.js$/.test(command[1] ?? '')
  ) {
    return [...cfg.functionCommand, ...command.slice(2), ...args];
  }
  if (runtime.kind === 'agent' && (first === undefined || !SHELLS.has(tool ?? ''))) {
    return [...cfg.agentCommand!, ...command.slice(1), ...args];
  }
  if (first === undefined)
    throw new Error('no command specified: the sandbox has no image entry point for this image');
  return [lookPath(first, path), ...command.slice(1), ...args];
}

/** Finds an executable like exec.LookPath; throws the runtime's "not found" error otherwise. */
export function lookPath(file: string, path: string): string {
  const candidates = file.includes('/') ? [file] : path.split(delimiter).map(dir => join(dir || '.', file));
  for (const candidate of candidates) {
    try {
      accessSync(candidate, constants.X_OK);
      return candidate;
    } catch {
      // keep looking
    }
  }
  throw new Error(`exec: "${file}": executable file not found in $PATH`);
}

/** The binaries to put on a container's PATH (etcd, etcdctl, etcdutl of the image's minor). */
export function toolBinaries(runtime: ImageRuntime, cfg: ImageConfig): EtcdBinaries | undefined {
  return runtime.kind === 'etcd' ? runtime.bins : newest(cfg.etcd);
}
