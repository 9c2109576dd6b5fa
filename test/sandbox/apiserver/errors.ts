// Errors as the real API server reports them: an HTTP code and a metav1.Status body.

import type { FieldError, ResourceDef } from './types.ts';

export interface StatusDetails {
  name?: string;
  group?: string;
  kind?: string;
  uid?: string;
  causes?: { reason: string; message: string; field?: string }[];
  retryAfterSeconds?: number;
}

export interface StatusBody {
  kind: 'Status';
  apiVersion: 'v1';
  metadata: Record<string, never>;
  status: 'Failure' | 'Success';
  message?: string;
  reason?: string;
  details?: StatusDetails;
  code: number;
}

export class ApiError extends Error {
  readonly code: number;
  readonly reason: string;
  readonly details: StatusDetails | undefined;

  constructor(code: number, reason: string, message: string, details?: StatusDetails) {
    super(message);
    this.code = code;
    this.reason = reason;
    this.details = details;
  }

  toStatus(): StatusBody {
    const body: StatusBody = {
      kind: 'Status',
      apiVersion: 'v1',
      metadata: {},
      status: 'Failure',
      message: this.message,
      reason: this.reason,
      code: this.code,
    };
    body.details = this.details ?? {};
    return body;
  }
}

/** "etcdclusters.etcdfn.io" or "pods" (core group has no suffix). */
export function qualifiedResource(def: Pick<ResourceDef, 'resource' | 'group'>): string {
  return def.group ? `${def.resource}.${def.group}` : def.resource;
}

/** "EtcdCluster.etcdfn.io" or "Pod". */
export function qualifiedKind(def: Pick<ResourceDef, 'kind' | 'group'>): string {
  return def.group ? `${def.kind}.${def.group}` : def.kind;
}

export function notFound(def: Pick<ResourceDef, 'resource' | 'group'>, name: string): ApiError {
  return new ApiError(404, 'NotFound', `${qualifiedResource(def)} "${name}" not found`, {
    name,
    group: def.group || undefined,
    kind: def.resource,
  });
}

export function resourceNotFound(): ApiError {
  return new ApiError(404, 'NotFound', 'the server could not find the requested resource', {});
}

export function alreadyExists(def: Pick<ResourceDef, 'resource' | 'group'>, name: string): ApiError {
  return new ApiError(409, 'AlreadyExists', `${qualifiedResource(def)} "${name}" already exists`, {
    name,
    group: def.group || undefined,
    kind: def.resource,
  });
}

export function conflict(def: Pick<ResourceDef, 'resource' | 'group'>, name: string, why?: string): ApiError {
  const reason =
    why ?? 'the object has been modified; please apply your changes to the latest version and try again';
  return new ApiError(
    409,
    'Conflict',
    `Operation cannot be fulfilled on ${qualifiedResource(def)} "${name}": ${reason}`,
    {
      name,
      group: def.group || undefined,
      kind: def.resource,
    },
  );
}

export function badRequest(message: string): ApiError {
  return new ApiError(400, 'BadRequest', message);
}

export function methodNotAllowed(): ApiError {
  return new ApiError(
    405,
    'MethodNotAllowed',
    'the server does not allow this method on the requested resource',
    {},
  );
}

export function unsupportedMediaType(accepted: string[]): ApiError {
  return new ApiError(
    415,
    'UnsupportedMediaType',
    `the body of the request was in an unknown format - accepted media types include: ${accepted.join(', ')}`,
  );
}

export function forbidden(def: Pick<ResourceDef, 'resource' | 'group'>, name: string, why: string): ApiError {
  return new ApiError(403, 'Forbidden', `${qualifiedResource(def)} "${name}" is forbidden: ${why}`, {
    name,
    group: def.group || undefined,
    kind: def.resource,
  });
}

export function gone(message: string): ApiError {
  return new ApiError(410, 'Expired', message);
}

export function internalError(message: string): ApiError {
  return new ApiError(500, 'InternalError', `Internal error occurred: ${message}`, {
    causes: [{ reason: '', message }],
  });
}

/** 422 Invalid with one cause per field error, shaped as kubectl expects (§11 of the reference). */
export function invalid(
  def: Pick<ResourceDef, 'kind' | 'group'>,
  name: string,
  errors: FieldError[],
): ApiError {
  const lines = errors.map(e => `${e.field}: ${e.message}`);
  const summary = lines.length === 1 ? lines[0] : `[${lines.join(', ')}]`;
  return new ApiError(422, 'Invalid', `${qualifiedKind(def)} "${name}" is invalid: ${summary}`, {
    name,
    group: def.group || undefined,
    kind: def.kind,
    causes: errors.map(e => ({ reason: e.reason, message: e.message, field: e.field })),
  });
}

// ---- field errors in the style of k8s.io/apimachinery/pkg/util/validation/field ----

/** How field.Error prints a value: strings quoted, numbers and booleans bare, others as JSON. */
export function formatValue(value: unknown): string {
  if (typeof value === 'string') return JSON.stringify(value);
  if (value === null || value === undefined) return 'null';
  if (typeof value === 'number' || typeof value === 'boolean') return String(value);
  return JSON.stringify(JSON.stringify(value));
}

export function fieldInvalid(field: string, value: unknown, detail: string): FieldError {
  return { field, reason: 'FieldValueInvalid', message: `Invalid value: ${formatValue(value)}: ${detail}` };
}

export function fieldTypeInvalid(field: string, value: unknown, detail: string): FieldError {
  return {
    field,
    reason: 'FieldValueTypeInvalid',
    message: `Invalid value: ${formatValue(value)}: ${detail}`,
  };
}

export function fieldRequired(field: string, detail = ''): FieldError {
  return {
    field,
    reason: 'FieldValueRequired',
    message: detail ? `Required value: ${detail}` : 'Required value',
  };
}

export function fieldNotSupported(field: string, value: unknown, allowed: string[]): FieldError {
  const list = allowed.map(v => JSON.stringify(v)).join(', ');
  return {
    field,
    reason: 'FieldValueNotSupported',
    message: `Unsupported value: ${formatValue(value)}${allowed.length ? `: supported values: ${list}` : ''}`,
  };
}

export function fieldForbidden(field: string, detail: string): FieldError {
  return { field, reason: 'FieldValueForbidden', message: `Forbidden: ${detail}` };
}

export function fieldDuplicate(field: string, value: unknown): FieldError {
  return { field, reason: 'FieldValueDuplicate', message: `Duplicate value: ${formatValue(value)}` };
}

export function fieldTooLong(field: string, max: number): FieldError {
  return { field, reason: 'FieldValueTooLong', message: `Too long: may not be more than ${max} bytes` };
}

export function fieldTooMany(field: string, actual: number, max: number): FieldError {
  return {
    field,
    reason: 'FieldValueTooMany',
    message: `Too many: ${actual}: must have at most ${max} items`,
  };
}
