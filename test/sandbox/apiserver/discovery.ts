// Legacy discovery documents (/api, /apis, group and group-version resource lists) and /version.
// kubectl falls back to these when the answer is not aggregated discovery, and needs nothing more.

import { apiVersionOf, type Registry } from './registry.ts';
import type { ResourceDef } from './types.ts';

export const VERSION_INFO = {
  major: '1',
  minor: '32',
  gitVersion: 'v1.32.0',
  gitCommit: '0000000000000000000000000000000000000000',
  gitTreeState: 'clean',
  buildDate: '2024-12-11T00:00:00Z',
  goVersion: 'go1.23.3',
  compiler: 'gc',
  platform: 'linux/amd64',
};

const SUBRESOURCE_VERBS = ['get', 'patch', 'update'];

const EXTRA_SUBRESOURCES: Record<
  string,
  { group?: string; version?: string; kind: string; verbs: string[] }
> = {
  log: { kind: 'Pod', verbs: ['get'] },
  binding: { kind: 'Binding', verbs: ['create'] },
  eviction: { group: 'policy', version: 'v1', kind: 'Eviction', verbs: ['create'] },
};

function resourceEntries(def: ResourceDef): Record<string, unknown>[] {
  const main: Record<string, unknown> = {
    name: def.resource,
    singularName: def.singular,
    namespaced: def.namespaced,
    kind: def.kind,
    verbs: def.verbs,
  };
  if (def.shortNames.length) main.shortNames = def.shortNames;
  if (def.categories.length) main.categories = def.categories;
  const out = [main];
  if (def.statusSubresource) {
    out.push({
      name: `${def.resource}/status`,
      singularName: '',
      namespaced: def.namespaced,
      kind: def.kind,
      verbs: SUBRESOURCE_VERBS,
    });
  }
  if (def.scale) {
    out.push({
      name: `${def.resource}/scale`,
      singularName: '',
      namespaced: def.namespaced,
      group: 'autoscaling',
      version: 'v1',
      kind: 'Scale',
      verbs: SUBRESOURCE_VERBS,
    });
  }
  for (const sub of def.extraSubresources ?? []) {
    const extra = EXTRA_SUBRESOURCES[sub];
    if (extra)
      out.push({ name: `${def.resource}/${sub}`, singularName: '', namespaced: def.namespaced, ...extra });
  }
  return out;
}

export function apiVersions(hostPort: string): Record<string, unknown> {
  return {
    kind: 'APIVersions',
    versions: ['v1'],
    serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: hostPort }],
  };
}

function groupDoc(name: string, versions: string[]): Record<string, unknown> {
  const list = versions.map(v => ({ groupVersion: apiVersionOf(name, v), version: v }));
  return { name, versions: list, preferredVersion: list[0] };
}

export function apiGroupList(registry: Registry): Record<string, unknown> {
  return {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: registry
      .groups()
      .filter(g => g.name !== '')
      .map(g => groupDoc(g.name, g.versions)),
  };
}

export function apiGroup(registry: Registry, name: string): Record<string, unknown> | undefined {
  const group = registry.groups().find(g => g.name === name && name !== '');
  return group && { kind: 'APIGroup', apiVersion: 'v1', ...groupDoc(group.name, group.versions) };
}

export function apiResourceList(
  registry: Registry,
  group: string,
  version: string,
): Record<string, unknown> | undefined {
  const defs = registry.resources(group, version);
  if (!defs.length) return undefined;
  return {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: apiVersionOf(group, version),
    resources: defs.flatMap(resourceEntries),
  };
}
