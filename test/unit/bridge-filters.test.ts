// Trigger filters evaluated as Knative's Broker evaluates them, and the routing that knative/triggers.yaml
// gives each kind of event.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pino } from 'pino';
import { DEFAULT_KNATIVE_DIR } from '../../standalone/bridge/bridge.ts';
import { parseManifests } from '../../standalone/bridge/sources.ts';
import {
  evaluateFilter,
  evaluateTrigger,
  knativeValidationErrors,
  loadTriggers,
  lookupAttribute,
  parseTrigger,
  triggerMatches,
  type EventAttributes,
  type FilterResult,
  type SubscriptionsApiFilter,
} from '../../standalone/bridge/triggers.ts';

const podUpdate: EventAttributes = {
  specversion: '1.0',
  id: 'a',
  source: 'https://10.96.0.1:443',
  type: 'dev.knative.apiserver.ref.update',
  subject: '/apis/v1/namespaces/default/pods/demo-0',
  datacontenttype: 'application/json; charset=utf-8',
  kind: 'Pod',
  name: 'demo-0',
  namespace: 'default',
  apiversion: 'v1',
};

const cases: { name: string; filter: SubscriptionsApiFilter; want: FilterResult }[] = [
  { name: 'exact match', filter: { exact: { kind: 'Pod' } }, want: 'pass' },
  { name: 'exact is case-sensitive', filter: { exact: { kind: 'pod' } }, want: 'fail' },
  { name: 'exact on a missing extension fails', filter: { exact: { tick: 'resync' } }, want: 'fail' },
  {
    name: 'exact: every attribute must match',
    filter: { exact: { kind: 'Pod', apiversion: 'v2' } },
    want: 'fail',
  },
  {
    name: 'exact with two matching attributes',
    filter: { exact: { kind: 'Pod', apiversion: 'v1' } },
    want: 'pass',
  },
  { name: 'exact on an unset context attribute is ""', filter: { exact: { dataschema: 'x' } }, want: 'fail' },
  { name: 'exact with an empty value is skipped', filter: { exact: { kind: '' } }, want: 'none' },
  { name: 'prefix', filter: { prefix: { type: 'dev.knative.apiserver.' } }, want: 'pass' },
  { name: 'prefix mismatch', filter: { prefix: { type: 'dev.knative.sources.' } }, want: 'fail' },
  { name: 'suffix', filter: { suffix: { type: '.update' } }, want: 'pass' },
  { name: 'suffix mismatch', filter: { suffix: { type: '.add' } }, want: 'fail' },
  {
    name: 'datamediatype drops parameters',
    filter: { exact: { datamediatype: 'application/json' } },
    want: 'pass',
  },
  { name: 'not inverts a failure', filter: { not: { suffix: { type: '.add' } } }, want: 'pass' },
  { name: 'not inverts a pass', filter: { not: { exact: { kind: 'Pod' } } }, want: 'fail' },
  { name: 'not of nothing is no filter', filter: { not: {} }, want: 'none' },
  {
    name: 'all passes when all pass',
    filter: { all: [{ exact: { kind: 'Pod' } }, { prefix: { name: 'demo' } }] },
    want: 'pass',
  },
  {
    name: 'all fails on one failure',
    filter: { all: [{ exact: { kind: 'Pod' } }, { exact: { name: 'x' } }] },
    want: 'fail',
  },
  {
    name: 'any passes on one pass',
    filter: { any: [{ exact: { kind: 'X' } }, { exact: { kind: 'Pod' } }] },
    want: 'pass',
  },
  {
    name: 'any fails when all fail',
    filter: { any: [{ exact: { kind: 'X' } }, { exact: { kind: 'Y' } }] },
    want: 'fail',
  },
  // Knative's anyFilter returns the last result when nothing passed: a trailing no-filter wins.
  {
    name: 'any ending in no-filter is no filter',
    filter: { any: [{ exact: { kind: 'X' } }, { not: {} }] },
    want: 'none',
  },
  { name: 'empty filter is skipped', filter: {}, want: 'none' },
  { name: 'empty all list is skipped', filter: { all: [] }, want: 'none' },
  {
    name: 'nested all/any/not',
    filter: {
      all: [
        { any: [{ exact: { kind: 'EtcdMember' } }, { exact: { kind: 'Pod' } }] },
        { not: { suffix: { type: '.delete' } } },
      ],
    },
    want: 'pass',
  },
];

describe('Subscriptions API filters', () => {
  for (const c of cases) {
    it(c.name, () => assert.equal(evaluateFilter(c.filter, podUpdate), c.want));
  }

  it('CESQL is refused', () => {
    assert.throws(() => evaluateFilter({ cesql: "type = 'x'" }, podUpdate), /CESQL/);
    const doc = {
      metadata: { name: 't' },
      spec: { broker: 'b', subscriber: { uri: 'http://x' }, filters: [{ any: [{ cesql: 'true' }] }] },
    };
    assert.throws(() => parseTrigger(doc), /CESQL filters \("true"\) are not supported/);
  });

  it('context attributes always exist, extensions only when set', () => {
    assert.equal(lookupAttribute(podUpdate, 'subject'), podUpdate.subject);
    assert.equal(lookupAttribute(podUpdate, 'dataschema'), '');
    assert.equal(lookupAttribute(podUpdate, 'nosuchext'), undefined);
  });
});

