import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { CelCompileError, compileRule, isTransitionRule, toCelValue } from '../support/crd-validation/cel.ts';
import type { Crd, RuleLocation } from '../support/crd-validation/crd-rules.ts';
import { collectRules, crdSchema, loadCrds, validateObject } from '../support/crd-validation/crd-rules.ts';
import { VERSION } from '../../shared/api/group.ts';
import type { Case, RuleCases } from './crd-rule-cases.ts';
import { RULE_CASES } from './crd-rule-cases.ts';

const crds = loadCrds();
const crdOf = (kind: string): Crd => {
  const crd = crds.find(c => c.spec.names.kind === kind);
  assert.ok(crd, `no CRD for ${kind} in crds/`);
  return crd;
};
const rulesOf = (kind: string): RuleLocation[] => collectRules(crdSchema(crdOf(kind), VERSION));

function findRule(entry: RuleCases): RuleLocation {
  const found = rulesOf(entry.kind).filter(
    r => r.path === entry.path && (r.rule.message ?? '').includes(entry.match),
  );
  assert.equal(found.length, 1, `${entry.kind} ${entry.path} "${entry.match}" should match exactly one rule`);
  return found[0];
}

const show = (c: Case) =>
  JSON.stringify(c.oldSelf === undefined ? c.self : { oldSelf: c.oldSelf, self: c.self });

describe('every CEL rule in crds/, against its own text', () => {
  for (const entry of RULE_CASES) {
    describe(`${entry.kind} ${entry.path}: ${entry.match}`, () => {
      const location = findRule(entry);
      const evaluate = compileRule(location.rule.rule);

      it('has valid and invalid cases, with oldSelf for a transition rule', () => {
        assert.ok(entry.valid.length > 0 && entry.invalid.length > 0);
        if (!location.transition) return;
        for (const c of [...entry.valid, ...entry.invalid]) assert.notEqual(c.oldSelf, undefined, show(c));
      });
      for (const c of entry.valid) {
        it(`accepts ${show(c)}`, () => assert.deepEqual(evaluate(c.self, c.oldSelf), { ok: true }));
      }
      for (const c of entry.invalid) {
        // Must evaluate to false: an evaluation error would mean the case tests nothing.
        it(`rejects ${show(c)}`, () => assert.deepEqual(evaluate(c.self, c.oldSelf), { ok: false }));
      }
    });
  }

  it('has a case entry for every rule found in crds/', () => {
    const covered = new Set(RULE_CASES.map(entry => findRule(entry)));
    const missing: string[] = [];
    for (const crd of crds) {
      for (const location of rulesOf(crd.spec.names.kind)) {
        const hit = [...covered].some(c => c.path === location.path && c.rule.rule === location.rule.rule);
        if (!hit) missing.push(`${crd.spec.names.kind} ${location.path}: ${location.rule.rule}`);
      }
    }
    assert.deepEqual(missing, []);
  });

  it('gives every rule an actionable message of its own', () => {
    for (const crd of crds) {
      for (const location of rulesOf(crd.spec.names.kind)) {
        const message = location.rule.message ?? '';
        assert.ok(message.length > 20, `${location.path}: ${location.rule.rule}`);
        assert.ok(!message.includes('\n'), `${location.path}: message should be one line`);
      }
    }
  });

  it('counts the rules per CRD', () => {
    const counts = Object.fromEntries(crds.map(c => [c.spec.names.kind, rulesOf(c.spec.names.kind).length]));
    assert.deepEqual(counts, { EtcdCluster: 40, EtcdMember: 11, EtcdSnapshot: 5, EtcdSnapshotSchedule: 5 });
  });

  it('keeps transition rules out of status', () => {
    for (const crd of crds) {
      const status = crdSchema(crd, VERSION).properties?.status;
      assert.ok(status);
      assert.deepEqual(collectRules(status), [], `${crd.metadata.name} status carries rules`);
    }
  });
});

