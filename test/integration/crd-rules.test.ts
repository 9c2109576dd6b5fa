// Every x-kubernetes-validations rule of crds/, judged by the real kube-apiserver (1.37, the
// sandbox's control plane from test/sandbox/control-plane) rather than by a CEL evaluator of ours.
//
// Each case of crd-rule-cases.ts becomes a whole object with the case's value at the rule's path,
// sent as a server-side dry run: a create, or, for a case with oldSelf, an update of an object
// stored with the old value. The answer must be: for a valid case, no refusal by that rule and none
// by the schema (a schema refusal would make the case say nothing about the rule); for an invalid
// case, a 422 whose causes hold the rule's own message at the rule's path, exactly as kubectl shows it.
//
// An old value that today's rules refuse can only exist as left over from older, looser rules: such
// objects are stored under a copy of the CRDs without rules and limits (crd-rule-cases.ts marks
// them), and the real CRDs are applied again before any case runs. That is also how the ratcheting
// tests below get their objects.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { parse } from 'yaml';
import {
  DEFAULT_ISSUER_KIND,
  DEFAULT_PROGRESS_DEADLINE_SECONDS,
  DEFAULT_REPLICAS,
  DEFAULT_STORAGE_MEDIUM,
  SUPPORTED_ETCD_MINORS,
} from '../../shared/api/defaults.ts';
import { API_VERSION, GROUP, VERSION } from '../../shared/api/group.ts';
import type { EtcdCluster } from '../../shared/api/types.ts';
import { applyCrds } from '../sandbox/control-plane/apply.ts';
import { CRD_DIR, startApiServer, type TestApiServer } from '../support/api-server.ts';
import { collectRules, crdSchema, loadCrds, type Crd, type RuleLocation } from '../support/crds.ts';
import type { Case, RuleCases } from './crd-rule-cases.ts';
import { RULE_CASES } from './crd-rule-cases.ts';

const NS = 'crd-rules';
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

// ---- objects ---------------------------------------------------------------------------------

type Spec = Record<string, unknown>;
interface KubeObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; resourceVersion?: string; [key: string]: unknown };
  spec: Spec;
  status?: Record<string, unknown>;
}

const s3 = {
  endpoint: 'https://s3.eu-west-1.amazonaws.com',
  bucket: 'backups',
  key: 'etcd/',
  credentialsSecretRef: { name: 's3-creds' },
};
/** A valid spec per kind, into which a case puts its value. */
const BASE_SPEC: Record<string, Spec> = {
  EtcdCluster: {
    replicas: 3,
    version: '3.5.16',
    storage: { size: '1Gi', medium: '' },
    progressDeadlineSeconds: 600,
  },
  EtcdMember: {
    clusterName: 'main',
    version: '3.5.16',
    storage: { size: '1Gi', medium: '' },
    initialCluster: 'main-abcde=http://main-abcde.main.crd-rules.svc:2380',
    clusterToken: 'crd-rules-main-1234',
  },
  EtcdSnapshot: { clusterRef: { name: 'main' }, destination: { s3 } },
  EtcdSnapshotSchedule: { clusterRef: { name: 'main' }, schedule: '0 3 * * *', destination: { s3 } },
};

/**
 * The base spec of `kind` with `value` at `path`: `.spec` replaces the whole spec, `.spec.a.b`
 * replaces spec.a with `{ b: value }` (the schema's defaults fill in the rest), so that a case for
 * destination.pvc does not meet the base's destination.s3.
 */
function specWith(kind: string, path: string, value: unknown): Spec {
  const parts = path.split('.').filter(Boolean);
  assert.equal(parts[0], 'spec', `${path}: only rules under .spec have cases`);
  assert.ok(!path.includes('['), `${path}: a rule under a list or map needs a case layout of its own`);
  let placed = structuredClone(value);
  for (const part of parts.slice(2).reverse()) placed = { [part]: placed };
  return parts.length === 1 ? (placed as Spec) : { ...structuredClone(BASE_SPEC[kind]), [parts[1]]: placed };
}

