// The cert-manager Certificates a cluster owns when a plane's certificate source is certManager:
// desired from shared/builders/cert-manager-certificate.ts, drift by spec (cert-manager does the
// signing and the renewal, and writes the Secret itself), the change for the generic apply.
import { isDeepStrictEqual } from 'node:util';
import type { CertManagerCertificate } from '../../builders/cert-manager-certificate.ts';
import type { KubeObject } from '../../k8s/objects.ts';
import type { ObjectChangeOf } from './types.ts';

export type Certificate = CertManagerCertificate & KubeObject;

/** Created when missing, its spec put back when it drifted; undefined when it is as wanted. */
export function certificateChange(
  existing: Certificate | undefined,
  desired: CertManagerCertificate,
): ObjectChangeOf<'create' | 'replace'> | undefined {
  if (!existing) return { kind: 'create', object: desired };
  if (isDeepStrictEqual(existing.spec, desired.spec)) return undefined;
  const object: Certificate = { ...existing, spec: desired.spec };
  return { kind: 'replace', object };
}
