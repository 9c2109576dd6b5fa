// Pod volumes as host directories:
//   persistentVolumeClaim → <dataDir>/pvcs/<namespace>/<claim>-<claim uid>  (outlives Pods; removed
//                           by the PVC controller when the claim is deleted)
//   emptyDir              → <podDir>/volumes/empty-dir/<name>  (medium Memory too: a directory like
//                           the others; sizeLimit is reported, not enforced), removed with the Pod
//   secret, configMap, projected (secret/configMap/downwardAPI sources), downwardAPI
//                         → files with the keys (items and modes honoured), removed with the Pod,
//                           written atomically (atomic-writer.ts) and re-projected while the Pod
//                           runs (refreshVolumes; subPath mounts keep their first content)
//   hostPath              → the host path itself
// The container then sees each volume at its mountPath through the path rewriting of rewrite.ts.
import { cpSync, existsSync, mkdirSync, rmSync } from 'node:fs';
import { join, normalize } from 'node:path';
import type { V1Container, V1KeyToPath, V1Volume, V1DownwardAPIVolumeFile } from '@kubernetes/client-node';
import { writeAtomically } from './atomic-writer.ts';
import type { Payload } from './atomic-writer.ts';
import type { SourceReader } from './env.ts';
import { ConfigError, fieldValue } from './env.ts';
import type { PathMapping } from './rewrite.ts';
import type { Pod, Pvc } from './types.ts';

/** A volume that cannot be set up yet (missing claim, Secret, ...): the Pod waits in ContainerCreating. */
export class VolumeNotReady extends Error {}

/**
 * The claim is not bound: a real scheduler would not place the Pod at all (PodScheduled False,
 * Unschedulable, with this message); the sandbox's one node holds it Pending the same way.
 */
export class ClaimNotBound extends VolumeNotReady {}

export interface VolumeInfo {
  type: string;
  hostPath: string;
  medium?: string;
  sizeLimit?: string;
}

export interface VolumeContext {
  pod: Pod;
  podDir: string;
  dataDir: string;
  podIP: string;
  hostIP: string;
  nodeName: string;
  reader: SourceReader;
  pvc(namespace: string, name: string): Pvc | undefined;
}

/** The directory that backs a claim: stable for the claim's lifetime, new for a re-created claim. */
export function pvcDir(dataDir: string, pvc: Pvc): string {
  return join(
    dataDir,
    'pvcs',
    pvc.metadata.namespace ?? 'default',
    `${pvc.metadata.name}-${pvc.metadata.uid}`,
  );
}

function safeJoin(dir: string, rel: string): string {
  const path = normalize(join(dir, rel));
  if (!path.startsWith(dir)) throw new VolumeNotReady(`invalid path "${rel}" escapes the volume`);
  return path;
}

function addKeys(
  payload: Payload,
  data: Record<string, Buffer>,
  items: V1KeyToPath[] | undefined,
  defaultMode: number | undefined,
): void {
  const entries = items?.length
    ? items.filter(i => data[i.key] !== undefined).map(i => ({ path: i.path, key: i.key, mode: i.mode }))
    : Object.keys(data).map(key => ({ path: key, key, mode: undefined as number | undefined }));
  for (const { path, key, mode } of entries) {
    safeJoin('/volume', path);
    payload.set(normalize(path), { data: data[key], mode: mode ?? defaultMode ?? 0o644 });
  }
}

async function secretData(ctx: VolumeContext, name: string, optional: boolean | undefined) {
  const data = await ctx.reader.secret(ctx.pod.metadata.namespace ?? 'default', name);
  if (!data && !optional) throw new VolumeNotReady(`MountVolume.SetUp failed: secret "${name}" not found`);
  return data ?? {};
}

async function configMapData(ctx: VolumeContext, name: string, optional: boolean | undefined) {
  const data = await ctx.reader.configMap(ctx.pod.metadata.namespace ?? 'default', name);
  if (!data && !optional) throw new VolumeNotReady(`MountVolume.SetUp failed: configmap "${name}" not found`);
  return Object.fromEntries(Object.entries(data ?? {}).map(([k, v]) => [k, Buffer.from(v)]));
}