const objectOf = (kind: string, name: string, spec: Spec): KubeObject => ({
  apiVersion: API_VERSION,
  kind,
  metadata: { name, namespace: NS },
  spec,
});

// ---- requests --------------------------------------------------------------------------------

interface Cause {
  reason?: string;
  message: string;
  field?: string;
}
interface Answer {
  status: number;
  causes: Cause[];
  message: string;
  object?: KubeObject;
}

let server: TestApiServer;
const DRY_RUN = 'dryRun=All&fieldValidation=Strict';
const collection = (kind: string) =>
  `/apis/${GROUP}/${VERSION}/namespaces/${NS}/${crdOf(kind).spec.names.plural}`;

async function send(method: string, path: string, body?: unknown): Promise<Answer> {
  const reply = await server.request(method, path, body);
  const parsed = JSON.parse(reply.body) as {
    message?: string;
    details?: { causes?: Cause[] };
  };
  if (reply.status < 300)
    return { status: reply.status, causes: [], message: '', object: parsed as KubeObject };
  return {
    status: reply.status,
    causes: parsed.details?.causes ?? [],
    message: parsed.message ?? reply.body,
  };
}
const dryCreate = (obj: KubeObject) => send('POST', `${collection(obj.kind)}?${DRY_RUN}`, obj);
const create = (obj: KubeObject) => send('POST', `${collection(obj.kind)}?fieldValidation=Strict`, obj);
/** A dry-run update of a stored object to `spec` (PUT, as kubectl replace and client-node's replace do). */
const dryUpdate = (stored: KubeObject, spec: Spec) =>
  send('PUT', `${collection(stored.kind)}/${stored.metadata.name}?${DRY_RUN}`, { ...stored, spec });

/** What the server says when a rule fails: the value (scalars only) and the rule's message. */
function causeOf(path: string, value: unknown, message: string): Cause {
  const shown = value !== null && typeof value === 'object' ? '' : `${JSON.stringify(value)}: `;
  return { reason: 'FieldValueInvalid', message: `Invalid value: ${shown}${message}`, field: path.slice(1) };
}
const byMessage = (message: string) => (cause: Cause) => cause.message.endsWith(`: ${message}`);
/** Causes that come from no CEL rule of the kind: the OpenAPI schema's. */
const schemaCauses = (kind: string, answer: Answer) =>
  answer.causes.filter(cause => !rulesOf(kind).some(r => byMessage(r.rule.message ?? '')(cause)));

// ---- objects stored before the cases run -------------------------------------------------------

interface Stored {
  kind: string;
  name: string;
  spec: Spec;
  /** today's rules refuse it: it is stored under the CRDs without rules and limits */
  olderRules?: boolean;
  object?: KubeObject;
}
const stored = new Map<string, Stored>();
function store(entry: Stored): Stored {
  assert.ok(!stored.has(entry.name), entry.name);
  stored.set(entry.name, entry);
  return entry;
}

interface Planned {
  entry: RuleCases;
  c: Case;
  valid: boolean;
  name: string;
  old?: Stored;
}
const planned: Planned[] = [];
for (const entry of RULE_CASES) {
  for (const [valid, cases] of [
    [true, entry.valid],
    [false, entry.invalid],
  ] as const) {
    for (const c of cases) {
      const name = `case-${planned.length}`;
      const old =
        c.oldSelf === undefined
          ? undefined
          : store({
              kind: entry.kind,
              name,
              spec: specWith(entry.kind, entry.path, c.oldSelf),
              olderRules: c.oldStoredUnderOlderRules,
            });
      planned.push({ entry, c, valid, name, old });
    }
  }
}

/** A copy of a CRD as older, looser rules would have had it: no CEL rules, no length or size limits. */
function looser(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(looser);
  if (value === null || typeof value !== 'object') return value;
  const dropped = ['x-kubernetes-validations', 'maxLength', 'maxProperties', 'maxItems'];
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => !dropped.includes(key))
      .map(([key, child]) => [key, looser(child)]),
  );
}