describe('validateObject on whole EtcdClusters', () => {
  const crd = crdOf('EtcdCluster');
  const cluster = (spec: Record<string, unknown> = {}, status?: Record<string, unknown>) => ({
    apiVersion: 'etcdfn.io/v1alpha1',
    kind: 'EtcdCluster',
    metadata: { name: 'main', namespace: 'default', generation: 1 },
    spec: {
      replicas: 3,
      version: '3.5.16',
      storage: { size: '1Gi', medium: '' },
      progressDeadlineSeconds: 600,
      ...spec,
    },
    ...(status ? { status } : {}),
  });
  const paths = (errors: { path: string }[]) => errors.map(e => e.path);

  it('accepts a defaulted cluster on create', () => {
    assert.deepEqual(validateObject(crd, VERSION, cluster()), []);
  });

  it('rejects pausing a memory-backed cluster at .spec', () => {
    const errors = validateObject(
      crd,
      VERSION,
      cluster({ replicas: 0, storage: { size: '1Gi', medium: 'Memory' } }),
    );
    assert.deepEqual(paths(errors), ['.spec']);
    assert.match(errors[0].message, /replicas 0 \(pause\) is not supported with storage\.medium Memory/);
    assert.equal(errors[0].reason, 'FieldValueInvalid');
    assert.equal(errors[0].error, undefined);
  });

  it('rejects shrinking storage on update, at .spec.storage.size', () => {
    const old = cluster({ storage: { size: '2Gi', medium: '' } });
    const errors = validateObject(crd, VERSION, cluster({ storage: { size: '1Gi', medium: '' } }), old);
    assert.deepEqual(paths(errors), ['.spec.storage.size']);
    assert.match(errors[0].message, /cannot be decreased/);
  });

  it('passes an untouched update and a status-only update', () => {
    const old = cluster({ tls: { client: { auto: {} }, peer: { auto: {} } } });
    assert.deepEqual(validateObject(crd, VERSION, structuredClone(old), old), []);
    const withStatus = {
      ...structuredClone(old),
      status: { phase: 'Running', readyMembers: 3, ready: '3/3' },
    };
    assert.deepEqual(validateObject(crd, VERSION, withStatus, old), []);
  });

  it('skips transition rules on create and runs them on update', () => {
    const storage = { size: '1Gi', medium: '', storageClassName: 'fast' };
    assert.deepEqual(validateObject(crd, VERSION, cluster({ storage })), []);
    const errors = validateObject(crd, VERSION, cluster({ storage }), cluster());
    assert.deepEqual(paths(errors), ['.spec']);
    assert.match(errors[0].message, /storageClassName cannot be added/);
  });

  it('reports each broken rule, with nested paths', () => {
    const errors = validateObject(
      crd,
      VERSION,
      cluster({
        version: '3.7.0',
        tls: { client: {}, peer: { auto: {}, secretRef: { name: 'p' } } },
        options: { autoCompactionMode: 'periodic' },
      }),
    );
    assert.deepEqual(paths(errors).sort(), [
      '.spec.options',
      '.spec.tls.client',
      '.spec.tls.peer', // exactly one source
      '.spec.version',
    ]);
  });

  it('ratchets: an unchanged value that breaks a newer rule does not block other edits', () => {
    const reserved = (value: string) => ({ additionalMetadata: { annotations: { 'etcdfn.io/x': value } } });
    const old = cluster(reserved('y'));
    const updated = cluster({ ...reserved('y'), replicas: 5 });
    assert.deepEqual(validateObject(crd, VERSION, updated, old), []);
    assert.deepEqual(paths(validateObject(crd, VERSION, updated, old, { ratcheting: false })), [
      '.spec.additionalMetadata.annotations',
    ]);
    // Touching the offending value itself is checked again.
    assert.deepEqual(paths(validateObject(crd, VERSION, cluster(reserved('z')), old)), [
      '.spec.additionalMetadata.annotations',
    ]);
  });

  it('points a reserved metadata key at the map that holds it', () => {
    const additionalMetadata = { labels: { team: 'a' }, annotations: { 'etcdfn.io/x': 'y' } };
    const errors = validateObject(crd, VERSION, cluster({ additionalMetadata }));
    assert.deepEqual(paths(errors), ['.spec.additionalMetadata.annotations']);
  });

  it('runs restore rules at their paths', () => {
    const restore = {
      source: { s3: { endpoint: 'minio:9000', bucket: 'b', credentialsSecretRef: { name: 'c' } } },
    };
    const errors = validateObject(crd, VERSION, cluster({ bootstrap: { restore } }));
    assert.deepEqual(paths(errors).sort(), ['.spec.bootstrap.restore', '.spec.bootstrap.restore.source.s3']);
  });
});

