// A member's storage size, read once in one way for the PVC, the emptyDir and the quota flag.
import type { StorageSpec } from '../api/common.ts';
import { DEFAULT_STORAGE_SIZE } from '../api/defaults.ts';
import { parseQuantity, quantityCeil } from '../quantity.ts';

/** The size as a Kubernetes quantity string ("1Gi"; a bare number means bytes). */
export function storageSize(storage: StorageSpec | undefined): string {
  const size = storage?.size ?? DEFAULT_STORAGE_SIZE;
  return typeof size === 'number' ? String(size) : size;
}

/** The size in bytes, rounded up as a volume request is. */
export function storageBytes(storage: StorageSpec | undefined): bigint {
  return quantityCeil(parseQuantity(storageSize(storage)));
}

export function isMemoryMedium(storage: StorageSpec | undefined): boolean {
  return storage?.medium === 'Memory';
}