describe('Trigger evaluation', () => {
  it('filters win over the legacy filter; several filters must all pass', () => {
    const trigger = {
      filters: [{ exact: { kind: 'Pod' } }, { suffix: { type: '.add' } }],
      attributes: { kind: 'Pod' },
    };
    assert.equal(evaluateTrigger(trigger, podUpdate), 'fail');
  });

  it('legacy filter.attributes: exact match, empty value = any value of a present attribute', () => {
    assert.equal(triggerMatches({ attributes: { kind: 'Pod', namespace: '' } }, podUpdate), true);
    assert.equal(triggerMatches({ attributes: { kind: 'Pod', tick: '' } }, podUpdate), false);
    assert.equal(triggerMatches({ attributes: { type: 'dev.knative.apiserver.ref.add' } }, podUpdate), false);
  });

  it('no filter at all delivers everything', () => {
    assert.equal(evaluateTrigger({}, podUpdate), 'none');
    assert.equal(triggerMatches({}, podUpdate), true);
    assert.equal(triggerMatches({ filters: [{}] }, podUpdate), true);
  });

  it("reports what Knative's admission webhook refuses", () => {
    const errors = knativeValidationErrors({
      filters: [
        { exact: { kind: 'Pod', apiversion: 'v1' } },
        { exact: { kind: 'Pod' }, prefix: { type: 'x' } },
        { suffix: { Bad: 'x' } },
      ],
    });
    assert.equal(errors.length, 3, errors.join('\n'));
    assert.match(errors[0] ?? '', /filters\[0\]\.exact: Multiple items found/);
    assert.match(errors[1] ?? '', /filters\[1\]: multiple dialects/);
    assert.match(errors[2] ?? '', /invalid attribute name/);
  });
});

describe('knative/triggers.yaml routing', () => {
  // strict: the project's Triggers must be ones Knative's admission webhook accepts.
  const triggers = loadTriggers(DEFAULT_KNATIVE_DIR, { strict: true, log: pino({ level: 'silent' }) });
  const routes = (attrs: EventAttributes) =>
    triggers
      .filter(t => triggerMatches(t, attrs))
      .map(t => t.subscriber)
      .sort();
  const object = (kind: string, apiversion: string, verb: string): EventAttributes => ({
    ...podUpdate,
    type: `dev.knative.apiserver.ref.${verb}`,
    kind,
    apiversion,
  });
  const etcdfn = 'etcdfn.io/v1alpha1';
  const table: [string, EventAttributes, string[]][] = [
    ['Pod update', object('Pod', 'v1', 'update'), ['reconcile-member']],
    ['PVC delete', object('PersistentVolumeClaim', 'v1', 'delete'), ['reconcile-member']],
    ['Job update', object('Job', 'batch/v1', 'update'), ['run-snapshot']],
    ['EtcdCluster add', object('EtcdCluster', etcdfn, 'add'), ['reconcile-cluster']],
    ['EtcdMember add', object('EtcdMember', etcdfn, 'add'), ['reconcile-cluster', 'reconcile-member']],
    [
      'EtcdMember update',
      object('EtcdMember', etcdfn, 'update'),
      ['finalize-member', 'reconcile-cluster', 'reconcile-member'],
    ],
    [
      'EtcdMember delete',
      object('EtcdMember', etcdfn, 'delete'),
      ['finalize-member', 'reconcile-cluster', 'reconcile-member'],
    ],
    ['EtcdSnapshot add', object('EtcdSnapshot', etcdfn, 'add'), ['run-snapshot']],
    ['EtcdSnapshotSchedule update', object('EtcdSnapshotSchedule', etcdfn, 'update'), ['run-snapshot']],
    ['EtcdCluster of another group', object('EtcdCluster', 'other.io/v1', 'add'), []],
    [
      'PingSource tick',
      {
        specversion: '1.0',
        id: 't',
        type: 'dev.knative.sources.ping',
        source: '/apis/v1/namespaces/etcdfn-system/pingsources/etcdfn-tick',
      },
      ['reconcile-cluster', 'reconcile-member', 'run-snapshot'],
    ],
  ];
  for (const [name, attrs, want] of table) {
    it(`${name} → ${want.join(', ') || 'nobody'}`, () => assert.deepEqual(routes(attrs), want));
  }

  it('every Trigger names a subscriber and has filters', () => {
    assert.deepEqual(triggers.map(t => t.subscriber).sort(), [
      'finalize-member',
      'reconcile-cluster',
      'reconcile-member',
      'run-snapshot',
    ]);
    for (const t of triggers) assert.ok(t.filters && t.filters.length > 0, t.name);
  });

  it('a two-attribute exact is what the webhook refuses', () => {
    const [doc] = parseManifests(
      'kind: Trigger\nmetadata: {name: t}\nspec: {broker: b, subscriber: {uri: "http://x"}, filters: [{exact: {a: "1", b: "2"}}]}\n',
    );
    const trigger = parseTrigger(doc ?? {});
    assert.equal(knativeValidationErrors(trigger).length, 1);
  });
});
