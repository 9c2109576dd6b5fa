// A container's environment as Kubernetes builds it: envFrom first, then env in order, each value
// `$(VAR)`-expanded against the variables defined before it; valueFrom fieldRef, resourceFieldRef,
// secretKeyRef and configMapKeyRef (read through the API). A missing Secret/ConfigMap/key that is
// not optional fails like the real kubelet's CreateContainerConfigError.
import { cpus, totalmem } from 'node:os';
import type { V1Container, V1EnvVarSource } from '@kubernetes/client-node';
import { expand } from './expand.ts';
import type { Pod } from './types.ts';

/** Reads Secret and ConfigMap data (undefined when the object does not exist). */
export interface SourceReader {
  secret(namespace: string, name: string): Promise<Record<string, Buffer> | undefined>;
  configMap(namespace: string, name: string): Promise<Record<string, string> | undefined>;
  /**
   * A service-account token bound to the Pod (TokenRequest), as a projected serviceAccountToken
   * source gets it; optional: readers without an API (unit tests) leave the file empty.
   */
  token?(request: TokenRequest): Promise<string>;
}

export interface TokenRequest {
  namespace: string;
  serviceAccount: string;
  pod: { name: string; uid: string };
  audience?: string;
  expirationSeconds?: number;
}

/** The error behind a CreateContainerConfigError waiting reason. */
export class ConfigError extends Error {}

export interface EnvContext {
  pod: Pod;
  container: V1Container;
  podIP: string;
  hostIP: string;
  nodeName: string;
  reader: SourceReader;
}

/** Resolves `metadata.labels['x']`-style field paths of the downward API. */
export function fieldValue(
  pod: Pod,
  path: string,
  ctx: { podIP: string; hostIP: string; nodeName: string },
): string {
  const m = /^metadata\.(labels|annotations)\['(.*)'\]$/.exec(path);
  if (m) return (m[1] === 'labels' ? pod.metadata.labels : pod.metadata.annotations)?.[m[2]] ?? '';
  switch (path) {
    case 'metadata.name':
      return pod.metadata.name;
    case 'metadata.namespace':
      return pod.metadata.namespace ?? 'default';
    case 'metadata.uid':
      return pod.metadata.uid;
    case 'metadata.labels':
      return formatMap(pod.metadata.labels);
    case 'metadata.annotations':
      return formatMap(pod.metadata.annotations);
    case 'spec.nodeName':
      return pod.spec.nodeName || ctx.nodeName;
    case 'spec.serviceAccountName':
      return pod.spec.serviceAccountName ?? 'default';
    case 'status.podIP':
    case 'status.podIPs':
      return ctx.podIP;
    case 'status.hostIP':
    case 'status.hostIPs':
      return ctx.hostIP;
    default:
      throw new ConfigError(`unsupported fieldRef fieldPath "${path}"`);
  }
}

function formatMap(map: Record<string, string> | undefined): string {
  return Object.keys(map ?? {})
    .sort()
    .map(k => `${k}="${map![k]}"`)
    .join('\n');
}

/** Parses a resource quantity into a number of base units (cores, bytes). */
export function parseQuantity(q: string): number {
  const m = /^([+-]?\d+(?:\.\d+)?)(m|k|Ki|M|Mi|G|Gi|T|Ti|P|Pi|E|Ei)?$/.exec(q.trim());
  if (!m) throw new ConfigError(`invalid quantity "${q}"`);
  const factors: Record<string, number> = {
    m: 1e-3,
    k: 1e3,
    M: 1e6,
    G: 1e9,
    T: 1e12,
    P: 1e15,
    E: 1e18,
    Ki: 2 ** 10,
    Mi: 2 ** 20,
    Gi: 2 ** 30,
    Ti: 2 ** 40,
    Pi: 2 ** 50,
    Ei: 2 ** 60,
  };
  return Number(m[1]) * (m[2] ? factors[m[2]] : 1);
}