/** Waits until each kind's real rules are served again (the API server reloads an updated CRD). */
async function waitForRealRules(kinds: string[]): Promise<void> {
  for (const kind of kinds) {
    const probe = RULE_CASES.flatMap(e =>
      e.kind === kind ? e.invalid.filter(c => c.oldSelf === undefined).map(c => ({ e, c })) : [],
    )[0];
    assert.ok(probe, `no invalid create case for ${kind}`);
    const message = findRule(probe.e).rule.message!;
    const deadline = Date.now() + 30_000;
    for (;;) {
      const answer = await dryCreate(objectOf(kind, 'probe', specWith(kind, probe.e.path, probe.c.self)));
      if (answer.causes.some(byMessage(message))) break;
      assert.ok(
        Date.now() < deadline,
        `${kind}: the real rules are not served 30 s after re-applying the CRD`,
      );
      await new Promise(resolve => setTimeout(resolve, 100));
    }
  }
}

/** Objects stored only under older rules: the ratcheting tests below. */
const legacy = {
  reservedAnnotation: store({
    kind: 'EtcdCluster',
    name: 'legacy-annotation',
    spec: { ...BASE_SPEC.EtcdCluster, additionalMetadata: { annotations: { 'etcdfn.io/x': 'y' } } },
    olderRules: true,
  }),
  manyLabels: store({
    kind: 'EtcdCluster',
    name: 'legacy-labels',
    spec: {
      ...BASE_SPEC.EtcdCluster,
      additionalMetadata: {
        labels: Object.fromEntries(Array.from({ length: 65 }, (_, i) => [`l${i}`, 'x'])),
      },
    },
    olderRules: true,
  }),
  oldVersion: store({
    kind: 'EtcdCluster',
    name: 'legacy-version',
    spec: { ...BASE_SPEC.EtcdCluster, version: '3.3.9' },
    olderRules: true,
  }),
};

