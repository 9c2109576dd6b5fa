// Request paths → what they address, following the real server's RequestInfoFactory:
// /api/v1/..., /apis/<group>/<version>/..., optional /watch/ prefix, namespaces/<ns>/<resource>.

export interface RequestInfo {
  group: string;
  version: string;
  namespace?: string;
  resource: string;
  name?: string;
  subresource?: string;
  /** the deprecated /watch/ path form */
  watch: boolean;
}

const NAMESPACE_SUBRESOURCES = new Set(['status', 'finalize']);

/** Parse a resource path; undefined for discovery and other non-resource paths. */
export function parseResourcePath(pathname: string): RequestInfo | undefined {
  let parts: string[];
  try {
    parts = pathname.split('/').filter(Boolean).map(decodeURIComponent);
  } catch {
    return undefined;
  }
  let group: string;
  let version: string;
  let rest: string[];
  if (parts[0] === 'api') {
    group = '';
    version = parts[1];
    rest = parts.slice(2);
  } else if (parts[0] === 'apis') {
    group = parts[1];
    version = parts[2];
    rest = parts.slice(3);
  } else {
    return undefined;
  }
  if (!version || rest.length === 0) return undefined;
  let watch = false;
  if (rest[0] === 'watch') {
    watch = true;
    rest = rest.slice(1);
  }
  let namespace: string | undefined;
  if (
    rest[0] === 'namespaces' &&
    rest.length >= 3 &&
    !(rest.length === 3 && NAMESPACE_SUBRESOURCES.has(rest[2]))
  ) {
    namespace = rest[1];
    rest = rest.slice(2);
  }
  if (rest.length === 0 || rest.length > 3) return undefined;
  return { group, version, namespace, resource: rest[0], name: rest[1], subresource: rest[2], watch };
}
