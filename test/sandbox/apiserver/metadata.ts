// ObjectMeta validation shared by every resource: names, labels, annotations, owner references.

import { fieldInvalid, fieldRequired } from './errors.ts';
import type { FieldError, KObject } from './types.ts';
import { isObject } from './util.ts';

const DNS1123_LABEL = '[a-z0-9]([-a-z0-9]*[a-z0-9])?';
const DNS1123_SUBDOMAIN = `${DNS1123_LABEL}(\\.${DNS1123_LABEL})*`;
const DNS1035_LABEL = '[a-z]([-a-z0-9]*[a-z0-9])?';
const QUALIFIED_NAME = '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]';
const LABEL_VALUE = `(${QUALIFIED_NAME})?`;

const subdomainRe = new RegExp(`^${DNS1123_SUBDOMAIN}$`);
const labelRe = new RegExp(`^${DNS1123_LABEL}$`);
const dns1035Re = new RegExp(`^${DNS1035_LABEL}$`);
const qualifiedRe = new RegExp(`^${QUALIFIED_NAME}$`);
const labelValueRe = new RegExp(`^${LABEL_VALUE}$`);

export type NameRule = 'subdomain' | 'label' | 'dns1035' | 'path';

/** Reasons a name is invalid, in apimachinery's words (empty when valid). */
export function nameErrors(name: string, rule: NameRule): string[] {
  const out: string[] = [];
  if (rule === 'path') {
    if (name === '.' || name === '..') out.push(`may not be '${name}'`);
    if (/[/%]/.test(name)) out.push(`may not contain '/' or '%'`);
    return out;
  }
  if (rule === 'subdomain') {
    if (name.length > 253) out.push('must be no more than 253 characters');
    if (!subdomainRe.test(name)) {
      out.push(
        `a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '${DNS1123_SUBDOMAIN}')`,
      );
    }
  } else if (rule === 'label') {
    if (name.length > 63) out.push('must be no more than 63 characters');
    if (!labelRe.test(name)) {
      out.push(
        `a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '${DNS1123_LABEL}')`,
      );
    }
  } else {
    if (name.length > 63) out.push('must be no more than 63 characters');
    if (!dns1035Re.test(name)) {
      out.push(
        `a DNS-1035 label must consist of lower case alphanumeric characters or '-', start with an alphabetic character, and end with an alphanumeric character (e.g. 'my-name',  or 'abc-123', regex used for validation is '${DNS1035_LABEL}')`,
      );
    }
  }
  return out;
}

function qualifiedNameErrors(key: string): string[] {
  const parts = key.split('/');
  let name = key;
  const out: string[] = [];
  if (parts.length === 2) {
    const [prefix, rest] = parts;
    name = rest;
    if (!prefix) out.push('prefix part must be non-empty');
    else if (!subdomainRe.test(prefix) || prefix.length > 253) {
      out.push(`prefix part ${nameErrors(prefix, 'subdomain').join('; ')}`);
    }
  } else if (parts.length > 2) {
    return [
      `a qualified name must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${QUALIFIED_NAME}') with an optional DNS subdomain prefix and '/' (e.g. 'example.com/MyName')`,
    ];
  }
  if (!name) out.push('name part must be non-empty');
  else if (name.length > 63) out.push('name part must be no more than 63 characters');
  if (name && !qualifiedRe.test(name)) {
    out.push(
      `name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '${QUALIFIED_NAME}')`,
    );
  }
  return out;
}

function validateLabels(labels: unknown, errors: FieldError[]): void {
  if (labels === undefined || labels === null) return;
  if (!isObject(labels)) {
    errors.push(fieldInvalid('metadata.labels', labels, 'must be a map of strings'));
    return;
  }
  for (const [key, value] of Object.entries(labels)) {
    for (const msg of qualifiedNameErrors(key)) errors.push(fieldInvalid('metadata.labels', key, msg));
    if (typeof value !== 'string') {
      errors.push(fieldInvalid(`metadata.labels`, value, 'label values must be strings'));
      continue;
    }
    if (value.length > 63)
      errors.push(fieldInvalid('metadata.labels', value, 'must be no more than 63 characters'));
    if (!labelValueRe.test(value)) {
      errors.push(
        fieldInvalid(
          'metadata.labels',
          value,
          `a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '${LABEL_VALUE}')`,
        ),
      );
    }
  }
}

