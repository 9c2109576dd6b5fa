// Label selectors (equality and set-based) and field selectors, parsed from query strings.

import { badRequest } from './errors.ts';

export type LabelRequirement =
  | { key: string; op: 'exists' | '!' }
  | { key: string; op: 'in' | 'notin' | '=' | '!='; values: string[] }
  | { key: string; op: 'gt' | 'lt'; value: number };

export type LabelSelector = LabelRequirement[];

function tokenize(input: string): string[] {
  const tokens: string[] = [];
  let i = 0;
  while (i < input.length) {
    const c = input[i];
    if (/\s/.test(c)) {
      i++;
    } else if ('(),'.includes(c)) {
      tokens.push(c);
      i++;
    } else if (c === '!' && input[i + 1] === '=') {
      tokens.push('!=');
      i += 2;
    } else if (c === '=' && input[i + 1] === '=') {
      tokens.push('==');
      i += 2;
    } else if ('!=<>'.includes(c)) {
      tokens.push(c);
      i++;
    } else {
      let j = i;
      while (j < input.length && !/[\s(),!=<>]/.test(input[j])) j++;
      tokens.push(input.slice(i, j));
      i = j;
    }
  }
  return tokens;
}

const IDENT = /^[A-Za-z0-9_./-]+$/;

class LabelParser {
  private pos = 0;
  private readonly tokens: string[];
  constructor(tokens: string[]) {
    this.tokens = tokens;
  }

  private peek(): string | undefined {
    return this.tokens[this.pos];
  }

  private next(): string | undefined {
    return this.tokens[this.pos++];
  }

  private fail(found: string | undefined, expected: string): never {
    throw badRequest(`unable to parse requirement: found '${found ?? ''}', expected: ${expected}`);
  }

  parse(): LabelSelector {
    const out: LabelSelector = [];
    while (this.peek() !== undefined) {
      out.push(this.requirement());
      const sep = this.next();
      if (sep !== undefined && sep !== ',') this.fail(sep, "','");
    }
    return out;
  }

  private identifier(): string {
    const tok = this.next();
    if (tok === undefined || !IDENT.test(tok) || tok === 'in' || tok === 'notin')
      this.fail(tok, 'identifier');
    return tok;
  }

  private requirement(): LabelRequirement {
    if (this.peek() === '!') {
      this.next();
      return { key: this.identifier(), op: '!' };
    }
    const key = this.identifier();
    const op = this.peek();
    if (op === undefined || op === ',') return { key, op: 'exists' };
    this.next();
    if (op === '=' || op === '==' || op === '!=') {
      const value = this.peek() === undefined || this.peek() === ',' ? '' : this.identifier();
      return { key, op: op === '!=' ? '!=' : '=', values: [value] };
    }
    if (op === 'in' || op === 'notin') return { key, op, values: this.valueSet() };
    if (op === '>' || op === '<') {
      const raw = this.identifier();
      const value = Number(raw);
      if (!Number.isInteger(value))
        throw badRequest(
          `unable to parse requirement: for 'Gt', 'Lt' operators, the value must be an integer`,
        );
      return { key, op: op === '>' ? 'gt' : 'lt', value };
    }
    return this.fail(op, '=, !=, ==, in, notin');
  }

  private valueSet(): string[] {
    if (this.next() !== '(') this.fail(this.tokens[this.pos - 1], "'('");
    const values: string[] = [];
    for (;;) {
      const tok = this.next();
      if (tok === ')') return values;
      if (tok === ',') {
        if (values.length === 0 || this.peek() === ',' || this.peek() === ')') values.push('');
        continue;
      }
      if (tok === undefined || !IDENT.test(tok)) this.fail(tok, "',', ')' or identifier");
      values.push(tok);
    }
  }
}

export function parseLabelSelector(input: string | null | undefined): LabelSelector {
  if (!input) return [];
  return new LabelParser(tokenize(input)).parse();
}

export function matchLabels(selector: LabelSelector, labels: Record<string, string> | undefined): boolean {
  for (const req of selector) {
    const has = labels !== undefined && Object.prototype.hasOwnProperty.call(labels, req.key);
    const value = has ? labels[req.key] : undefined;
    switch (req.op) {
      case 'exists':
        if (!has) return false;
        break;
      case '!':
        if (has) return false;
        break;
      case '=':
      case 'in':
        if (!has || !req.values.includes(value!)) return false;
        break;
      case '!=':
      case 'notin':
        if (has && req.values.includes(value!)) return false;
        break;
      case 'gt':
      case 'lt': {
        const n = Number(value);
        if (!has || !Number.isInteger(n) || (req.op === 'gt' ? n <= req.value : n >= req.value)) return false;
        break;
      }
    }
  }
  return true;
}

export interface FieldRequirement {
  field: string;
  op: '=' | '!=';
  value: string;
}

function splitUnescaped(input: string, sep: string): string[] {
  const parts: string[] = [];
  let cur = '';
  for (let i = 0; i < input.length; i++) {
    const c = input[i];
    if (c === '\\' && i + 1 < input.length) {
      cur += c + input[i + 1];
      i++;
    } else if (c === sep) {
      parts.push(cur);
      cur = '';
    } else {
      cur += c;
    }
  }
  parts.push(cur);
  return parts;
}

function unescapeValue(value: string): string {
  return value.replace(/\\(.)/g, '$1');
}

export function parseFieldSelector(input: string | null | undefined): FieldRequirement[] {
  if (!input) return [];
  const out: FieldRequirement[] = [];
  for (const term of splitUnescaped(input, ',')) {
    if (!term.trim()) continue;
    const m = /^([^=!]+)(!=|==|=)(.*)$/.exec(term);
    if (!m) throw badRequest(`invalid selector: '${input}'; can't understand '${term}'`);
    out.push({ field: m[1].trim(), op: m[2] === '!=' ? '!=' : '=', value: unescapeValue(m[3].trim()) });
  }
  return out;
}