function resourceValue(container: V1Container, resource: string, divisor: string | undefined): string {
  const [kind, name] = resource.split('.') as ['limits' | 'requests', string];
  const declared = container.resources?.[kind]?.[name];
  let value: number;
  if (declared !== undefined) value = parseQuantity(String(declared));
  else if (name === 'cpu') value = kind === 'limits' ? cpus().length : 0;
  else if (name === 'memory') value = kind === 'limits' ? totalmem() : 0;
  else value = 0;
  const div = divisor ? parseQuantity(divisor) : 1;
  return String(Math.ceil(value / div));
}

async function secretKey(
  ctx: EnvContext,
  ref: NonNullable<V1EnvVarSource['secretKeyRef']>,
): Promise<string | undefined> {
  const ns = ctx.pod.metadata.namespace ?? 'default';
  const data = await ctx.reader.secret(ns, ref.name!);
  if (!data) {
    if (ref.optional) return undefined;
    throw new ConfigError(`secret "${ref.name}" not found`);
  }
  const value = data[ref.key];
  if (value === undefined) {
    if (ref.optional) return undefined;
    throw new ConfigError(`couldn't find key ${ref.key} in Secret ${ns}/${ref.name}`);
  }
  return value.toString('utf8');
}

async function configMapKey(
  ctx: EnvContext,
  ref: NonNullable<V1EnvVarSource['configMapKeyRef']>,
): Promise<string | undefined> {
  const ns = ctx.pod.metadata.namespace ?? 'default';
  const data = await ctx.reader.configMap(ns, ref.name!);
  if (!data) {
    if (ref.optional) return undefined;
    throw new ConfigError(`configmap "${ref.name}" not found`);
  }
  const value = data[ref.key];
  if (value === undefined) {
    if (ref.optional) return undefined;
    throw new ConfigError(`couldn't find key ${ref.key} in ConfigMap ${ns}/${ref.name}`);
  }
  return value;
}

async function valueFrom(ctx: EnvContext, from: V1EnvVarSource): Promise<string | undefined> {
  if (from.fieldRef) return fieldValue(ctx.pod, from.fieldRef.fieldPath, ctx);
  if (from.resourceFieldRef) {
    return resourceValue(ctx.container, from.resourceFieldRef.resource, from.resourceFieldRef.divisor);
  }
  if (from.secretKeyRef) return secretKey(ctx, from.secretKeyRef);
  if (from.configMapKeyRef) return configMapKey(ctx, from.configMapKeyRef);
  throw new ConfigError('unsupported valueFrom source');
}

async function envFrom(ctx: EnvContext, env: Record<string, string>): Promise<void> {
  const ns = ctx.pod.metadata.namespace ?? 'default';
  for (const source of ctx.container.envFrom ?? []) {
    const prefix = source.prefix ?? '';
    if (source.configMapRef) {
      const data = await ctx.reader.configMap(ns, source.configMapRef.name!);
      if (!data && !source.configMapRef.optional) {
        throw new ConfigError(`configmap "${source.configMapRef.name}" not found`);
      }
      for (const [k, v] of Object.entries(data ?? {})) env[prefix + k] = v;
    }
    if (source.secretRef) {
      const data = await ctx.reader.secret(ns, source.secretRef.name!);
      if (!data && !source.secretRef.optional)
        throw new ConfigError(`secret "${source.secretRef.name}" not found`);
      for (const [k, v] of Object.entries(data ?? {})) env[prefix + k] = v.toString('utf8');
    }
  }
}

/** The container's own variables (not the host ones the kubelet adds, like PATH). */
export async function containerEnv(ctx: EnvContext): Promise<Record<string, string>> {
  const env: Record<string, string> = {};
  await envFrom(ctx, env);
  for (const variable of ctx.container.env ?? []) {
    if (variable.valueFrom) {
      const value = await valueFrom(ctx, variable.valueFrom);
      if (value !== undefined) env[variable.name] = value;
      continue;
    }
    env[variable.name] = expand(variable.value ?? '', name =>
      Object.hasOwn(env, name) ? env[name] : undefined,
    );
  }
  return env;
}
