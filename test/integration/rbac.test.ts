// Least privilege: the operator's ClusterRole (knative/rbac.yaml, and the chart's copy) grants
// exactly the Kubernetes API calls the code of shared/ and functions/ makes, found by scanning the
// code (test/support/rbac-calls.ts): no verb or resource unused, none missing. The sources' role
// covers what the ApiServerSources (or the standalone bridge) watch; users get aggregated roles.
import assert from 'node:assert/strict';
import { mkdirSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { KINDS, scanApiCalls } from '../support/rbac-calls.ts';
import { helmTemplate, kustomize } from '../support/helm.ts';

const ROOT = join(import.meta.dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

const docs = (text: string): Obj[] =>
  parseAllDocuments(text)
    .map(d => d.toJS() as Obj)
    .filter(Boolean);
const knative = docs(readFileSync(join(ROOT, 'knative', 'rbac.yaml'), 'utf8'));
const sources = docs(readFileSync(join(ROOT, 'knative', 'sources.yaml'), 'utf8'));
const find = (objects: Obj[], kind: string, name: string): Obj => {
  const found = objects.find(o => o.kind === kind && o.metadata?.name === name);
  assert.ok(found, `${kind}/${name}`);
  return found;
};
const renderMode = (mode: string): Obj[] =>
  helmTemplate(4, { mode }, { release: 'etcdfn', namespace: 'ops' });

/** "group|resource|verb" for every permission a role grants. */
function grants(rules: Rule[]): Set<string> {
  const out = new Set<string>();
  for (const r of rules)
    for (const g of r.apiGroups)
      for (const res of r.resources) for (const v of r.verbs) out.add(`${g}|${res}|${v}`);
  return out;
}

const scan = scanApiCalls();
const needed = new Set([
  ...scan.calls.map(c => `${c.group}|${c.resource}|${c.verb}`),
  ...scan.owners.map(kind => `${KINDS[kind].group}|${KINDS[kind].resource}/finalizers|update`),
]);

describe('the operator ClusterRole grants exactly what the code calls', () => {
  it('resolves every Kubernetes API call in shared/ and functions/ to a kind', () => {
    assert.deepEqual(scan.unresolved, []);
    assert.ok(scan.calls.length > 40, `found only ${scan.calls.length} calls`);
  });

  it('finds the calls it should (a check on the scanner itself)', () => {
    for (const p of [
      'etcdfn.io|etcdclusters/status|update',
      'etcdfn.io|etcdmembers|create',
      '|pods|create',
      '|secrets|get',
      '|events|create',
      'policy|poddisruptionbudgets|patch',
      'etcdfn.io|etcdmembers/finalizers|update',
    ])
      assert.ok(needed.has(p), p);
  });

  const role = find(knative, 'ClusterRole', 'etcdfn');
  // The operator namespace's Role: the Broker's address, nothing in other namespaces.
  const own = find(knative, 'Role', 'etcdfn-operator');
  const granted = new Set([...grants(role.rules as Rule[]), ...grants(own.rules as Rule[])]);

  it('reads Brokers only in its own namespace (a Role), and nothing else there', () => {
    assert.deepEqual([...grants(own.rules as Rule[])], ['eventing.knative.dev|brokers|get']);
    assert.ok(![...grants(role.rules as Rule[])].some(p => p.includes('brokers')));
    const binding = find(knative, 'RoleBinding', 'etcdfn-operator');
    assert.deepEqual(binding.roleRef, {
      apiGroup: 'rbac.authorization.k8s.io',
      kind: 'Role',
      name: 'etcdfn-operator',
    });
  });

  it('grants nothing the code does not use', () => {
    assert.deepEqual([...granted].filter(p => !needed.has(p)).sort(), []);
  });

  it('misses nothing the code uses', () => {
    const missing = [...needed].filter(p => !granted.has(p)).sort();
    const where = missing.map(p => {
      const call = scan.calls.find(c => `${c.group}|${c.resource}|${c.verb}` === p);
      return `${p} (${call?.at ?? 'owner reference'})`;
    });
    assert.deepEqual(where, []);
  });

  it('has no wildcards, never lists or watches Secrets, writes them only for auto TLS and auth, and updates the owners’ finalizers', () => {
    for (const p of granted) assert.doesNotMatch(p, /\*/);
    assert.deepEqual([...granted].filter(p => p.startsWith('|secrets|')).sort(), [
      '|secrets|create',
      '|secrets|get',
      '|secrets|update',
    ]);
    // Secrets are written only by the auto TLS provider (its own CA and certificates) and by auth
    // (the generated root password and the operator's applied copy), each through the generic apply
    // of owned objects, and the only Secrets handed to it are built by those two kinds' modules.
    const writers = scan.calls
      .filter(c => c.resource === 'secrets' && c.verb !== 'get')
      .map(c => c.at.replace(/:\d+$/, ''));
    assert.deepEqual([...new Set(writers)].sort(), ['shared/reconcile/owned-apply.ts']);
    const code = ['shared', 'functions'].flatMap(dir =>
      readdirSync(join(ROOT, dir), { recursive: true, encoding: 'utf8' })
        .filter(f => f.endsWith('.ts'))
        .map(f => `${dir}/${f}`),
    );
    const importersOf = (module: string): string[] =>
      code.filter(f => readFileSync(join(ROOT, f), 'utf8').includes(`/plan/owned/${module}'`));
    assert.deepEqual(importersOf('auto-tls-secrets.ts'), ['shared/reconcile/auto-tls.ts']);
    assert.deepEqual(importersOf('root-secrets.ts'), ['shared/reconcile/cluster-auth.ts']);
    for (const owner of ['etcdclusters', 'etcdmembers', 'etcdsnapshotschedules'])
      assert.ok(granted.has(`etcdfn.io|${owner}/finalizers|update`), owner);
  });

  it('is rendered by the chart in both modes with the same rules', () => {
    for (const mode of ['knative', 'standalone']) {
      const rendered = find(renderMode(mode), 'ClusterRole', 'etcdfn');
      assert.deepEqual(rendered.rules, role.rules, mode);
      assert.deepEqual(find(renderMode(mode), 'Role', 'etcdfn-operator').rules, own.rules, mode);
    }
  });
});

describe("the sources' ClusterRole", () => {
  const watched = new Set<string>();
  for (const source of sources.filter(s => s.kind === 'ApiServerSource')) {
    for (const r of source.spec.resources as { kind: string }[]) {
      const { group, resource } = KINDS[r.kind];
      for (const verb of ['get', 'list', 'watch']) watched.add(`${group}|${resource}|${verb}`);
    }
  }

  it('grants get, list and watch on exactly what the ApiServerSources watch', () => {
    const granted = grants(find(knative, 'ClusterRole', 'etcdfn-source').rules as Rule[]);
    assert.deepEqual([...granted].sort(), [...watched].sort());
  });

  it('is bound to the bridge (the etcdfn ServiceAccount) in standalone mode', () => {
    const objects = renderMode('standalone');
    const binding = find(objects, 'ClusterRoleBinding', 'etcdfn-source');
    assert.equal(binding.roleRef.name, 'etcdfn-source');
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'etcdfn', namespace: 'ops' }]);
    const role = find(objects, 'ClusterRole', 'etcdfn-source');
    assert.deepEqual([...grants(role.rules as Rule[])].sort(), [...watched].sort());
  });
});