function downwardData(
  ctx: VolumeContext,
  payload: Payload,
  items: V1DownwardAPIVolumeFile[] | undefined,
  defaultMode: number | undefined,
): void {
  for (const item of items ?? []) {
    if (!item.fieldRef) continue;
    const data = Buffer.from(fieldValue(ctx.pod, item.fieldRef.fieldPath, ctx));
    addKeys(payload, { [item.path]: data }, undefined, item.mode ?? defaultMode);
  }
}

/** What a Secret-like volume shows now: read afresh for set-up and for every refresh. */
async function payloadOf(ctx: VolumeContext, volume: V1Volume): Promise<Payload | undefined> {
  const payload: Payload = new Map();
  if (volume.secret) {
    const data = await secretData(ctx, volume.secret.secretName!, volume.secret.optional);
    addKeys(payload, data, volume.secret.items, volume.secret.defaultMode);
  } else if (volume.configMap) {
    const data = await configMapData(ctx, volume.configMap.name!, volume.configMap.optional);
    addKeys(payload, data, volume.configMap.items, volume.configMap.defaultMode);
  } else if (volume.downwardAPI) {
    downwardData(ctx, payload, volume.downwardAPI.items, volume.downwardAPI.defaultMode);
  } else if (volume.projected) {
    const mode = volume.projected.defaultMode;
    for (const source of volume.projected.sources ?? []) {
      if (source.secret) {
        const data = await secretData(ctx, source.secret.name!, source.secret.optional);
        addKeys(payload, data, source.secret.items, mode);
      } else if (source.configMap) {
        const data = await configMapData(ctx, source.configMap.name!, source.configMap.optional);
        addKeys(payload, data, source.configMap.items, mode);
      } else if (source.downwardAPI) {
        downwardData(ctx, payload, source.downwardAPI.items, mode);
      } else if (source.serviceAccountToken) {
        const sat = source.serviceAccountToken;
        const token = ctx.reader.token
          ? await ctx.reader.token({
              namespace: ctx.pod.metadata.namespace ?? 'default',
              serviceAccount: ctx.pod.spec.serviceAccountName ?? 'default',
              pod: { name: ctx.pod.metadata.name, uid: ctx.pod.metadata.uid },
              audience: sat.audience,
              expirationSeconds: sat.expirationSeconds,
            })
          : '';
        addKeys(payload, { [sat.path]: Buffer.from(token) }, undefined, mode);
      }
    }
  } else {
    return undefined;
  }
  return payload;
}

const PROJECTED_DIR: Record<string, string> = {
  secret: 'secret',
  configMap: 'configmap',
  downwardAPI: 'downward-api',
  projected: 'projected',
};

function projectedType(volume: V1Volume): string | undefined {
  return Object.keys(PROJECTED_DIR).find(type => volume[type as keyof V1Volume] !== undefined);
}

async function setUp(ctx: VolumeContext, volume: V1Volume): Promise<VolumeInfo> {
  const ns = ctx.pod.metadata.namespace ?? 'default';
  const own = (kind: string): string => join(ctx.podDir, 'volumes', kind, volume.name);
  if (volume.persistentVolumeClaim) {
    const claim = volume.persistentVolumeClaim.claimName;
    const pvc = ctx.pvc(ns, claim);
    if (!pvc) throw new VolumeNotReady(`persistentvolumeclaim "${claim}" not found`);
    if (pvc.metadata.deletionTimestamp)
      throw new VolumeNotReady(`persistentvolumeclaim "${claim}" is being deleted`);
    if (pvc.status?.phase !== 'Bound')
      throw new ClaimNotBound('0/1 nodes are available: pod has unbound immediate PersistentVolumeClaims.');
    const dir = pvcDir(ctx.dataDir, pvc);
    mkdirSync(dir, { recursive: true });
    return { type: 'persistentVolumeClaim', hostPath: dir };
  }
  if (volume.emptyDir) {
    const dir = own('empty-dir');
    mkdirSync(dir, { recursive: true });
    const info: VolumeInfo = { type: 'emptyDir', hostPath: dir };
    if (volume.emptyDir.medium) info.medium = volume.emptyDir.medium;
    if (volume.emptyDir.sizeLimit !== undefined) info.sizeLimit = String(volume.emptyDir.sizeLimit);
    return info;
  }
  const type = projectedType(volume);
  if (type) {
    const dir = own(PROJECTED_DIR[type]);
    writeAtomically(dir, (await payloadOf(ctx, volume))!);
    return { type, hostPath: dir };
  }
  if (volume.hostPath) return { type: 'hostPath', hostPath: volume.hostPath.path };
  throw new VolumeNotReady(`volume "${volume.name}": this volume type is not supported by the sandbox`);
}

