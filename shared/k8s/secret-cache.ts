// One read of each Secret per reconcile: the auto TLS issuer, the certificate status and the etcd
// access seam each read the cluster's certificate Secrets, which cost ~9 GETs per TLS reconcile.
// A KubeObjects that remembers Secret reads (found or not) for the life of one reconcile and
// forgets a Secret once this reconcile writes or deletes it. Every other call passes through.
// Never kept across events: the next event reads the Secrets again, so rotations are seen.
import type { KubeObject, KubeObjects, ObjectRef, ReadResult } from './objects.ts';

const isSecret = (ref: { apiVersion?: string; kind?: string }): boolean =>
  ref.apiVersion === 'v1' && ref.kind === 'Secret';
const keyOf = (ref: Pick<ObjectRef, 'namespace' | 'name'>): string => `${ref.namespace ?? ''}/${ref.name}`;
const keyOfObject = (o: KubeObject): string => `${o.metadata.namespace ?? ''}/${o.metadata.name ?? ''}`;

export function withSecretCache(kube: KubeObjects): KubeObjects {
  const reads = new Map<string, Promise<ReadResult<KubeObject>>>();
  const remember = (ref: ObjectRef, read: () => Promise<ReadResult<KubeObject>>) => {
    const key = keyOf(ref);
    let cached = reads.get(key);
    if (!cached) {
      cached = read();
      reads.set(key, cached);
      // A failed read is not remembered: the next caller tries again.
      cached.catch(() => reads.get(key) === cached && reads.delete(key));
    }
    return cached;
  };
  const forget = (o: KubeObject | ObjectRef): void => {
    if (!isSecret(o)) return;
    reads.delete('metadata' in o ? keyOfObject(o) : keyOf(o));
  };
  const cached = Object.create(kube) as KubeObjects;
  const overrides: Partial<Record<keyof KubeObjects, unknown>> = {
    get: (ref: ObjectRef) => (isSecret(ref) ? remember(ref, () => kube.get(ref)) : kube.get(ref)),
    find: async (ref: ObjectRef) => {
      if (!isSecret(ref)) return kube.find(ref);
      const read = await remember(ref, async () => {
        const object = await kube.find(ref);
        return object ? { kind: 'found', object } : { kind: 'not-found' };
      });
      return read.kind === 'found' ? read.object : undefined;
    },
    create: (o: KubeObject) => (forget(o), kube.create(o)),
    replace: (o: KubeObject) => (forget(o), kube.replace(o)),
    mergePatch: (ref: ObjectRef, ...rest: unknown[]) => (
      forget(ref),
      (kube.mergePatch as (...a: unknown[]) => unknown)(ref, ...rest)
    ),
    delete: (ref: ObjectRef, ...rest: unknown[]) => (
      forget(ref),
      (kube.delete as (...a: unknown[]) => unknown)(ref, ...rest)
    ),
  };
  return Object.assign(cached, overrides);
}