describe('aggregated roles for users', () => {
  const LABEL = 'rbac.authorization.k8s.io/aggregate-to-';
  for (const mode of ['knative', 'standalone']) {
    it(`etcdfn-view and etcdfn-edit aggregate into view/edit/admin (${mode})`, () => {
      const objects = renderMode(mode);
      const view = find(objects, 'ClusterRole', 'etcdfn-view');
      const edit = find(objects, 'ClusterRole', 'etcdfn-edit');
      for (const to of ['view', 'edit', 'admin']) assert.equal(view.metadata.labels[LABEL + to], 'true');
      for (const to of ['edit', 'admin']) assert.equal(edit.metadata.labels[LABEL + to], 'true');
      assert.equal(edit.metadata.labels[LABEL + 'view'], undefined);
      const viewGrants = [...grants(view.rules as Rule[])];
      assert.deepEqual(
        viewGrants.filter(p => !/\|(get|list|watch)$/.test(p)),
        [],
        'view only reads',
      );
      assert.ok(viewGrants.includes('etcdfn.io|etcdclusters|watch'));
      const editGrants = [...grants(edit.rules as Rule[])];
      assert.ok(editGrants.includes('etcdfn.io|etcdclusters|create'));
      assert.ok(editGrants.includes('etcdfn.io|etcdclusters/scale|update'));
      // Members and status belong to the operator.
      assert.deepEqual(
        editGrants.filter(p => p.includes('etcdmembers') || p.includes('/status')),
        [],
      );
    });
  }
});

