// JSON merge patch (RFC 7396) pieces shared by the drift checks.

/** A patch turning the map `existing` into exactly `desired` (null deletes a key), or undefined. */
export function mapMergePatch(
  existing: Record<string, string> | undefined,
  desired: Record<string, string>,
): Record<string, string | null> | undefined {
  const patch: Record<string, string | null> = {};
  for (const key of Object.keys(existing ?? {})) if (!(key in desired)) patch[key] = null;
  for (const [key, value] of Object.entries(desired)) if (existing?.[key] !== value) patch[key] = value;
  return Object.keys(patch).length > 0 ? patch : undefined;
}
