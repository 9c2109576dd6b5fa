// PersistentVolumeClaims and StorageClasses as the real API server treats them:
// - the DefaultStorageClass admission plugin gives a claim created with no storageClassName the
//   default class (annotation storageclass.kubernetes.io/is-default-class, newest wins); '' stays '';
// - validation (ValidatePersistentVolumeClaimUpdate): a bound claim's spec is immutable except
//   resources.requests (an unbound claim's requests are immutable too), and
//   requests.storage never goes below its previous value (422);
// - the PersistentVolumeClaimResize admission plugin: growing requests.storage needs a bound claim
//   whose StorageClass (the same on both sides, not '') has allowVolumeExpansion: true (403).
// The sandbox starts with one default class, `standard`, that allows expansion, as most managed
// clusters' default classes do (kind's does not: create a class without it to see the refusal).
import { compareQuantities, parseQuantity } from '../../../shared/quantity.ts';
import { fieldForbidden, fieldRequired, forbidden } from './errors.ts';
import type { FieldError, KObject, Strategy } from './types.ts';
import { clone, deepEqual } from './util.ts';

// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Any = Record<string, any>;

export const STORAGE_CLASS_KEY = 'storage.k8s.io/storageclasses';
export const DEFAULT_CLASS_ANNOTATION = 'storageclass.kubernetes.io/is-default-class';

/** The class the sandbox creates at start (unless one by that name exists). */
export const SANDBOX_DEFAULT_CLASS: KObject = {
  apiVersion: 'storage.k8s.io/v1',
  kind: 'StorageClass',
  metadata: { name: 'standard', annotations: { [DEFAULT_CLASS_ANNOTATION]: 'true' } },
  provisioner: 'sandbox.etcdfn.io/hostpath',
  reclaimPolicy: 'Delete',
  volumeBindingMode: 'Immediate',
  allowVolumeExpansion: true,
};

const PVC_MESSAGE =
  'spec is immutable after creation except resources.requests and volumeAttributesClassName for bound claims';
const RESIZE_MESSAGE =
  'only dynamically provisioned pvc can be resized and the storageclass that provisions the pvc must support resize';
const PVC_DEF = { resource: 'persistentvolumeclaims', group: '' };

const isBound = (pvc: KObject): boolean => (pvc.status as Any)?.phase === 'Bound';
const requested = (pvc: KObject): string | undefined =>
  (pvc.spec as Any)?.resources?.requests?.storage as string | undefined;

function pvcMasked(spec: Any, old: Any, bound: boolean): Any {
  const s = clone(spec ?? {});
  if (bound && s.resources?.requests) delete s.resources.requests.storage;
  delete s.volumeAttributesClassName;
  if (!old?.volumeName) delete s.volumeName;
  return s;
}

/** Compares two quantities; undefined when either does not parse (validation reports that elsewhere). */
function compare(a: string | undefined, b: string | undefined): number | undefined {
  if (a === undefined || b === undefined) return undefined;
  try {
    return compareQuantities(parseQuantity(String(a)), parseQuantity(String(b)));
  } catch {
    return undefined;
  }
}

/** The default class: the newest of those annotated default, as DefaultStorageClass picks. */
function defaultClass(classes: KObject[]): KObject | undefined {
  return classes
    .filter(c => c.metadata.annotations?.[DEFAULT_CLASS_ANNOTATION] === 'true')
    .sort(
      (a, b) =>
        (b.metadata.creationTimestamp ?? '').localeCompare(a.metadata.creationTimestamp ?? '') ||
        (a.metadata.name ?? '').localeCompare(b.metadata.name ?? ''),
    )[0];
}

export function pvcStrategy(listClasses: () => KObject[]): Strategy {
  return {
    defaults(obj) {
      const spec = (obj.spec ??= {}) as Any;
      spec.volumeMode ??= 'Filesystem';
    },
    prepareCreate(obj) {
      const spec = obj.spec as Any;
      if (spec.storageClassName === undefined || spec.storageClassName === null) {
        const name = defaultClass(listClasses())?.metadata.name;
        if (name) spec.storageClassName = name;
        else delete spec.storageClassName;
      }
      obj.status = { phase: 'Pending' };
    },
    createFinalizers: () => ['kubernetes.io/pvc-protection'],
    validateCreate(obj) {
      const spec = obj.spec as Any;
      const errors: FieldError[] = [];
      if (!(spec.accessModes ?? []).length)
        errors.push(fieldRequired('spec.accessModes', 'at least 1 access mode is required'));
      if (!spec.resources?.requests?.storage) errors.push(fieldRequired('spec.resources[storage]'));
      return errors;
    },
    validateUpdate(obj, old) {
      const oldSpec = old.spec as Any;
      const bound = isBound(obj);
      if (!deepEqual(pvcMasked(obj.spec as Any, oldSpec, bound), pvcMasked(oldSpec, oldSpec, bound))) {
        return [fieldForbidden('spec', PVC_MESSAGE)];
      }
      if ((compare(requested(obj), requested(old)) ?? 0) < 0) {
        return [
          fieldForbidden('spec.resources.requests.storage', 'field can not be less than previous value'),
        ];
      }
      return [];
    },
    admitUpdate(obj, old) {
      if ((compare(requested(obj), requested(old)) ?? 0) <= 0) return;
      const name = obj.metadata.name ?? '';
      if (!isBound(old))
        throw forbidden(PVC_DEF, name, 'Only bound persistent volume claims can be expanded');
      const className = (obj.spec as Any)?.storageClassName as string | undefined;
      const oldClassName = (old.spec as Any)?.storageClassName as string | undefined;
      const sc = className ? listClasses().find(c => c.metadata.name === className) : undefined;
      const allowed = !!className && className === oldClassName && (sc as Any)?.allowVolumeExpansion === true;
      if (!allowed) throw forbidden(PVC_DEF, name, RESIZE_MESSAGE);
    },
  };
}
