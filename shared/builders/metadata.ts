// Labels and annotations of a created object: the user's additionalMetadata under the operator's
// own keys (operator keys win, and the etcdfn.io/ prefix is reserved for the operator).
import type { AdditionalMetadata } from '../api/common.ts';
import { mergeMetadata } from '../names.ts';

export interface LabelsAndAnnotations {
  labels: Record<string, string>;
  annotations?: Record<string, string>;
}

export function objectMetadata(
  extra: AdditionalMetadata | undefined,
  ours: Record<string, string>,
  ourAnnotations: Record<string, string> = {},
): LabelsAndAnnotations {
  const annotations = mergeMetadata(extra?.annotations, ourAnnotations);
  return {
    labels: mergeMetadata(extra?.labels, ours),
    ...(Object.keys(annotations).length > 0 && { annotations }),
  };
}