before(async () => {
  server = await startApiServer({ crdDirs: [CRD_DIR] });
  await server.createNamespace(NS);
  const refusedToday: Stored[] = [];
  const refusals: string[] = [];
  for (const entry of stored.values()) {
    const answer = await create(objectOf(entry.kind, entry.name, entry.spec));
    if (answer.status === 201) entry.object = answer.object;
    else refusedToday.push(entry);
    if (answer.status !== 201 && !entry.olderRules)
      refusals.push(`${entry.name} ${JSON.stringify(entry.spec)}: ${answer.message}`);
    if (answer.status === 201 && entry.olderRules)
      refusals.push(`${entry.name} ${JSON.stringify(entry.spec)}: accepted today`);
  }
  // Marked and refused must agree: an unmarked old value that cannot be created means a case whose
  // starting point cannot exist (or a finding); a marked one that can, a stale mark.
  assert.deepEqual(refusals, [], "old objects refused by today's rules exactly when marked so");
  if (refusedToday.length === 0) return;
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-looser-crds-'));
  try {
    for (const crd of crds)
      writeFileSync(join(dir, `${crd.metadata.name}.json`), JSON.stringify(looser(crd)));
    await applyCrds(server.kc, [dir]);
    for (const entry of refusedToday) {
      // Until the API server has reloaded the CRD, it may still answer with the real rules.
      const deadline = Date.now() + 30_000;
      let answer = await create(objectOf(entry.kind, entry.name, entry.spec));
      while (answer.status === 422 && Date.now() < deadline) {
        await new Promise(resolve => setTimeout(resolve, 100));
        answer = await create(objectOf(entry.kind, entry.name, entry.spec));
      }
      assert.equal(answer.status, 201, `${entry.name} under the looser CRDs: ${answer.message}`);
      entry.object = answer.object;
    }
    await applyCrds(server.kc, [CRD_DIR]);
    await waitForRealRules([...new Set(refusedToday.map(e => e.kind))]);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});
after(async () => server?.close());

// ---- the rule cases ----------------------------------------------------------------------------

const refusedByOthers: string[] = [];
describe('every CEL rule in crds/, on the real kube-apiserver', () => {
  for (const entry of RULE_CASES) {
    describe(`${entry.kind} ${entry.path}: ${entry.match}`, () => {
      const location = findRule(entry);
      const message = location.rule.message ?? '';

      it('has valid and invalid cases, with oldSelf for a transition rule', () => {
        assert.ok(entry.valid.length > 0 && entry.invalid.length > 0);
        if (!location.transition) return;
        for (const c of [...entry.valid, ...entry.invalid]) assert.notEqual(c.oldSelf, undefined, show(c));
      });
      for (const p of planned.filter(p => p.entry === entry)) {
        it(`${p.valid ? 'accepts' : 'refuses'} ${show(p.c)}`, async () => {
          const spec = specWith(entry.kind, entry.path, p.c.self);
          const answer = p.old
            ? await dryUpdate(p.old.object!, spec)
            : await dryCreate(objectOf(entry.kind, p.name, spec));
          const mine = answer.causes.filter(byMessage(message));
          if (p.valid) {
            assert.deepEqual(mine, [], answer.message);
            assert.deepEqual(
              schemaCauses(entry.kind, answer),
              [],
              'refused by the schema, so the case tests no rule',
            );
            assert.ok(answer.status < 300 || answer.status === 422, answer.message);
            if (answer.status === 422) refusedByOthers.push(`${entry.path} ${show(p.c)}: ${answer.message}`);
          } else {
            assert.equal(answer.status, 422, answer.message);
            assert.deepEqual(mine, [causeOf(entry.path, p.c.self, message)], answer.message);
          }
        });
      }
    });
  }

  it('lists the valid cases that other rules refuse', t => {
    for (const line of refusedByOthers) t.diagnostic(line);
  });

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
        const text = location.rule.message ?? '';
        assert.ok(text.length > 20, `${location.path}: ${location.rule.rule}`);
        assert.ok(!text.includes('\n'), `${location.path}: message should be one line`);
      }
    }
  });

  it('counts the rules per CRD', () => {
    const counts = Object.fromEntries(crds.map(c => [c.spec.names.kind, rulesOf(c.spec.names.kind).length]));
    assert.deepEqual(counts, { EtcdCluster: 40, EtcdMember: 11, EtcdSnapshot: 5, EtcdSnapshotSchedule: 5 });
  });

  it('keeps rules out of status', () => {
    for (const crd of crds) {
      const status = crdSchema(crd, VERSION).properties?.status;
      assert.ok(status);
      assert.deepEqual(collectRules(status), [], `${crd.metadata.name} status carries rules`);
    }
  });
});

// ---- whole objects -----------------------------------------------------------------------------

const cluster = (name: string, spec: Spec = {}) =>
  objectOf('EtcdCluster', name, { ...structuredClone(BASE_SPEC.EtcdCluster), ...spec });
const fields = (answer: Answer) => answer.causes.map(c => c.field).sort();
const NOT_CHECKED =
  'some validation rules were not checked because the object was invalid; correct the existing errors to complete validation';

