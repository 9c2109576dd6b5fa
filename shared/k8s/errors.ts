// Turns @kubernetes/client-node failures into facts the adapter can branch on. The client throws
// ApiException with the raw Status JSON as a string body; we parse it once, here.
import { ApiException } from '@kubernetes/client-node';

export interface ApiStatus {
  code: number;
  reason: string;
  message: string;
  causes: { field?: string; message?: string; reason?: string }[];
}

/** Returns the API server's Status for an HTTP error, or undefined for anything else (network, bugs). */
export function apiStatusOf(err: unknown): ApiStatus | undefined {
  if (!(err instanceof ApiException)) return undefined;
  const code = (err as ApiException<unknown>).code;
  const body = parseBody((err as ApiException<unknown>).body);
  const causes = (body.details as { causes?: unknown } | undefined)?.causes;
  return {
    code,
    reason: typeof body.reason === 'string' ? body.reason : '',
    message: typeof body.message === 'string' ? body.message : `HTTP ${code}`,
    causes: Array.isArray(causes) ? (causes as ApiStatus['causes']) : [],
  };
}

function parseBody(body: unknown): Record<string, unknown> {
  if (typeof body === 'string') {
    try {
      const parsed: unknown = JSON.parse(body);
      return parsed && typeof parsed === 'object' ? (parsed as Record<string, unknown>) : {};
    } catch {
      return { message: body };
    }
  }
  return body && typeof body === 'object' ? (body as Record<string, unknown>) : {};
}

/** An API call failed for a reason the caller cannot handle (5xx, 403, network): retry later. */
export class KubeApiError extends Error {
  readonly code: number | undefined;
  readonly reason: string;
  constructor(operation: string, err: unknown) {
    const status = apiStatusOf(err);
    const detail = status ? `${status.code} ${status.reason}: ${status.message}` : errorMessage(err);
    super(`${operation} failed: ${detail}`, { cause: err });
    this.name = 'KubeApiError';
    this.code = status?.code;
    this.reason = status?.reason ?? '';
  }
}

export function errorMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}
