// Background controllers that the real control plane runs beside the API server, reduced to what
// deletion needs: the owner-reference garbage collector (background, foreground and orphan
// propagation, blockOwnerDeletion), the namespace controller, PVC protection, and CRD cleanup.

import { CRD_CLEANUP_FINALIZER } from './crd.ts';
import { deleteObject, FOREGROUND_FINALIZER, ORPHAN_FINALIZER } from './deletion.ts';
import type { Engine } from './operations.ts';
import type { StoreEvent } from './store.ts';
import type { KObject, OwnerReference, PropagationPolicy, ResourceDef } from './types.ts';
import { deepEqual } from './util.ts';

const PVC_PROTECTION = 'kubernetes.io/pvc-protection';

interface Item {
  def: ResourceDef;
  obj: KObject;
}

function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.split('/')[0] : '';
}

function relevant(ev: StoreEvent): boolean {
  const m = ev.object.metadata;
  if (ev.type === 'DELETED' || m.deletionTimestamp) return true;
  if (
    m.ownerReferences &&
    (ev.type === 'ADDED' || !deepEqual(ev.old?.metadata.ownerReferences, m.ownerReferences))
  )
    return true;
  if (ev.storageKey === '/pods') {
    const phase = (ev.object.status as { phase?: string } | undefined)?.phase;
    return phase === 'Succeeded' || phase === 'Failed';
  }
  return false;
}

export class Controllers {
  private timer: NodeJS.Timeout | undefined;
  private closed = false;
  private readonly unsubscribe: () => void;
  /** passes run so far (for tests and debugging) */
  passes = 0;

  private readonly engine: Engine;
  private readonly delayMs;
  constructor(engine: Engine, delayMs = 5) {
    this.engine = engine;
    this.delayMs = delayMs;
    this.unsubscribe = engine.store.subscribe('*', ev => {
      if (relevant(ev)) this.trigger();
    });
  }

  trigger(): void {
    if (this.closed || this.timer) return;
    this.timer = setTimeout(() => {
      this.timer = undefined;
      const before = this.engine.store.resourceVersion;
      this.runPass();
      if (this.engine.store.resourceVersion !== before) this.trigger();
    }, this.delayMs);
  }

  /** Resolves once no pass is pending (everything triggered so far has been processed). */
  async idle(): Promise<void> {
    while (this.timer) await new Promise(resolve => setTimeout(resolve, this.delayMs));
  }

  close(): void {
    this.closed = true;
    this.unsubscribe();
    if (this.timer) clearTimeout(this.timer);
  }

  private items(): Item[] {
    const out: Item[] = [];
    for (const key of this.engine.store.storageKeys()) {
      const def = this.engine.registry.storageDef(key);
      if (!def) continue;
      for (const obj of this.engine.store.list(key)) out.push({ def, obj });
    }
    return out;
  }

  /** One pass of every controller over a snapshot of the store. */
  runPass(): void {
    this.passes++;
    const items = this.items();
    const dependents = new Map<string, { item: Item; ref: OwnerReference }[]>();
    for (const item of items) {
      for (const ref of item.obj.metadata.ownerReferences ?? []) {
        let list = dependents.get(ref.uid);
        if (!list) dependents.set(ref.uid, (list = []));
        list.push({ item, ref });
      }
    }
    for (const snapshot of items) {
      const obj = this.fresh(snapshot);
      if (!obj) continue;
      const item: Item = { def: snapshot.def, obj };
      const m = obj.metadata;
      if (m.deletionTimestamp) {
        const finalizers = m.finalizers ?? [];
        if (finalizers.includes(ORPHAN_FINALIZER)) this.orphan(item, dependents.get(m.uid!) ?? []);
        if (finalizers.includes(FOREGROUND_FINALIZER)) this.foreground(item, dependents.get(m.uid!) ?? []);
        if (item.def.storageKey === '/namespaces') this.finishNamespace(item, items);
        if (finalizers.includes(PVC_PROTECTION)) this.pvcProtection(item, items);
        if (finalizers.includes(CRD_CLEANUP_FINALIZER)) this.crdCleanup(item);
      } else if (m.ownerReferences?.length) {
        this.collect(item, dependents);
      }
    }
  }

  /** The current stored version of an item, if it is still the same object. */
  private fresh(item: Item): KObject | undefined {
    const cur = this.engine.getStored(item.def, item.obj.metadata.namespace, item.obj.metadata.name!);
    return cur && cur.metadata.uid === item.obj.metadata.uid ? cur : undefined;
  }

  private removeFinalizer(item: Item, finalizer: string): void {
    const cur = this.fresh(item);
    if (!cur) return;
    this.engine.mutateMetadata(item.def, cur, meta => {
      meta.finalizers = (meta.finalizers ?? []).filter(f => f !== finalizer);
    });
  }

