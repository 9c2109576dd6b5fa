// Reading a Secret's values.
import type { V1Secret } from '@kubernetes/client-node';

/** The Secret's non-empty values, decoded (data is base64; stringData if an API server left it). */
export function secretValues(secret: V1Secret): Record<string, string> {
  const values: Record<string, string> = {};
  for (const [key, value] of Object.entries(secret.data ?? {})) {
    const decoded = Buffer.from(value, 'base64').toString('utf8').trim();
    if (decoded) values[key] = decoded;
  }
  for (const [key, value] of Object.entries(secret.stringData ?? {})) {
    if (value.trim() && !(key in values)) values[key] = value.trim();
  }
  return values;
}