describe('a namespaced install (watchNamespaces): Roles where clusters run, no ClusterRole for namespaced kinds', () => {
  const WATCHED = ['team-a', 'team-b'];
  const CLUSTER_SCOPED = new Set(['|nodes|get', '|persistentvolumes|get']);
  const OWN_NAMESPACE = new Set(['eventing.knative.dev|brokers|get']);
  const USER_ROLES = new Set(['etcdfn-view', 'etcdfn-edit']);
  for (const mode of ['knative', 'standalone']) {
    describe(`${mode} mode`, () => {
      const objects = helmTemplate(
        4,
        { mode, watchNamespaces: WATCHED },
        { release: 'etcdfn', namespace: 'ops' },
      );
      const roleIn = (ns: string, name: string) =>
        objects.find(o => o.kind === 'Role' && o.metadata.name === name && o.metadata.namespace === ns);

      it('grants in each watched namespace exactly the namespaced calls the code makes (the RBAC scan)', () => {
        const namespaced = [...needed].filter(p => !CLUSTER_SCOPED.has(p) && !OWN_NAMESPACE.has(p)).sort();
        for (const ns of WATCHED) {
          const role = roleIn(ns, 'etcdfn');
          assert.ok(role, `Role etcdfn in ${ns}`);
          assert.deepEqual([...grants(role.rules as Rule[])].sort(), namespaced, ns);
          const binding = objects.find(
            o => o.kind === 'RoleBinding' && o.metadata.name === 'etcdfn' && o.metadata.namespace === ns,
          );
          assert.deepEqual(binding?.roleRef, {
            apiGroup: 'rbac.authorization.k8s.io',
            kind: 'Role',
            name: 'etcdfn',
          });
          assert.deepEqual(binding?.subjects, [{ kind: 'ServiceAccount', name: 'etcdfn', namespace: 'ops' }]);
        }
      });

      it('keeps a ClusterRole only for Nodes and PersistentVolumes (cluster-scoped)', () => {
        const clusterRoles = objects.filter(
          o => o.kind === 'ClusterRole' && !USER_ROLES.has(o.metadata.name),
        );
        assert.deepEqual(
          clusterRoles.map(o => o.metadata.name),
          ['etcdfn-cluster-scoped'],
        );
        assert.deepEqual([...grants(clusterRoles[0].rules as Rule[])].sort(), [...CLUSTER_SCOPED].sort());
        assert.deepEqual(
          objects.filter(o => o.kind === 'ClusterRoleBinding').map(o => o.metadata.name),
          ['etcdfn-cluster-scoped'],
        );
        for (const o of objects.filter(x => x.kind === 'ClusterRole' && !USER_ROLES.has(x.metadata.name)))
          for (const p of grants(o.rules as Rule[]))
            assert.doesNotMatch(
              p,
              /\|(pods|persistentvolumeclaims|secrets|jobs|events|etcd\w+|pingsources)(\/\w+)?\|/,
              p,
            );
      });

      it('lets the sources (or the bridge) watch in the watched namespaces only', () => {
        const account = mode === 'knative' ? 'etcdfn-source' : 'etcdfn';
        for (const ns of WATCHED) {
          const role = roleIn(ns, 'etcdfn-source');
          assert.ok(role, `Role etcdfn-source in ${ns}`);
          const binding = objects.find(
            o =>
              o.kind === 'RoleBinding' && o.metadata.name === 'etcdfn-source' && o.metadata.namespace === ns,
          );
          assert.deepEqual(binding?.subjects, [{ kind: 'ServiceAccount', name: account, namespace: 'ops' }]);
          if (mode === 'standalone') assert.ok(roleIn(ns, 'etcdfn-bridge'), `Role etcdfn-bridge in ${ns}`);
        }
        const routing =
          mode === 'standalone'
            ? parseAllDocuments(find(objects, 'ConfigMap', 'etcdfn-routing').data['sources.yaml']).map(
                d => d.toJS() as Obj,
              )
            : objects;
        for (const source of routing.filter(o => o.kind === 'ApiServerSource'))
          assert.deepEqual(source.spec.namespaceSelector, {
            matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: WATCHED }],
          });
      });
    });
  }

  it('the functions list across namespaces only through inWatchedNamespaces (no list in namespace "")', () => {
    const offenders = scan.calls
      .filter(c => c.verb === 'list')
      .filter(c => {
        const [file, line] = c.at.split(':');
        const text = readFileSync(join(ROOT, file), 'utf8')
          .split('\n')
          .slice(Number(line) - 1, Number(line) + 3)
          .join(' ');
        return /,\s*''\s*[,)]/.test(text);
      })
      .map(c => c.at);
    assert.deepEqual(offenders, []);
  });
});

