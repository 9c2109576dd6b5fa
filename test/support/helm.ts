// The chart rendered by real helm binaries (Helm 3 and Helm 4, unpacked by scripts/install-helm.sh
// into .cache/helm/<major>/helm), and every rendered object validated against its Kubernetes or
// Knative OpenAPI schema (the kubernetes-models packages: compiled validators, offline).
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseAllDocuments } from 'yaml';
import { CustomResourceDefinition } from 'kubernetes-models/apiextensions.k8s.io/v1';
import { Deployment } from 'kubernetes-models/apps/v1';
import {
  ClusterRole,
  ClusterRoleBinding,
  Role,
  RoleBinding,
} from 'kubernetes-models/rbac.authorization.k8s.io/v1';
import { ConfigMap, Namespace, ServiceAccount } from 'kubernetes-models/v1';
import { Broker, Trigger } from '@kubernetes-models/knative/eventing.knative.dev/v1';
import { EventPolicy } from '@kubernetes-models/knative/eventing.knative.dev/v1alpha1';
import { Service } from '@kubernetes-models/knative/serving.knative.dev/v1';
import { ApiServerSource, PingSource } from '@kubernetes-models/knative/sources.knative.dev/v1';
import { PodMonitor } from '@kubernetes-models/prometheus-operator/monitoring.coreos.com/v1';

export const ROOT = join(import.meta.dirname, '..', '..');
export const CHART_DIR = join(ROOT, 'charts', 'etcdfn');
export const HELM_MAJORS = [3, 4] as const;

// Rendered manifests are untyped YAML; the tests check their shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
export type Obj = Record<string, any>;

export function helmBinary(major: number): string {
  const path = join(ROOT, '.cache', 'helm', String(major), 'helm');
  if (!existsSync(path)) throw new Error(`${path} is missing: run npm run setup (scripts/install-helm.sh)`);
  return path;
}

export interface RenderOptions {
  release?: string;
  namespace?: string;
  includeCrds?: boolean;
}

export interface HelmResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs helm with the values written to a file (so types survive, unlike --set). */
export function helm(major: number, args: string[], values: Obj = {}): HelmResult {
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-helm-'));
  try {
    const file = join(dir, 'values.json');
    writeFileSync(file, JSON.stringify(values));
    const result = spawnSync(helmBinary(major), [...args, '-f', file], {
      encoding: 'utf8',
      env: { ...process.env, HELM_CACHE_HOME: join(dir, 'cache'), HELM_CONFIG_HOME: join(dir, 'config') },
    });
    return { status: result.status ?? -1, stdout: result.stdout, stderr: result.stderr };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `helm template`: the rendered objects in order; throws with helm's message when it fails. */
export function helmTemplate(major: number, values: Obj = {}, options: RenderOptions = {}): Obj[] {
  const args = ['template', options.release ?? 'etcdfn', CHART_DIR];
  args.push('--namespace', options.namespace ?? 'etcd-operator');
  if (options.includeCrds) args.push('--include-crds');
  const result = helm(major, args, values);
  if (result.status !== 0) throw new Error(`helm ${major} template failed: ${result.stderr}`);
  return parseYaml(result.stdout, `helm ${major} template`);
}

export function parseYaml(text: string, origin: string): Obj[] {
  const out: Obj[] = [];
  for (const doc of parseAllDocuments(text)) {
    if (doc.errors.length > 0) throw new Error(`${origin}: ${doc.errors[0]?.message}`);
    const value: unknown = doc.toJS();
    if (value && typeof value === 'object') out.push(value);
  }
  return out;
}

/** `kubectl kustomize <dir>`: the objects a kustomization builds. */
export function kustomize(dir: string): Obj[] {
  return parseYaml(execFileSync('kubectl', ['kustomize', dir], { encoding: 'utf8' }), `kustomize ${dir}`);
}

interface Model {
  validate(): void;
}
type ModelClass = new (data: Obj) => Model;

const MODELS: Record<string, ModelClass> = {
  'v1/ServiceAccount': ServiceAccount,
  'v1/ConfigMap': ConfigMap,
  'v1/Namespace': Namespace,
  'apps/v1/Deployment': Deployment,
  'rbac.authorization.k8s.io/v1/ClusterRole': ClusterRole,
  'rbac.authorization.k8s.io/v1/ClusterRoleBinding': ClusterRoleBinding,
  'rbac.authorization.k8s.io/v1/Role': Role,
  'rbac.authorization.k8s.io/v1/RoleBinding': RoleBinding,
  'apiextensions.k8s.io/v1/CustomResourceDefinition': CustomResourceDefinition,
  'serving.knative.dev/v1/Service': Service,
  'eventing.knative.dev/v1/Broker': Broker,
  'eventing.knative.dev/v1/Trigger': Trigger,
  'eventing.knative.dev/v1alpha1/EventPolicy': EventPolicy,
  'sources.knative.dev/v1/ApiServerSource': ApiServerSource,
  'sources.knative.dev/v1/PingSource': PingSource,
  'monitoring.coreos.com/v1/PodMonitor': PodMonitor,
} as unknown as Record<string, ModelClass>;

/**
 * Validates an object against its schema; returns the errors (empty when valid). An object of a
 * kind with no schema here is an error, so a new kind cannot slip through unchecked.
 */
export function schemaErrors(o: Obj): string[] {
  const model = MODELS[`${o.apiVersion}/${o.kind}`];
  if (!model) return [`no schema known for ${o.apiVersion} ${o.kind}`];
  try {
    new model(structuredClone(o)).validate();
    return [];
  } catch (err) {
    return [err instanceof Error ? err.message : String(err)];
  }
}

export const key = (o: Obj): string => `${o.kind}/${o.metadata?.name}`;

export function find(list: Obj[], kind: string, name: string): Obj {
  const found = list.find(o => o.kind === kind && o.metadata?.name === name);
  if (!found) throw new Error(`no ${kind}/${name} in ${list.map(key).join(', ')}`);
  return found;
}

/** Every container of a Knative Service or a Deployment. */
export const containersOf = (o: Obj): Obj[] => o.spec.template.spec.containers as Obj[];

export const envOf = (c: Obj): Record<string, string> =>
  Object.fromEntries((c.env as { name: string; value: string }[]).map(e => [e.name, e.value]));