/** Sets up every volume of a Pod; throws VolumeNotReady while something is missing. */
export async function setUpVolumes(ctx: VolumeContext): Promise<Map<string, VolumeInfo>> {
  const volumes = new Map<string, VolumeInfo>();
  for (const volume of ctx.pod.spec.volumes ?? []) {
    try {
      volumes.set(volume.name, await setUp(ctx, volume));
    } catch (err) {
      if (err instanceof ConfigError) throw new VolumeNotReady(`volume "${volume.name}": ${err.message}`);
      throw err;
    }
  }
  return volumes;
}

/**
 * Re-projects the Pod's secret / configMap / downwardAPI / projected volumes from their sources, as
 * the kubelet does every sync period; returns the names of the volumes whose content changed. A
 * source that has gone (or cannot be read) leaves the volume as it was, as the kubelet does.
 */
export async function refreshVolumes(
  ctx: VolumeContext,
  volumes: Map<string, VolumeInfo>,
): Promise<string[]> {
  const changed: string[] = [];
  for (const volume of ctx.pod.spec.volumes ?? []) {
    const info = volumes.get(volume.name);
    // gone: the Pod was cleaned up while this refresh read its sources
    if (!info || !projectedType(volume) || !existsSync(info.hostPath)) continue;
    let payload: Payload;
    try {
      payload = (await payloadOf(ctx, volume))!;
    } catch (err) {
      if (err instanceof VolumeNotReady || err instanceof ConfigError) continue;
      throw err;
    }
    if (writeAtomically(info.hostPath, payload)) changed.push(volume.name);
  }
  return changed;
}

/**
 * A container's mounts as path mappings (subPath directories are created as needed). A subPath of
 * a refreshed volume is copied for the container when it starts (`subPathRoot`), so, as in
 * Kubernetes, it keeps the content it started with.
 */
export function containerMappings(
  container: V1Container,
  volumes: Map<string, VolumeInfo>,
  subPathRoot?: string,
): PathMapping[] {
  const mappings: PathMapping[] = [];
  for (const [index, mount] of (container.volumeMounts ?? []).entries()) {
    const volume = volumes.get(mount.name);
    if (!volume) throw new VolumeNotReady(`volumeMount "${mount.name}" names no volume of the Pod`);
    let hostPath = volume.hostPath;
    if (mount.subPath) {
      hostPath = safeJoin(volume.hostPath, mount.subPath);
      if (subPathRoot && PROJECTED_DIR[volume.type] && existsSync(hostPath)) {
        const copy = join(subPathRoot, mount.name, container.name, String(index));
        rmSync(copy, { recursive: true, force: true });
        cpSync(hostPath, copy, { recursive: true, dereference: true });
        hostPath = copy;
      } else if (volume.type !== 'hostPath' && !existsSync(hostPath)) {
        mkdirSync(hostPath, { recursive: true });
      }
    }
    mappings.push({ containerPath: mount.mountPath, hostPath });
  }
  return mappings;
}

/** Removes the Pod's own volumes (emptyDir, secret, configMap, ...); claims are left alone. */
export function tearDownVolumes(podDir: string): void {
  rmSync(join(podDir, 'volumes'), { recursive: true, force: true });
}