describe('a namespaced install with kustomize (knative/namespaced + knative/watch-namespace)', () => {
  const WATCHED = ['team-a', 'team-b'];
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-namespaced-'));
  const knativeDir = relative(dir, join(ROOT, 'knative'));
  let objects: Obj[];
  try {
    for (const ns of WATCHED) {
      mkdirSync(join(dir, ns));
      writeFileSync(
        join(dir, ns, 'kustomization.yaml'),
        JSON.stringify({ namespace: ns, resources: [join('..', knativeDir, 'watch-namespace')] }),
      );
    }
    // The overlay docs/installation.md shows.
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      JSON.stringify({
        resources: [knativeDir, ...WATCHED],
        components: [join(knativeDir, 'namespaced')],
        patches: [
          {
            target: { kind: 'ApiServerSource' },
            patch: JSON.stringify([
              {
                op: 'replace',
                path: '/spec/namespaceSelector',
                value: {
                  matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: WATCHED }],
                },
              },
            ]),
          },
          {
            target: { group: 'serving.knative.dev', kind: 'Service' },
            patch: JSON.stringify([
              {
                op: 'add',
                path: '/spec/template/spec/containers/0/env/-',
                value: { name: 'ETCDFN_WATCH_NAMESPACES', value: WATCHED.join(',') },
              },
            ]),
          },
        ],
      }),
    );
    objects = kustomize(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }

  it('grants the same Roles as the chart in each watched namespace, and no ClusterRole for namespaced kinds', () => {
    const chart = helmTemplate(
      4,
      { watchNamespaces: WATCHED },
      { release: 'etcdfn', namespace: 'etcdfn-system' },
    );
    for (const ns of WATCHED)
      for (const name of ['etcdfn', 'etcdfn-source']) {
        const mine = objects.find(
          o => o.kind === 'Role' && o.metadata.name === name && o.metadata.namespace === ns,
        );
        const theirs = chart.find(
          o => o.kind === 'Role' && o.metadata.name === name && o.metadata.namespace === ns,
        );
        assert.ok(mine && theirs, `${ns}/${name}`);
        assert.deepEqual(mine.rules, theirs.rules, `${ns}/${name}`);
        const binding = objects.find(
          o => o.kind === 'RoleBinding' && o.metadata.name === name && o.metadata.namespace === ns,
        );
        assert.equal(binding?.subjects[0].namespace, 'etcdfn-system');
      }
    const clusterRoles = objects.filter(
      o => o.kind === 'ClusterRole' && !['etcdfn-view', 'etcdfn-edit'].includes(o.metadata.name),
    );
    assert.deepEqual(
      clusterRoles.map(o => o.metadata.name),
      ['etcdfn-cluster-scoped'],
    );
    assert.deepEqual(clusterRoles[0].rules, find(chart, 'ClusterRole', 'etcdfn-cluster-scoped').rules);
    assert.deepEqual(
      objects.filter(o => o.kind === 'ClusterRoleBinding').map(o => o.metadata.name),
      ['etcdfn-cluster-scoped'],
    );
    for (const s of objects.filter(o => o.kind === 'ApiServerSource'))
      assert.deepEqual(s.spec.namespaceSelector.matchExpressions[0].values, WATCHED);
    for (const s of objects.filter(o => o.kind === 'Service'))
      assert.ok(
        (s.spec.template.spec.containers[0].env as Obj[]).some(e => e.name === 'ETCDFN_WATCH_NAMESPACES'),
      );
  });
});