describe('validateObject on the other kinds', () => {
  it('freezes an EtcdSnapshot spec but lets status change', () => {
    const crd = crdOf('EtcdSnapshot');
    const snap = {
      apiVersion: 'etcdfn.io/v1alpha1',
      kind: 'EtcdSnapshot',
      metadata: { name: 's1' },
      spec: {
        clusterRef: { name: 'main' },
        destination: {
          s3: { endpoint: 'https://s3.example', bucket: 'b', credentialsSecretRef: { name: 's' } },
        },
      },
    };
    assert.deepEqual(validateObject(crd, VERSION, snap), []);
    assert.deepEqual(validateObject(crd, VERSION, { ...snap, status: { phase: 'Complete' } }, snap), []);
    const moved = { ...snap, spec: { ...snap.spec, clusterRef: { name: 'other' } } };
    assert.deepEqual(
      validateObject(crd, VERSION, moved, snap).map(e => e.path),
      ['.spec'],
    );
  });

  it('reports a rule that cannot be evaluated as an error, not a silent pass', () => {
    const crd = crdOf('EtcdSnapshot');
    // No endpoint: schema validation would reject this first; CEL alone finds no such key.
    const snap = { spec: { clusterRef: { name: 'main' }, destination: { s3: { bucket: 'b' } } } };
    const errors = validateObject(crd, VERSION, snap);
    assert.deepEqual(
      errors.map(e => e.path),
      ['.spec.destination.s3'],
    );
    assert.ok(errors[0].error);
    assert.match(errors[0].message, /evaluating rule/);
  });

  it('checks an EtcdSnapshotSchedule', () => {
    const crd = crdOf('EtcdSnapshotSchedule');
    const schedule = (spec: Record<string, unknown>) => ({
      spec: {
        clusterRef: { name: 'main' },
        schedule: '0 */6 * * *',
        suspend: false,
        retention: { keepLast: 7 },
        destination: {
          s3: { endpoint: 'https://s3.example', bucket: 'b', credentialsSecretRef: { name: 's' } },
        },
        ...spec,
      },
    });
    assert.deepEqual(validateObject(crd, VERSION, schedule({ timeZone: 'Europe/Berlin' })), []);
    assert.deepEqual(
      validateObject(crd, VERSION, schedule({ schedule: '0 3 * * * *', timeZone: 'CET ' })).map(e => e.path),
      ['.spec.schedule', '.spec.timeZone'],
    );
  });
});

describe('validateObject semantics (a made-up CRD)', () => {
  const schema = {
    type: 'object',
    properties: {
      spec: {
        type: 'object',
        properties: {
          ratio: {
            type: 'number',
            'x-kubernetes-validations': [{ rule: 'type(self) == double', message: 'double' }],
          },
          count: {
            type: 'integer',
            'x-kubernetes-validations': [{ rule: 'type(self) == int && self % 2 == 1', message: 'odd' }],
          },
          size: {
            'x-kubernetes-int-or-string': true,
            anyOf: [{ type: 'integer' }, { type: 'string' }],
            'x-kubernetes-validations': [
              { rule: "quantity(string(self)).isLessThan(quantity('1Ki'))", message: 'small' },
            ],
          },
          ports: {
            type: 'array',
            'x-kubernetes-list-type': 'map',
            'x-kubernetes-list-map-keys': ['name'],
            items: {
              type: 'object',
              properties: { name: { type: 'string' }, port: { type: 'integer' } },
              'x-kubernetes-validations': [
                { rule: 'self.port >= oldSelf.port', message: 'ports only go up' },
              ],
            },
          },
          tags: {
            type: 'array',
            items: {
              type: 'string',
              'x-kubernetes-validations': [{ rule: 'self == oldSelf', message: 'never runs' }],
            },
          },
          labels: {
            type: 'object',
            additionalProperties: {
              type: 'string',
              'x-kubernetes-validations': [
                { rule: "self != ''", messageExpression: "'empty label value (was ' + oldSelf + ')'" },
                { rule: "!self.startsWith('x')", fieldPath: '', reason: 'FieldValueForbidden' },
              ],
            },
          },
        },
        'x-kubernetes-validations': [
          { rule: '!has(self.count) || self.count < 100', message: 'count too big', fieldPath: '.count' },
        ],
      },
    },
  };
  const crd = {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: 'things.example.com' },
    spec: {
      group: 'example.com',
      scope: 'Namespaced',
      names: { kind: 'Thing', listKind: 'ThingList', plural: 'things', singular: 'thing' },
      versions: [{ name: 'v1', served: true, storage: true, schema: { openAPIV3Schema: schema } }],
    },
  } as unknown as Crd;
  const check = (spec: unknown, old?: unknown) =>
    validateObject(crd, 'v1', { spec }, old === undefined ? undefined : { spec: old }).map(
      e => `${e.path}: ${e.message}`,
    );

  it('types numbers by the schema: number is double, integer and int-or-string are int', () => {
    assert.deepEqual(check({ ratio: 2, count: 3, size: 512 }), []);
    assert.deepEqual(check({ count: 4, size: '2Ki' }), ['.spec.count: odd', '.spec.size: small']);
  });

  it('appends fieldPath to the rule path', () => {
    assert.deepEqual(check({ count: 101 }), ['.spec.count: count too big']);
  });

  it('pairs map-list items by key for transition rules, and never pairs atomic-list items', () => {
    const old = {
      ports: [
        { name: 'a', port: 10 },
        { name: 'b', port: 20 },
      ],
      tags: ['x'],
    };
    assert.deepEqual(
      check(
        {
          ports: [
            { name: 'b', port: 21 },
            { name: 'a', port: 10 },
          ],
          tags: ['y'],
        },
        old,
      ),
      [],
    );
    assert.deepEqual(
      check(
        {
          ports: [
            { name: 'b', port: 19 },
            { name: 'c', port: 1 },
          ],
        },
        old,
      ),
      ['.spec.ports[0]: ports only go up'],
    );
  });

  it('runs rules on map values, with messageExpression, default message and reason', () => {
    const errors = validateObject(
      crd,
      'v1',
      { spec: { labels: { a: '', b: 'xy' } } },
      { spec: { labels: { a: 'old' } } },
    );
    assert.deepEqual(
      errors.map(e => [e.path, e.message, e.reason]),
      [
        ['.spec.labels[a]', 'empty label value (was old)', 'FieldValueInvalid'],
        ['.spec.labels[b]', "failed rule: !self.startsWith('x')", 'FieldValueForbidden'],
      ],
    );
  });

  it('falls back to the message when a messageExpression fails', () => {
    // On create there is no oldSelf, so the messageExpression cannot be evaluated.
    const errors = validateObject(crd, 'v1', { spec: { labels: { a: '' } } });
    assert.deepEqual(
      errors.map(e => e.message),
      ["failed rule: self != ''"],
    );
  });
});