describe('whole EtcdClusters on the real kube-apiserver', () => {
  it('accepts a minimal cluster and fills in the schema defaults', async () => {
    const answer = await dryCreate(objectOf('EtcdCluster', 'minimal', { version: '3.5.16' }));
    assert.equal(answer.status, 201, answer.message);
    assert.deepEqual(answer.object?.spec, BASE_SPEC.EtcdCluster);
  });

  it('refuses pausing a memory-backed cluster, at spec, with the rule message', async () => {
    const answer = await dryCreate(
      cluster('paused', { replicas: 0, storage: { size: '1Gi', medium: 'Memory' } }),
    );
    assert.equal(answer.status, 422);
    assert.equal(answer.causes.length, 1, answer.message);
    assert.equal(answer.causes[0].field, 'spec');
    assert.equal(answer.causes[0].reason, 'FieldValueInvalid');
    assert.match(
      answer.causes[0].message,
      /replicas 0 \(pause\) is not supported with storage\.medium Memory/,
    );
  });

  it('reports each broken rule at its own path, with a pattern error beside them', async () => {
    const answer = await dryCreate(
      cluster('many', {
        version: '3.3',
        tls: { client: {}, peer: { auto: {}, secretRef: { name: 'p' } } },
        options: { autoCompactionMode: 'periodic' },
      }),
    );
    assert.equal(answer.status, 422);
    // Order varies from run to run (the API server walks Go maps).
    assert.deepEqual(fields(answer), [
      'spec.options',
      'spec.tls.client',
      'spec.tls.peer',
      'spec.version', // the OpenAPI pattern
      'spec.version', // the rule
    ]);
    const version = answer.causes.filter(c => c.field === 'spec.version').map(c => c.message);
    assert.ok(version.some(m => m.includes('should match')) && version.some(m => m.includes('etcd release')));
  });

  it('skips every rule while the schema finds a wrong type, enum value or missing field, and says so', async () => {
    const answer = await dryCreate(
      cluster('not-checked', { version: '3.3.9', storage: { size: '1Gi', medium: 'Disk' } }),
    );
    assert.equal(answer.status, 422);
    assert.deepEqual(
      answer.causes.map(c => [c.field, c.reason]),
      [
        ['spec.storage.medium', 'FieldValueNotSupported'],
        ['<nil>', 'FieldValueInvalid'],
      ],
    );
    assert.equal(answer.causes[1].message, `Invalid value: null: ${NOT_CHECKED}`);
  });

  it('refuses a field the schema does not have (strict field validation, as kubectl does)', async () => {
    const answer = await dryCreate(cluster('typo', { storage: { sise: '1Gi' } }));
    assert.equal(answer.status, 400);
    assert.match(answer.message, /unknown field "spec\.storage\.sise"/);
  });

  it('runs transition rules on update only: storageClassName is free on create, fixed afterwards', async () => {
    const storage = { size: '1Gi', medium: '', storageClassName: 'fast' };
    assert.equal((await dryCreate(cluster('class', { storage }))).status, 201);
    const stored = await create(cluster('class-stored'));
    assert.equal(stored.status, 201, stored.message);
    const answer = await dryUpdate(stored.object!, { ...stored.object!.spec, storage });
    assert.deepEqual(fields(answer), ['spec']);
    assert.match(answer.message, /storageClassName cannot be added/);
  });

  it('refuses shrinking storage at spec.storage.size, and lets it grow', async () => {
    const stored = await create(cluster('grow', { storage: { size: '2Gi', medium: '' } }));
    assert.equal(stored.status, 201, stored.message);
    const shrink = await dryUpdate(stored.object!, {
      ...stored.object!.spec,
      storage: { size: '1Gi', medium: '' },
    });
    assert.deepEqual(shrink.causes, [
      causeOf(
        '.spec.storage.size',
        '1Gi',
        findRuleByMessage('EtcdCluster', 'storage.size cannot be decreased'),
      ),
    ]);
    const grow = await dryUpdate(stored.object!, {
      ...stored.object!.spec,
      storage: { size: '3Gi', medium: '' },
    });
    assert.equal(grow.status, 200, grow.message);
  });

  it('runs transition rules on the PATCH path too (kubectl apply, edit and patch send patches)', async () => {
    const stored = await create(cluster('patched'));
    assert.equal(stored.status, 201, stored.message);
    const reply = await server.request(
      'PATCH',
      `${collection('EtcdCluster')}/patched?${DRY_RUN}`,
      { spec: { storage: { medium: 'Memory' } } },
      'application/merge-patch+json',
    );
    assert.equal(reply.status, 422, reply.body);
    const causes = (JSON.parse(reply.body) as { details: { causes: Cause[] } }).details.causes;
    assert.deepEqual(causes, [
      causeOf(
        '.spec.storage.medium',
        'Memory',
        findRuleByMessage('EtcdCluster', 'storage.medium cannot be changed'),
      ),
    ]);
  });

  it('passes an untouched update and a status-only update', async () => {
    const stored = await create(cluster('untouched', { tls: { client: { auto: {} }, peer: { auto: {} } } }));
    assert.equal(stored.status, 201, stored.message);
    assert.equal((await dryUpdate(stored.object!, stored.object!.spec)).status, 200);
    const status = await send('PUT', `${collection('EtcdCluster')}/untouched/status?${DRY_RUN}`, {
      ...stored.object,
      status: { phase: 'Running', readyMembers: 3, ready: '3/3' },
    });
    assert.equal(status.status, 200, status.message);
  });

  it('skips the rules of an object whose required fields are missing, and says so', async () => {
    const answer = await dryCreate(
      objectOf('EtcdSnapshot', 'no-endpoint', {
        clusterRef: { name: 'main' },
        destination: { s3: { bucket: 'b' } },
      }),
    );
    assert.equal(answer.status, 422);
    assert.deepEqual(
      answer.causes.map(c => [c.field, c.message]),
      [
        ['spec.destination.s3.endpoint', 'Required value'],
        ['spec.destination.s3.credentialsSecretRef', 'Required value'],
        ['<nil>', `Invalid value: null: ${NOT_CHECKED}`],
      ],
    );
  });
});

