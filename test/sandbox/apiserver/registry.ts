// The resource registry: which group/version/resource triples are served, looked up by URL or kind.

import type { ResourceDef, Strategy } from './types.ts';

export interface DefInput {
  group: string;
  version: string;
  resource: string;
  kind: string;
  namespaced: boolean;
  singular?: string;
  listKind?: string;
  shortNames?: string[];
  categories?: string[];
  statusSubresource?: boolean;
  generation?: boolean;
  allowCreateOnUpdate?: boolean;
  returnDeletedObject?: boolean;
  defaultPropagation?: 'Background' | 'Orphan';
  fieldSelectors?: ResourceDef['fieldSelectors'];
  strategy?: Strategy;
  printer?: ResourceDef['printer'];
  storageApiVersion?: string;
  extraSubresources?: string[];
}

export function apiVersionOf(group: string, version: string): string {
  return group ? `${group}/${version}` : version;
}

/** Fill the defaults of a resource definition. */
export function makeDef(input: DefInput): ResourceDef {
  return {
    group: input.group,
    version: input.version,
    resource: input.resource,
    kind: input.kind,
    listKind: input.listKind ?? `${input.kind}List`,
    singular: input.singular ?? input.kind.toLowerCase(),
    shortNames: input.shortNames ?? [],
    categories: input.categories ?? [],
    namespaced: input.namespaced,
    storageKey: `${input.group}/${input.resource}`,
    storageApiVersion: input.storageApiVersion ?? apiVersionOf(input.group, input.version),
    statusSubresource: input.statusSubresource ?? false,
    generation: input.generation ?? false,
    verbs: ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'],
    allowCreateOnUpdate: input.allowCreateOnUpdate ?? false,
    returnDeletedObject: input.returnDeletedObject ?? false,
    defaultPropagation: input.defaultPropagation ?? 'Background',
    fieldSelectors: input.fieldSelectors ?? {},
    custom: false,
    strategy: input.strategy ?? {},
    printer: input.printer,
    extraSubresources: input.extraSubresources,
  };
}

const VERSION_RE = /^v(\d+)(?:(alpha|beta)(\d+))?$/;

/** Kubernetes version priority: GA > beta > alpha, higher numbers first, others last. */
export function compareVersions(a: string, b: string): number {
  const ma = VERSION_RE.exec(a);
  const mb = VERSION_RE.exec(b);
  if (!ma || !mb) return ma ? -1 : mb ? 1 : a.localeCompare(b);
  const rank = (m: RegExpExecArray) => (m[2] === undefined ? 3 : m[2] === 'beta' ? 2 : 1);
  if (rank(ma) !== rank(mb)) return rank(mb) - rank(ma);
  if (ma[1] !== mb[1]) return Number(mb[1]) - Number(ma[1]);
  return Number(mb[3] ?? 0) - Number(ma[3] ?? 0);
}

export class Registry {
  private readonly byGVR = new Map<string, ResourceDef>();
  private readonly byGVK = new Map<string, ResourceDef>();
  private readonly groupOrder: string[] = [];
  /** bumped on every change, so discovery documents can be cached */
  revision = 0;

  add(def: ResourceDef): void {
    this.byGVR.set(`${def.group}/${def.version}/${def.resource}`, def);
    this.byGVK.set(`${apiVersionOf(def.group, def.version)}/${def.kind}`, def);
    if (!this.groupOrder.includes(def.group)) this.groupOrder.push(def.group);
    this.revision++;
  }

  /** Remove every version of one resource (group + plural). */
  removeResource(group: string, resource: string): void {
    for (const [key, def] of this.byGVR) {
      if (def.group === group && def.resource === resource) {
        this.byGVR.delete(key);
        this.byGVK.delete(`${apiVersionOf(def.group, def.version)}/${def.kind}`);
      }
    }
    if (![...this.byGVR.values()].some(d => d.group === group)) {
      this.groupOrder.splice(this.groupOrder.indexOf(group), 1);
    }
    this.revision++;
  }

  lookup(group: string, version: string, resource: string): ResourceDef | undefined {
    return this.byGVR.get(`${group}/${version}/${resource}`);
  }

  byKind(apiVersion: string, kind: string): ResourceDef | undefined {
    return this.byGVK.get(`${apiVersion}/${kind}`);
  }

  /** Any served version of a group + kind (used to resolve owner references across versions). */
  byGroupKind(group: string, kind: string): ResourceDef | undefined {
    for (const def of this.byGVR.values()) if (def.group === group && def.kind === kind) return def;
    return undefined;
  }

  /** The definition whose version is the storage version of a storage key. */
  storageDef(storageKey: string): ResourceDef | undefined {
    let first: ResourceDef | undefined;
    for (const def of this.byGVR.values()) {
      if (def.storageKey !== storageKey) continue;
      first ??= def;
      if (apiVersionOf(def.group, def.version) === def.storageApiVersion) return def;
    }
    return first;
  }

  all(): ResourceDef[] {
    return [...this.byGVR.values()];
  }

  groups(): { name: string; versions: string[] }[] {
    return this.groupOrder.map(name => {
      const versions = [
        ...new Set(
          this.all()
            .filter(d => d.group === name)
            .map(d => d.version),
        ),
      ];
      versions.sort(compareVersions);
      return { name, versions };
    });
  }

  resources(group: string, version: string): ResourceDef[] {
    return this.all().filter(d => d.group === group && d.version === version);
  }
}
