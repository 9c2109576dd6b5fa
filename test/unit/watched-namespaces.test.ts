// A namespaced install: the functions' full resync lists each watched namespace (their Roles are
// only there); the standalone bridge watches sources and schedule PingSources in the namespaces
// the ApiServerSources name, without listing namespaces (which would need a ClusterRole).
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { pingNamespaces } from '../../standalone/bridge/bridge.ts';
import { parseSources } from '../../standalone/bridge/sources.ts';
import { settingsFromEnv, type Context } from '../../shared/runtime/context.ts';
import { inWatchedNamespaces } from '../../shared/runtime/watched.ts';

const source = (namespaceSelector: unknown) => ({
  apiVersion: 'sources.knative.dev/v1',
  kind: 'ApiServerSource',
  metadata: { name: 's', namespace: 'ops' },
  spec: {
    mode: 'Reference',
    resources: [{ apiVersion: 'etcdfn.io/v1alpha1', kind: 'EtcdCluster' }],
    namespaceSelector,
    sink: { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'etcdfn' } },
  },
});
const byName = (values: string[]) => ({
  matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values }],
});

describe('watched namespaces', () => {
  it('the functions read $ETCDFN_WATCH_NAMESPACES and list in each, or once across all', async () => {
    assert.deepEqual(settingsFromEnv({ ETCDFN_WATCH_NAMESPACES: 'team-a, team-b,team-a' }).watchNamespaces, [
      'team-a',
      'team-b',
    ]);
    assert.equal(settingsFromEnv({}).watchNamespaces, undefined);
    const asked: string[] = [];
    const list = async (ns: string) => {
      asked.push(ns);
      return [`${ns || '*'}-1`];
    };
    const ctx = (env: NodeJS.ProcessEnv) => ({ settings: settingsFromEnv(env) }) as Context;
    assert.deepEqual(await inWatchedNamespaces(ctx({ ETCDFN_WATCH_NAMESPACES: 'team-a,team-b' }), list), [
      'team-a-1',
      'team-b-1',
    ]);
    assert.deepEqual(await inWatchedNamespaces(ctx({}), list), ['*-1']);
    assert.deepEqual(asked, ['team-a', 'team-b', '']);
  });

  it('the bridge takes a selector on kubernetes.io/metadata.name as names, and watches PingSources there', () => {
    const named = parseSources([source(byName(['team-a', 'team-b']))]).apiServerSources;
    assert.deepEqual(named[0].namespaces, { kind: 'names', namespaces: ['team-a', 'team-b'] });
    assert.deepEqual(pingNamespaces(named), { namespaces: ['team-a', 'team-b'] });
    const all = parseSources([source({})]).apiServerSources;
    assert.deepEqual(all[0].namespaces, { kind: 'all' });
    assert.deepEqual(pingNamespaces(all), {});
    const labelled = parseSources([source({ matchLabels: { team: 'a' } })]).apiServerSources;
    assert.equal(labelled[0].namespaces.kind, 'selector');
    assert.deepEqual(pingNamespaces([...named, ...labelled]), {}, 'one source watches more: every namespace');
  });
});