function validateAnnotations(annotations: unknown, errors: FieldError[]): void {
  if (annotations === undefined || annotations === null) return;
  if (!isObject(annotations)) {
    errors.push(fieldInvalid('metadata.annotations', annotations, 'must be a map of strings'));
    return;
  }
  let size = 0;
  for (const [key, value] of Object.entries(annotations)) {
    for (const msg of qualifiedNameErrors(key)) errors.push(fieldInvalid('metadata.annotations', key, msg));
    if (typeof value !== 'string')
      errors.push(fieldInvalid('metadata.annotations', value, 'annotation values must be strings'));
    size += key.length + String(value).length;
  }
  if (size > 256 * 1024) {
    errors.push({
      field: 'metadata.annotations',
      reason: 'FieldValueTooLong',
      message: 'Too long: must have at most 262144 bytes',
    });
  }
}

function validateOwnerReferences(refs: unknown, errors: FieldError[]): void {
  if (refs === undefined || refs === null) return;
  if (!Array.isArray(refs)) {
    errors.push(fieldInvalid('metadata.ownerReferences', refs, 'must be a list'));
    return;
  }
  let controllers = 0;
  refs.forEach((ref: Record<string, unknown>) => {
    const p = 'metadata.ownerReferences';
    if (!ref || typeof ref !== 'object') return;
    if (!ref.apiVersion)
      errors.push(fieldInvalid(`${p}.apiVersion`, ref.apiVersion ?? '', 'version must not be empty'));
    if (!ref.kind) errors.push(fieldInvalid(`${p}.kind`, ref.kind ?? '', 'kind must not be empty'));
    if (!ref.name) errors.push(fieldInvalid(`${p}.name`, ref.name ?? '', 'name must not be empty'));
    if (!ref.uid) errors.push(fieldInvalid(`${p}.uid`, ref.uid ?? '', 'uid must not be empty'));
    if (ref.controller === true) controllers++;
  });
  if (controllers > 1) {
    errors.push(
      fieldInvalid('metadata.ownerReferences', refs, 'Only one reference can have Controller set to true'),
    );
  }
}

const STANDARD_FINALIZERS = new Set(['kubernetes', 'orphan', 'foregroundDeletion']);

function validateFinalizers(finalizers: unknown, errors: FieldError[]): void {
  if (finalizers === undefined || finalizers === null) return;
  if (!Array.isArray(finalizers)) {
    errors.push(fieldInvalid('metadata.finalizers', finalizers, 'must be a list'));
    return;
  }
  finalizers.forEach((f, i) => {
    if (typeof f !== 'string') errors.push(fieldInvalid(`metadata.finalizers[${i}]`, f, 'must be a string'));
    else if (!f.includes('/') && !STANDARD_FINALIZERS.has(f)) {
      errors.push(
        fieldInvalid(
          `metadata.finalizers[${i}]`,
          f,
          'name is neither a standard finalizer name nor is it fully qualified',
        ),
      );
    } else
      for (const msg of qualifiedNameErrors(f))
        errors.push(fieldInvalid(`metadata.finalizers[${i}]`, f, msg));
  });
}

/** Validate ObjectMeta of an object about to be written. */
export function validateObjectMeta(obj: KObject, rule: NameRule, namespaced: boolean): FieldError[] {
  const errors: FieldError[] = [];
  const meta = obj.metadata;
  if (!meta.name) {
    errors.push(fieldRequired('metadata.name', 'name or generateName is required'));
  } else {
    for (const msg of nameErrors(meta.name, rule)) errors.push(fieldInvalid('metadata.name', meta.name, msg));
  }
  if (namespaced && !meta.namespace) errors.push(fieldRequired('metadata.namespace'));
  if (!namespaced && meta.namespace)
    errors.push(fieldInvalid('metadata.namespace', meta.namespace, 'not allowed on this type'));
  validateLabels(meta.labels, errors);
  validateAnnotations(meta.annotations, errors);
  validateOwnerReferences(meta.ownerReferences, errors);
  validateFinalizers(meta.finalizers, errors);
  return errors;
}
