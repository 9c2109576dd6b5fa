// The parts of a CRD's structural OpenAPI v3 schema that validation reads.

/** One entry of x-kubernetes-validations. */
export interface ValidationRule {
  rule: string;
  message?: string;
  messageExpression?: string;
  reason?: 'FieldValueInvalid' | 'FieldValueForbidden' | 'FieldValueRequired' | 'FieldValueDuplicate';
  fieldPath?: string;
  optionalOldSelf?: boolean;
}

export interface OpenApiSchema {
  type?: 'object' | 'array' | 'string' | 'integer' | 'number' | 'boolean';
  format?: string;
  description?: string;
  properties?: Record<string, OpenApiSchema>;
  additionalProperties?: OpenApiSchema | boolean;
  items?: OpenApiSchema;
  required?: string[];
  enum?: unknown[];
  default?: unknown;
  pattern?: string;
  anyOf?: OpenApiSchema[];
  'x-kubernetes-validations'?: ValidationRule[];
  'x-kubernetes-int-or-string'?: boolean;
  'x-kubernetes-preserve-unknown-fields'?: boolean;
  'x-kubernetes-list-type'?: 'atomic' | 'set' | 'map';
  'x-kubernetes-list-map-keys'?: string[];
  'x-kubernetes-map-type'?: 'atomic' | 'granular';
  [keyword: string]: unknown;
}

/** The schema that applies to `key` of an object described by `schema`, if any. */
export function propertySchema(schema: OpenApiSchema | undefined, key: string): OpenApiSchema | undefined {
  const declared = schema?.properties?.[key];
  if (declared) return declared;
  const extra = schema?.additionalProperties;
  return typeof extra === 'object' ? extra : undefined;
}