  private removeOwnerRefs(item: Item, uids: Set<string>): void {
    const cur = this.fresh(item);
    if (!cur) return;
    this.engine.mutateMetadata(item.def, cur, meta => {
      meta.ownerReferences = (meta.ownerReferences ?? []).filter(r => !uids.has(r.uid));
    });
  }

  private delete(item: Item, policy: PropagationPolicy): void {
    try {
      deleteObject(this.engine, item.def, item.obj.metadata.namespace, item.obj.metadata.name!, {
        propagationPolicy: policy,
        preconditions: { uid: item.obj.metadata.uid },
      });
    } catch {
      // gone or replaced in the meantime; the next pass sees the new state
    }
  }

  private orphan(owner: Item, deps: { item: Item; ref: OwnerReference }[]): void {
    for (const d of deps) this.removeOwnerRefs(d.item, new Set([owner.obj.metadata.uid!]));
    this.removeFinalizer(owner, ORPHAN_FINALIZER);
  }

  private foreground(owner: Item, deps: { item: Item; ref: OwnerReference }[]): void {
    const blocking = deps.filter(d => d.ref.blockOwnerDeletion === true && this.fresh(d.item));
    if (blocking.length === 0) this.removeFinalizer(owner, FOREGROUND_FINALIZER);
  }

  /** Classify an owner reference: the owner is there, gone, or waiting for its dependents. */
  private ownerState(item: Item, ref: OwnerReference): 'solid' | 'dangling' | 'waiting' {
    const ownerDef =
      this.engine.registry.byKind(ref.apiVersion, ref.kind) ??
      this.engine.registry.byGroupKind(groupOf(ref.apiVersion), ref.kind);
    if (!ownerDef) return 'solid';
    if (ownerDef.namespaced && !item.def.namespaced) return 'dangling';
    const owner = this.engine.getStored(ownerDef, item.obj.metadata.namespace, ref.name);
    if (!owner || owner.metadata.uid !== ref.uid) return 'dangling';
    if (
      owner.metadata.deletionTimestamp &&
      (owner.metadata.finalizers ?? []).includes(FOREGROUND_FINALIZER)
    ) {
      return 'waiting';
    }
    return 'solid';
  }

  private collect(item: Item, dependents: Map<string, { item: Item; ref: OwnerReference }[]>): void {
    const refs = item.obj.metadata.ownerReferences ?? [];
    const states = refs.map(ref => ({ ref, state: this.ownerState(item, ref) }));
    const solid = states.filter(s => s.state === 'solid');
    const gone = states.filter(s => s.state !== 'solid');
    if (gone.length === 0) return;
    if (solid.length > 0) {
      this.removeOwnerRefs(item, new Set(gone.map(s => s.ref.uid)));
      return;
    }
    const finalizers = item.obj.metadata.finalizers ?? [];
    const waiting = gone.some(s => s.state === 'waiting');
    let policy: PropagationPolicy = 'Background';
    if (finalizers.includes(ORPHAN_FINALIZER)) policy = 'Orphan';
    else if (
      finalizers.includes(FOREGROUND_FINALIZER) ||
      (waiting && (dependents.get(item.obj.metadata.uid!) ?? []).length > 0)
    ) {
      policy = 'Foreground';
    }
    this.delete(item, policy);
  }

  private finishNamespace(ns: Item, items: Item[]): void {
    const name = ns.obj.metadata.name!;
    const inside = items.filter(i => i.def.namespaced && i.obj.metadata.namespace === name);
    for (const i of inside) if (!i.obj.metadata.deletionTimestamp) this.delete(i, 'Background');
    if (inside.length > 0 || (ns.obj.metadata.finalizers ?? []).length > 0) return;
    const cur = this.fresh(ns);
    if (cur) this.engine.store.remove(ns.def.storageKey, cur);
  }

  private pvcProtection(pvc: Item, items: Item[]): void {
    const { namespace, name } = pvc.obj.metadata;
    const inUse = items.some(i => {
      if (i.def.storageKey !== '/pods' || i.obj.metadata.namespace !== namespace) return false;
      const phase = (i.obj.status as { phase?: string } | undefined)?.phase;
      if (phase === 'Succeeded' || phase === 'Failed') return false;
      const volumes =
        (i.obj.spec as { volumes?: { persistentVolumeClaim?: { claimName?: string } }[] })?.volumes ?? [];
      return volumes.some(v => v.persistentVolumeClaim?.claimName === name);
    });
    if (!inUse) this.removeFinalizer(pvc, PVC_PROTECTION);
  }

  private crdCleanup(crd: Item): void {
    const def = this.engine.registry.all().find(d => d.crd?.metadata.name === crd.obj.metadata.name);
    const storageDef = def && this.engine.registry.storageDef(def.storageKey);
    const instances = storageDef ? this.engine.store.list(storageDef.storageKey) : [];
    for (const obj of instances)
      if (!obj.metadata.deletionTimestamp) this.delete({ def: storageDef!, obj }, 'Background');
    if (instances.length === 0) this.removeFinalizer(crd, CRD_CLEANUP_FINALIZER);
  }
}