describe('whole objects of the other kinds on the real kube-apiserver', () => {
  it('freezes an EtcdSnapshot spec but lets its status change', async () => {
    const stored = await create(objectOf('EtcdSnapshot', 'frozen', structuredClone(BASE_SPEC.EtcdSnapshot)));
    assert.equal(stored.status, 201, stored.message);
    const status = await send('PUT', `${collection('EtcdSnapshot')}/frozen/status?${DRY_RUN}`, {
      ...stored.object,
      status: { phase: 'Complete' },
    });
    assert.equal(status.status, 200, status.message);
    const moved = await dryUpdate(stored.object!, { ...stored.object!.spec, clusterRef: { name: 'other' } });
    assert.deepEqual(fields(moved), ['spec']);
    assert.match(moved.message, /spec cannot change after creation/);
  });

  it('checks an EtcdSnapshotSchedule: schedule and time zone each at their path', async () => {
    const schedule = (name: string, extra: Spec) =>
      objectOf('EtcdSnapshotSchedule', name, {
        ...structuredClone(BASE_SPEC.EtcdSnapshotSchedule),
        ...extra,
      });
    const good = await dryCreate(schedule('good', { timeZone: 'Europe/Berlin' }));
    assert.equal(good.status, 201, good.message);
    assert.deepEqual(good.object?.spec.retention, { keepLast: 7 });
    assert.equal(good.object?.spec.suspend, false);
    const bad = await dryCreate(schedule('bad', { schedule: '0 3 * * * *', timeZone: 'CET ' }));
    assert.deepEqual(fields(bad), ['spec.schedule', 'spec.timeZone']);
  });
});

// ---- ratcheting ------------------------------------------------------------------------------

