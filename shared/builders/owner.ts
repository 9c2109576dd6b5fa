// Owner references: every object etcdfn creates names exactly one controller, so that garbage
// collection removes it with its owner and `kubectl get -o wide` shows who manages it.
import type { V1ObjectMeta, V1OwnerReference } from '@kubernetes/client-node';

/** An object that can own others: it must already exist (a uid is only assigned on creation). */
export interface Owner {
  apiVersion: string;
  kind: string;
  metadata: Pick<V1ObjectMeta, 'name' | 'uid'>;
}

/** The controller reference to `owner`; deleting the owner in the foreground waits for the object. */
export function controllerRef(owner: Owner): V1OwnerReference {
  const { name, uid } = owner.metadata;
  if (!name || !uid) {
    throw new Error(
      `cannot reference ${owner.kind} ${name ?? '(unnamed)'} as owner: it has no ${name ? 'uid' : 'name'} ` +
        '(only an object read back from the API server can own others)',
    );
  }
  return {
    apiVersion: owner.apiVersion,
    kind: owner.kind,
    name,
    uid,
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** True when `obj`'s controller is `owner` (matched by uid, so a recreated owner of the same name is not). */
export function isControlledBy(
  obj: { metadata?: V1ObjectMeta },
  owner: { metadata?: V1ObjectMeta },
): boolean {
  const uid = owner.metadata?.uid;
  if (!uid) return false;
  return (obj.metadata?.ownerReferences ?? []).some(ref => ref.controller === true && ref.uid === uid);
}
