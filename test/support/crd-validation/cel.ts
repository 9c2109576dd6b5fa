// CEL evaluation with the Kubernetes flavour that CRD x-kubernetes-validations rules expect:
// `self`/`oldSelf`, the strings extension, and the Quantity library (quantity(), isQuantity() and
// the Quantity methods). Used by the CRD tests and by the sandbox API server alike.
import { celEnv, CelScalar, isCelError, parse, plan } from '@bufbuild/cel';
import type { CelInput, CelResult } from '@bufbuild/cel';
import { strings } from '@bufbuild/cel/ext';
import { celQuantityFuncs } from './cel-quantity.ts';
import type { OpenApiSchema } from './schema.ts';
import { propertySchema } from './schema.ts';

export type RuleResult = { ok: true } | { ok: false; error?: string };

/** A rule ready to run: call it with plain JSON values (integral numbers become CEL ints). */
export interface CompiledRule {
  (self: unknown, oldSelf?: unknown): RuleResult;
  readonly rule: string;
  /** True when the rule reads oldSelf: Kubernetes runs it only on update, where an old value exists. */
  readonly transition: boolean;
  /** Same as calling the rule, for values already converted with toCelValue(). */
  readonly evaluateConverted: (self: unknown, oldSelf?: unknown) => RuleResult;
}

export class CelCompileError extends Error {
  readonly expression: string;
  constructor(expression: string, cause: unknown) {
    super(
      `cannot compile CEL expression "${expression}": ${cause instanceof Error ? cause.message : String(cause)}`,
    );
    this.expression = expression;
    this.name = 'CelCompileError';
  }
}

type Program = (bindings: Record<string, CelInput>) => CelResult;

const env = celEnv({
  variables: { self: CelScalar.DYN, oldSelf: CelScalar.DYN },
  registry: celQuantityFuncs.registry,
  funcs: [...strings, ...celQuantityFuncs.funcs],
});

const rules = new Map<string, CompiledRule>();

/** Compiles (once per distinct text) a validation rule. Throws CelCompileError on a syntax error. */
export function compileRule(rule: string): CompiledRule {
  const cached = rules.get(rule);
  if (cached) return cached;
  const { program, transition } = compile(rule);
  const evaluateConverted = (self: unknown, oldSelf?: unknown): RuleResult =>
    toRuleResult(run(program, self, oldSelf));
  const compiled = Object.assign(
    (self: unknown, oldSelf?: unknown) =>
      evaluateConverted(toCelValue(self), oldSelf === undefined ? undefined : toCelValue(oldSelf)),
    { rule, transition, evaluateConverted },
  );
  rules.set(rule, compiled);
  return compiled;
}

/** True when the rule references oldSelf (a transition rule). */
export function isTransitionRule(rule: string): boolean {
  return compileRule(rule).transition;
}

const messageExpressions = new Map<string, Program>();

/**
 * Evaluates a messageExpression over already-converted values. Returns undefined when it fails or
 * does not produce a non-empty string; Kubernetes then falls back to the static message.
 */
export function evaluateMessageExpression(
  expression: string,
  self: unknown,
  oldSelf?: unknown,
): string | undefined {
  let program = messageExpressions.get(expression);
  if (!program) {
    program = compile(expression).program;
    messageExpressions.set(expression, program);
  }
  const result = run(program, self, oldSelf);
  return typeof result === 'string' && result.trim() !== '' ? result : undefined;
}

/**
 * Converts JSON to the values CEL sees in Kubernetes: `type: integer` (and int-or-string integers)
 * become CEL int (bigint), `type: number` stays double. Without a schema every integral number is
 * taken as an int, which is what a rule over integer fields expects.
 */
export function toCelValue(value: unknown, schema?: OpenApiSchema): unknown {
  if (typeof value === 'number') {
    return schema?.type !== 'number' && Number.isInteger(value) ? BigInt(value) : value;
  }
  if (Array.isArray(value)) return value.map(item => toCelValue(item, schema?.items));
  if (value !== null && typeof value === 'object') {
    // A fresh plain object: CEL only accepts objects whose constructor is Object.
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) out[key] = toCelValue(item, propertySchema(schema, key));
    return out;
  }
  return value;
}

function compile(expression: string): { program: Program; transition: boolean } {
  try {
    const parsed = parse(expression);
    return { program: plan(env, parsed) as Program, transition: referencesOldSelf(parsed) };
  } catch (err) {
    throw new CelCompileError(expression, err);
  }
}

function run(program: Program, self: unknown, oldSelf: unknown): CelResult {
  const bindings: Record<string, CelInput> = { self: self as CelInput };
  if (oldSelf !== undefined) bindings.oldSelf = oldSelf as CelInput;
  return program(bindings);
}

function toRuleResult(result: CelResult): RuleResult {
  if (result === true) return { ok: true };
  if (result === false) return { ok: false };
  if (isCelError(result)) return { ok: false, error: result.message };
  return { ok: false, error: 'rule did not evaluate to a bool' };
}

/** Walks the parsed expression looking for the identifier oldSelf (string literals do not count). */
function referencesOldSelf(node: unknown): boolean {
  if (Array.isArray(node)) return node.some(referencesOldSelf);
  if (node === null || typeof node !== 'object') return false;
  const kind = node as { case?: unknown; value?: { name?: unknown } };
  if (kind.case === 'identExpr' && kind.value?.name === 'oldSelf') return true;
  return Object.values(node).some(referencesOldSelf);
}