// CRDValidationRatcheting (on by default since Kubernetes 1.30): on update, a value that the update
// leaves unchanged is not refused by a rule or limit it already broke (a rule that uses oldSelf is
// never ratcheted). An object stored while older rules allowed something keeps working.
describe('ratcheting: objects stored under older rules stay editable', () => {
  const scaled = (entry: Stored) => ({ ...entry.object!.spec, replicas: 5 });

  it('a reserved annotation key: other edits pass, changing that annotation is refused', async () => {
    const old = legacy.reservedAnnotation.object!;
    assert.equal((await dryUpdate(old, scaled(legacy.reservedAnnotation))).status, 200);
    const touched = await dryUpdate(old, {
      ...old.spec,
      additionalMetadata: { annotations: { 'etcdfn.io/x': 'z' } },
    });
    assert.deepEqual(fields(touched), ['spec.additionalMetadata.annotations']);
    assert.match(touched.message, /must not use keys starting with etcdfn\.io\//);
  });

  it('65 labels, stored before maxProperties 64: other edits pass, one more label is refused', async () => {
    const old = legacy.manyLabels.object!;
    assert.equal((await dryUpdate(old, scaled(legacy.manyLabels))).status, 200);
    const labels = {
      ...(old.spec.additionalMetadata as { labels: Record<string, string> }).labels,
      more: 'x',
    };
    const grown = await dryUpdate(old, { ...old.spec, additionalMetadata: { labels } });
    assert.equal(grown.status, 422);
    assert.deepEqual(
      grown.causes.map(c => [c.field, c.reason]),
      [
        ['spec.additionalMetadata.labels', 'FieldValueTooMany'],
        ['<nil>', 'FieldValueInvalid'], // the rules are skipped, as for any schema error but a pattern
      ],
    );
    assert.match(grown.message, /must have at most 64 items/);
  });

  it('a version no longer accepted: other edits pass, another unsupported version is refused', async () => {
    const old = legacy.oldVersion.object!;
    assert.equal((await dryUpdate(old, scaled(legacy.oldVersion))).status, 200);
    const patched = await dryUpdate(old, { ...old.spec, version: '3.3.10' });
    assert.deepEqual(fields(patched), ['spec.version']);
    assert.match(patched.message, /spec\.version must be an etcd release/);
  });

  it('never ratchets a transition rule: tls stays fixed on an object stored under older rules', async () => {
    const old = legacy.reservedAnnotation.object!;
    const answer = await dryUpdate(old, { ...old.spec, tls: { client: { auto: {} }, peer: { auto: {} } } });
    assert.deepEqual(fields(answer), ['spec']);
    assert.match(answer.message, /spec\.tls cannot be added/);
  });
});

function findRuleByMessage(kind: string, match: string): string {
  const found = rulesOf(kind).filter(r => (r.rule.message ?? '').includes(match));
  assert.equal(found.length, 1, match);
  return found[0].rule.message!;
}

// ---- realistic manifests ---------------------------------------------------------------------

// Written the way cozystack etcd-operator users write their clusters; only apiVersion differs.
const COZYSTACK_CLUSTERS = `
apiVersion: etcdfn.io/v1alpha1
kind: EtcdCluster
metadata:
  name: kube-etcd
  namespace: tenant-root
spec:
  replicas: 3
  version: "3.5.16"
  progressDeadlineSeconds: 900
  storage:
    size: 10Gi
    storageClassName: replicated
  tls:
    client:
      certManager:
        serverIssuerRef:
          name: etcd-ca
        operatorClientIssuerRef:
          name: etcd-ca
          kind: Issuer
    peer:
      certManager:
        issuerRef:
          name: etcd-peer-ca
          kind: ClusterIssuer
  auth:
    enabled: true
    rootCredentialsSecretRef:
      name: kube-etcd-root
  resources:
    requests:
      cpu: 500m
      memory: 1Gi
    limits:
      memory: 2Gi
  additionalMetadata:
    labels:
      team: platform
    annotations:
      backup.example.com/tier: gold
  affinity:
    podAntiAffinity:
      requiredDuringSchedulingIgnoredDuringExecution:
        - labelSelector:
            matchLabels:
              app.kubernetes.io/instance: kube-etcd
          topologyKey: kubernetes.io/hostname
  topologySpreadConstraints:
    - maxSkew: 1
      topologyKey: topology.kubernetes.io/zone
      whenUnsatisfiable: ScheduleAnyway
      labelSelector:
        matchLabels:
          app.kubernetes.io/instance: kube-etcd
  options:
    quotaBackendBytes: 8589934592
    autoCompactionMode: periodic
    autoCompactionRetention: 5m
    snapshotCount: 10000
  imagePullSecrets:
    - name: registry-credentials
---
apiVersion: etcdfn.io/v1alpha1
kind: EtcdCluster
metadata:
  name: restored
spec:
  version: 3.5.16
  storage:
    size: 2Gi
  tls:
    client:
      serverSecretRef:
        name: restored-server-tls
      operatorClientSecretRef:
        name: restored-operator-tls
    peer:
      secretRef:
        name: restored-peer-tls
  bootstrap:
    restore:
      source:
        s3:
          endpoint: http://minio.minio.svc:9000
          bucket: etcd-backups
          key: restored/snap-20250101.db
          region: us-east-1
          forcePathStyle: true
          credentialsSecretRef:
            name: minio-creds
  options:
    autoCompactionMode: revision
    autoCompactionRetention: "10000"
---
apiVersion: etcdfn.io/v1alpha1
kind: EtcdCluster
metadata:
  name: cache
spec:
  replicas: 1
  version: 3.4.23
  storage:
    medium: Memory
    size: 512Mi
  resources:
    limits:
      cpu: 1
      memory: 1Gi
`;

const COZYSTACK_SNAPSHOT = `
apiVersion: etcdfn.io/v1alpha1
kind: EtcdSnapshot
metadata:
  name: kube-etcd-manual
spec:
  clusterRef:
    name: kube-etcd
  destination:
    pvc:
      claimName: etcd-backups
      subPath: kube-etcd
`;

const SCHEDULE = `
apiVersion: etcdfn.io/v1alpha1
kind: EtcdSnapshotSchedule
metadata:
  name: kube-etcd-nightly
spec:
  clusterRef:
    name: kube-etcd
  schedule: "15 2 * * *"
  timeZone: Europe/Amsterdam
  destination:
    s3:
      endpoint: https://s3.eu-central-1.amazonaws.com
      bucket: etcd-backups
      key: kube-etcd/
      credentialsSecretRef:
        name: s3-creds
`;

const docs = (text: string) =>
  text
    .split(/^---$/m)
    .map(doc => parse(doc) as KubeObject | null)
    .filter((doc): doc is KubeObject => doc !== null)
    .map(doc => ({ ...doc, metadata: { ...doc.metadata, namespace: NS } }));

describe('realistic manifests on the real kube-apiserver', () => {
  it('cozystack-style EtcdClusters are accepted with their defaults, and scale cleanly', async () => {
    const [first, second] = docs(COZYSTACK_CLUSTERS);
    for (const manifest of docs(COZYSTACK_CLUSTERS)) {
      const created = await create(manifest);
      assert.equal(created.status, 201, created.message);
      const scaled = await dryUpdate(created.object!, { ...created.object!.spec, replicas: 5 });
      assert.equal(scaled.status, 200, scaled.message);
      const spec = created.object!.spec as unknown as EtcdCluster['spec'];
      assert.equal(
        spec.storage?.medium,
        manifest.metadata.name === 'cache' ? 'Memory' : DEFAULT_STORAGE_MEDIUM,
      );
      if (manifest.metadata.name === first.metadata.name)
        assert.equal(spec.tls?.client?.certManager?.serverIssuerRef.kind, DEFAULT_ISSUER_KIND);
      if (manifest.metadata.name === second.metadata.name) {
        assert.equal(spec.replicas, DEFAULT_REPLICAS);
        assert.equal(spec.progressDeadlineSeconds, DEFAULT_PROGRESS_DEADLINE_SECONDS);
      }
    }
  });

  it('a PVC snapshot destination is accepted (deletionPolicy defaults to Retain)', async () => {
    const [manifest] = docs(COZYSTACK_SNAPSHOT);
    const answer = await dryCreate(manifest);
    assert.equal(answer.status, 201, answer.message);
    assert.equal(answer.object?.spec.deletionPolicy, 'Retain');
  });

  it('a snapshot schedule is accepted', async () => {
    const [manifest] = docs(SCHEDULE);
    const answer = await dryCreate(manifest);
    assert.equal(answer.status, 201, answer.message);
  });

  it('spec.version accepts exactly the SUPPORTED_ETCD_MINORS', async () => {
    for (let minor = 0; minor <= 9; minor++) {
      const answer = await dryCreate(cluster(`minor-${minor}`, { version: `3.${minor}.7` }));
      const supported = (SUPPORTED_ETCD_MINORS as readonly string[]).includes(`3.${minor}`);
      assert.equal(answer.status === 201, supported, `3.${minor}.7: ${answer.message}`);
    }
  });
});