describe('compileRule', () => {
  it('compiles once per rule text', () => {
    assert.equal(compileRule('self > 1'), compileRule('self > 1'));
  });

  it('tells transition rules apart by the oldSelf identifier, not by text', () => {
    assert.equal(isTransitionRule('self == oldSelf'), true);
    assert.equal(isTransitionRule("self.all(x, x != 'oldSelf')"), false);
    assert.equal(isTransitionRule('has(oldSelf.tls)'), true);
  });

  it('throws a CelCompileError for a syntax error', () => {
    assert.throws(() => compileRule('self.a =='), CelCompileError);
    assert.throws(() => compileRule('self.?a'), CelCompileError);
  });

  it('distinguishes false from an evaluation error', () => {
    assert.deepEqual(compileRule('self.a > 1')({ a: 1 }), { ok: false });
    const missing = compileRule('self.a > 1')({});
    assert.equal(missing.ok, false);
    assert.ok(!missing.ok && missing.error);
    assert.ok(!compileRule('self.a')({ a: 'x' }).ok);
  });

  it('treats JSON integers as CEL ints', () => {
    assert.deepEqual(compileRule('self.replicas % 2 == 1 && type(self.replicas) == int')({ replicas: 3 }), {
      ok: true,
    });
    assert.deepEqual(compileRule('self.r == 1.5')({ r: 1.5 }), { ok: true });
    assert.deepEqual(toCelValue({ a: [1, 2.5], b: 'x' }), { a: [1n, 2.5], b: 'x' });
  });

  it('implements the Kubernetes Quantity library', () => {
    const ok = (rule: string, self: unknown = {}) =>
      assert.deepEqual(compileRule(rule)(self), { ok: true }, rule);
    ok("quantity('1Gi').isGreaterThan(quantity('1G'))");
    ok("quantity('1G').isLessThan(quantity('1Gi'))");
    ok("quantity('1000m').compareTo(quantity('1')) == 0");
    ok("quantity('1000m') == quantity('1')");
    ok("quantity('1.5Gi').add(quantity('512Mi')) == quantity('2Gi')");
    ok("quantity('1').add(2).sub(quantity('500m')).sub(1) == quantity('1.5')");
    ok("quantity('1Ki').asInteger() == 1024");
    ok("quantity('1500m').isInteger() == false && quantity('2').isInteger()");
    ok("quantity('1500m').asApproximateFloat() == 1.5");
    ok("quantity('-3').sign() == -1 && quantity('0').sign() == 0 && quantity('2m').sign() == 1");
    ok("isQuantity('1Gi') && !isQuantity('1GB') && !isQuantity('')");
    ok(
      "type(quantity('1')) == type(quantity('5m')) && type(quantity('1')) != int && type(quantity('1')) != string",
    );
    ok('quantity(string(self.size)).isGreaterThan(quantity(string(self.limit)))', {
      size: '2Gi',
      limit: 1073741824,
    });
    assert.ok(compileRule("quantity('nope') == quantity('1')")({}).ok === false);
    assert.ok(!compileRule("quantity('1500m').asInteger() == 1")({}).ok);
    const wrongType = compileRule("self.n.isGreaterThan(quantity('1'))")({ n: 2 });
    assert.ok(!wrongType.ok && wrongType.error);
  });

  it('includes the strings extension', () => {
    assert.deepEqual(
      compileRule(
        "self.split('.').size() == 3 && self.lowerAscii() == 'a.b.c' && self.replace('.', '-') == 'a-b-c'",
      )('a.b.c'),
      { ok: true },
    );
  });
});
