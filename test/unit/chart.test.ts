// The Helm chart (charts/etcdfn), rendered by test/support/helm-template.ts (the helm binary is not
// available here): its CRDs are byte-identical to crds/; in knative mode it renders exactly what
// knative/ holds, in the release namespace; in standalone mode one Deployment whose bridge command
// is what standalone/main.ts accepts, routing by the same sources and Triggers; values reach
// the objects they name.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Ajv } from 'ajv';
import { loadBrokerDelivery, loadSources, parseManifests } from '../../standalone/bridge/sources.ts';
import { loadTriggers } from '../../standalone/bridge/triggers.ts';
import { buildCommand } from '../../standalone/main.ts';
import {
  loadChart,
  mergeValues,
  renderChart,
  renderString,
  TemplateError,
  type Manifest,
  type RenderOptions,
} from '../support/helm-template.ts';

const ROOT = join(import.meta.dirname, '..', '..');
const CHART_DIR = join(ROOT, 'charts', 'etcdfn');
const KNATIVE_DIR = join(ROOT, 'knative');
const NAMESPACE = 'etcd-operator';
const chart = loadChart(CHART_DIR);

// Rendered manifests are untyped YAML; the assertions themselves check their shape.
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

const render = (values: Obj = {}, options: RenderOptions = {}) =>
  renderChart(chart, { releaseName: 'etcdfn', namespace: NAMESPACE, ...options, values });
const objects = (manifests: Manifest[]): Obj[] => manifests.map(m => m.object);
const key = (o: Obj) => `${o.kind}/${o.metadata?.name}`;
const find = (list: Obj[], kind: string, name: string): Obj => {
  const found = list.find(o => o.kind === kind && o.metadata?.name === name);
  assert.ok(found, `no ${kind}/${name} in ${list.map(key).join(', ')}`);
  return found;
};

/** knative/*.yaml with etcdfn-system replaced by the release namespace, as the chart should render it. */
function knativeObjects(namespace = NAMESPACE): Obj[] {
  return readdirSync(KNATIVE_DIR)
    .filter(f => f.endsWith('.yaml'))
    .sort()
    .flatMap(f => parseManifests(readFileSync(join(KNATIVE_DIR, f), 'utf8'), f))
    .map(o => JSON.parse(JSON.stringify(o).replaceAll('"etcdfn-system"', JSON.stringify(namespace))) as Obj);
}

/** An object without what the chart adds on purpose (labels), for comparison with knative/. */
function withoutLabels(o: Obj): Obj {
  const copy = structuredClone(o);
  delete copy.metadata.labels;
  return copy;
}

/** Every container of a Knative Service or a Deployment. */
const containersOf = (o: Obj): Obj[] => o.spec.template.spec.containers as Obj[];
const envOf = (c: Obj): Record<string, string> =>
  Object.fromEntries((c.env as { name: string; value: string }[]).map(e => [e.name, e.value]));

const FUNCTIONS = ['reconcile-cluster', 'reconcile-member', 'finalize-member', 'run-snapshot'];

describe('chart metadata and CRDs', () => {
  it('Chart.yaml is a Helm 3 chart whose appVersion is the package version', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    const meta = chart.metadata;
    assert.equal(meta.apiVersion, 'v2');
    assert.equal(meta.name, 'etcdfn');
    assert.equal(meta.version, '0.1.0');
    assert.equal(meta.appVersion, pkg.version);
    assert.equal(meta.kubeVersion, '>=1.29.0-0');
    assert.ok(typeof meta.description === 'string' && meta.description.length > 0);
  });

  it("the chart's crds/ are byte-identical copies of crds/ (fix: scripts/sync-chart-crds.sh)", () => {
    const source = readdirSync(join(ROOT, 'crds')).sort();
    const copies = readdirSync(join(CHART_DIR, 'crds')).sort();
    assert.deepEqual(copies, source, 'run scripts/sync-chart-crds.sh');
    for (const file of source) {
      const a = readFileSync(join(ROOT, 'crds', file));
      const b = readFileSync(join(CHART_DIR, 'crds', file));
      assert.ok(
        a.equals(b),
        `charts/etcdfn/crds/${file} differs from crds/${file}: run scripts/sync-chart-crds.sh`,
      );
    }
  });

  it('scripts/sync-chart-crds.sh --check agrees', () => {
    const out = execFileSync('bash', [join(ROOT, 'scripts', 'sync-chart-crds.sh'), '--check'], {
      encoding: 'utf8',
    });
    assert.match(out, /in sync/);
  });

  it('values.yaml passes values.schema.json, and a wrong mode does not', () => {
    const schema = JSON.parse(readFileSync(join(CHART_DIR, 'values.schema.json'), 'utf8')) as object;
    const validate = new Ajv({ allErrors: true }).compile(schema);
    assert.ok(validate(chart.values), JSON.stringify(validate.errors));
    assert.ok(validate(mergeValues(chart.values, { mode: 'standalone', standalone: { concurrency: 4 } })));
    assert.equal(validate(mergeValues(chart.values, { mode: 'operator' })), false);
    assert.equal(validate(mergeValues(chart.values, { logLevel: 'verbose' })), false);
  });

  it('every .Values path the templates read exists in values.yaml', () => {
    for (const [path, source] of chart.templates) {
      for (const match of source.matchAll(/\.Values((?:\.[A-Za-z_][A-Za-z0-9_]*)+)/g)) {
        let node: unknown = chart.values;
        for (const part of match[1].slice(1).split('.')) {
          assert.ok(
            node && typeof node === 'object' && part in node,
            `${path}: .Values${match[1]} is not in values.yaml`,
          );
          node = (node as Obj)[part];
        }
      }
    }
  });
});

describe('knative mode (the default)', () => {
  const rendered = render();
  const chartObjects = objects(rendered.manifests);
  const expected = knativeObjects();

  it('renders the objects of knative/ except the Namespace (helm install --create-namespace makes it)', () => {
    const want = expected
      .filter(o => o.kind !== 'Namespace')
      .map(key)
      .sort();
    assert.deepEqual(chartObjects.map(key).sort(), want);
  });

  it('puts every namespaced object in the release namespace and never names etcdfn-system', () => {
    for (const o of chartObjects) {
      if (o.kind === 'ClusterRole' || o.kind === 'ClusterRoleBinding')
        assert.equal(o.metadata.namespace, undefined);
      else assert.equal(o.metadata.namespace, NAMESPACE, key(o));
    }
    for (const [file, text] of rendered.files) assert.doesNotMatch(text, /etcdfn-system/, file);
  });

  it('renders the Broker, sources, Triggers and RBAC exactly as knative/ (labels aside)', () => {
    const kinds = new Set([
      'Broker',
      'ApiServerSource',
      'PingSource',
      'Trigger',
      'ServiceAccount',
      'ClusterRole',
      'ClusterRoleBinding',
    ]);
    const compared = expected.filter(o => kinds.has(o.kind as string));
    assert.equal(compared.length, 16);
    for (const want of compared) {
      assert.deepEqual(
        withoutLabels(find(chartObjects, want.kind, want.metadata.name)),
        withoutLabels(want),
        key(want),
      );
    }
  });

  it('renders the four Knative Services as knative/services.yaml does, plus env and resources', () => {
    for (const name of FUNCTIONS) {
      const want = find(expected, 'Service', name);
      const got = find(chartObjects, 'Service', name);
      assert.equal(got.apiVersion, 'serving.knative.dev/v1');
      assert.equal(got.metadata.labels['networking.knative.dev/visibility'], 'cluster-local');
      assert.equal(got.metadata.labels['app.kubernetes.io/part-of'], 'etcdfn');
      assert.deepEqual(got.spec.template.metadata.annotations, want.spec.template.metadata.annotations, name);
      const { containers: gotContainers, ...gotPod } = got.spec.template.spec;
      const { containers: wantContainers, ...wantPod } = want.spec.template.spec;
      assert.deepEqual(gotPod, wantPod, name);
      const [container] = gotContainers as Obj[];
      const [wanted] = wantContainers as Obj[];
      assert.equal(gotContainers.length, 1);
      assert.equal(container.image, wanted.image);
      assert.deepEqual(container.securityContext, wanted.securityContext);
      assert.deepEqual(envOf(container), {
        ...envOf(wanted),
        LOG_LEVEL: 'info',
        ETCD_IMAGE_REPOSITORY: 'quay.io/coreos/etcd',
      });
      assert.equal(container.imagePullPolicy, 'IfNotPresent');
      assert.deepEqual(container.resources, chart.values.resources);
    }
  });

  it('labels every object for the release', () => {
    for (const o of chartObjects) {
      assert.equal(o.metadata.labels['app.kubernetes.io/instance'], 'etcdfn', key(o));
      assert.equal(o.metadata.labels['app.kubernetes.io/managed-by'], 'Helm', key(o));
      assert.equal(o.metadata.labels['helm.sh/chart'], 'etcdfn-0.1.0', key(o));
    }
  });

  it('NOTES.txt tells what to check next', () => {
    assert.match(rendered.notes, /namespace etcd-operator \(knative mode\)/);
    assert.match(
      rendered.notes,
      /kubectl -n etcd-operator get broker,apiserversources,pingsources,triggers,ksvc/,
    );
    assert.match(rendered.notes, /kubectl apply --server-side --force-conflicts -f charts\/etcdfn\/crds\//);
  });
});

describe('standalone mode', () => {
  const rendered = render({ mode: 'standalone' });
  const chartObjects = objects(rendered.manifests);
  const deployment = find(chartObjects, 'Deployment', 'etcdfn');
  const containers = containersOf(deployment);
  const bridge = containers.find(c => c.name === 'bridge');

  it('renders a ServiceAccount, its RBAC, the routing ConfigMap and one Deployment, and nothing of Knative', () => {
    assert.deepEqual(chartObjects.map(key).sort(), [
      'ClusterRole/etcdfn',
      'ClusterRole/etcdfn-edit',
      'ClusterRole/etcdfn-source',
      'ClusterRole/etcdfn-view',
      'ClusterRoleBinding/etcdfn',
      'ClusterRoleBinding/etcdfn-source',
      'ConfigMap/etcdfn-routing',
      'Deployment/etcdfn',
      'ServiceAccount/etcdfn',
    ]);
    assert.equal(deployment.spec.replicas, 1);
    assert.equal(deployment.spec.template.spec.serviceAccountName, 'etcdfn');
    const selector = deployment.spec.selector.matchLabels as Record<string, string>;
    for (const [k, v] of Object.entries(selector))
      assert.equal(deployment.spec.template.metadata.labels[k], v);
  });

  it('gives the ServiceAccount the rules of knative/rbac.yaml (those of the sources included)', () => {
    const knative = knativeObjects();
    const binding = find(chartObjects, 'ClusterRoleBinding', 'etcdfn');
    assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: 'etcdfn', namespace: NAMESPACE }]);
    const role = find(chartObjects, 'ClusterRole', binding.roleRef.name);
    assert.deepEqual(role.rules, find(knative, 'ClusterRole', 'etcdfn').rules);
    // The bridge's watches come from etcdfn-source, bound to the same ServiceAccount.
    const rules = chartObjects
      .filter(o => o.kind === 'ClusterRoleBinding')
      .filter(b => (b.subjects as Obj[]).some(s => s.name === 'etcdfn'))
      .flatMap(b => find(chartObjects, 'ClusterRole', b.roleRef.name).rules as Obj[]);
    const allows = (group: string, resource: string, verb: string) =>
      rules.some(
        r => r.apiGroups.includes(group) && r.resources.includes(resource) && r.verbs.includes(verb),
      );
    for (const rule of find(knative, 'ClusterRole', 'etcdfn-source').rules as Obj[]) {
      for (const group of rule.apiGroups) {
        for (const resource of rule.resources) {
          for (const verb of rule.verbs)
            assert.ok(allows(group, resource, verb), `${verb} ${group}/${resource}`);
        }
      }
    }
  });

  it("runs the bridge with arguments standalone/main.ts's CLI accepts", () => {
    assert.ok(bridge, 'no bridge container');
    const command = bridge.command as string[];
    assert.deepEqual(command, ['node', '--import', 'tsx', 'standalone/main.ts']);
    readFileSync(join(ROOT, command.at(-1)!)); // the entry exists
    const options = buildCommand()
      .exitOverride()
      .parse(bridge.args as string[], { from: 'user' })
      .opts<{ knativeDir: string; subscriber: Record<string, string>; tick: boolean }>();
    assert.equal(options.tick, true);
    const mount = (bridge.volumeMounts as Obj[]).find(m => m.mountPath === options.knativeDir);
    assert.ok(mount, `--knative-dir ${options.knativeDir} is not a mount of the bridge`);
    const volume = (deployment.spec.template.spec.volumes as Obj[]).find(v => v.name === mount.name);
    assert.equal(volume?.configMap?.name, 'etcdfn-routing');
    assert.deepEqual(Object.keys(options.subscriber).sort(), [...FUNCTIONS].sort());
    for (const [name, url] of Object.entries(options.subscriber)) {
      const fn = containers.find(c => c.name === name);
      assert.ok(fn, `no container for ${name}`);
      const env = envOf(fn);
      assert.equal(env.FUNCTION_TARGET, name);
      assert.equal(url, `http://${env.HOST}:${env.PORT}`);
      assert.equal(fn.command, undefined, 'functions run with the image entry point, as on Knative');
    }
    assert.equal(new Set(Object.values(options.subscriber)).size, FUNCTIONS.length, 'one port per function');
  });

  it('routes as knative/ does: the bridge loads the same sources, Triggers and Broker from the ConfigMap', () => {
    const configMap = find(chartObjects, 'ConfigMap', 'etcdfn-routing');
    const dir = mkdtempSync(join(tmpdir(), 'etcdfn-chart-'));
    const expectedDir = mkdtempSync(join(tmpdir(), 'etcdfn-knative-'));
    try {
      for (const [file, text] of Object.entries(configMap.data as Record<string, string>)) {
        writeFileSync(join(dir, file), text);
        const original = readFileSync(join(KNATIVE_DIR, file), 'utf8');
        writeFileSync(join(expectedDir, file), original.replaceAll('etcdfn-system', NAMESPACE));
      }
      assert.deepEqual(Object.keys(configMap.data).sort(), ['broker.yaml', 'sources.yaml', 'triggers.yaml']);
      assert.deepEqual(loadSources(dir), loadSources(expectedDir));
      assert.deepEqual(loadTriggers(dir, { strict: true }), loadTriggers(expectedDir, { strict: true }));
      assert.deepEqual(loadBrokerDelivery(dir), loadBrokerDelivery(expectedDir));
    } finally {
      rmSync(dir, { recursive: true, force: true });
      rmSync(expectedDir, { recursive: true, force: true });
    }
  });

  it('every container is restricted; functions listen on loopback only', () => {
    for (const c of containers) {
      assert.equal(c.securityContext.runAsNonRoot, true, c.name);
      assert.equal(c.securityContext.allowPrivilegeEscalation, false, c.name);
      assert.deepEqual(c.securityContext.capabilities, { drop: ['ALL'] });
      if (c.name !== 'bridge') assert.equal(envOf(c).HOST, '127.0.0.1');
    }
    assert.equal(containers.length, 5);
  });

  it('NOTES.txt says how to check the Deployment', () => {
    assert.match(rendered.notes, /\(standalone mode\)/);
    assert.match(rendered.notes, /kubectl -n etcd-operator rollout status deployment\/etcdfn/);
  });
});

describe('values overrides', () => {
  const functionContainers = (list: Obj[]) =>
    list
      .filter(o => o.kind === 'Service' || o.kind === 'Deployment')
      .flatMap(containersOf)
      .filter(c => c.name !== 'bridge');
  const overrides = {
    image: { repository: 'registry.example/etcdfn', tag: '0.2.0-rc.1', pullPolicy: 'Always' },
    etcd: { imageRepository: 'mirror.example/coreos/etcd' },
    logLevel: 'debug',
    tick: { schedule: '*/5 * * * *' },
    imagePullSecrets: [{ name: 'regcred' }],
    extraLabels: { team: 'storage' },
    extraEnv: [{ name: 'ETCDFN_UNHEALTHY_WAIT_MS', value: '9000' }],
    resources: { requests: { cpu: '100m' } },
  };

  for (const mode of ['knative', 'standalone']) {
    it(`reach every container and object in ${mode} mode`, () => {
      const list = objects(render({ ...overrides, mode }).manifests);
      const containers = functionContainers(list);
      assert.equal(containers.length, 4);
      const all = list.filter(o => o.kind === 'Service' || o.kind === 'Deployment').flatMap(containersOf);
      for (const c of all) {
        assert.equal(c.image, 'registry.example/etcdfn:0.2.0-rc.1');
        assert.equal(c.imagePullPolicy, 'Always');
        // Helm merges maps of user values into the chart's: only requests.cpu changes.
        assert.deepEqual(c.resources, {
          requests: { cpu: '100m', memory: '128Mi' },
          limits: { memory: '512Mi' },
        });
        assert.equal(envOf(c).LOG_LEVEL, 'debug');
      }
      for (const c of containers) {
        const env = envOf(c);
        assert.equal(env.ETCD_IMAGE_REPOSITORY, 'mirror.example/coreos/etcd');
        assert.equal(env.ETCDFN_UNHEALTHY_WAIT_MS, '9000');
      }
      for (const o of list) assert.equal(o.metadata.labels.team, 'storage', key(o));
      for (const o of list.filter(x => x.kind === 'Service' || x.kind === 'Deployment')) {
        assert.deepEqual(o.spec.template.spec.imagePullSecrets, [{ name: 'regcred' }]);
        assert.equal(o.spec.template.metadata.labels.team, 'storage');
      }
      const sources =
        mode === 'knative'
          ? list
          : parseManifests(find(list, 'ConfigMap', 'etcdfn-routing').data['sources.yaml'] as string);
      assert.equal(find(sources, 'PingSource', 'etcdfn-tick').spec.schedule, '*/5 * * * *');
    });
  }

  it('tag defaults to the appVersion; no imagePullSecrets by default', () => {
    for (const o of objects(render().manifests).filter(x => x.kind === 'Service')) {
      assert.equal(containersOf(o)[0].image, 'ghcr.io/etcdfn/etcdfn:0.1.0');
      assert.equal(o.spec.template.spec.imagePullSecrets, undefined);
    }
  });

  it('Knative scale bounds, timeouts and extra annotations', () => {
    const list = objects(
      render({
        knative: {
          functions: { reconcileCluster: { minScale: 1, maxScale: 5, timeoutSeconds: 120 } },
          annotations: { 'autoscaling.knative.dev/scale-down-delay': '5m' },
        },
      }).manifests,
    );
    const service = find(list, 'Service', 'reconcile-cluster');
    assert.deepEqual(service.spec.template.metadata.annotations, {
      'autoscaling.knative.dev/min-scale': '1',
      'autoscaling.knative.dev/max-scale': '5',
      'autoscaling.knative.dev/scale-down-delay': '5m',
    });
    assert.equal(service.spec.template.spec.timeoutSeconds, 120);
    const other = find(list, 'Service', 'run-snapshot');
    assert.equal(other.spec.template.metadata.annotations['autoscaling.knative.dev/max-scale'], '2');
    assert.equal(other.spec.template.spec.timeoutSeconds, 600);
  });

  it('standalone bridge options: concurrency, extra arguments, placement, command', () => {
    const list = objects(
      render({
        mode: 'standalone',
        standalone: {
          concurrency: 8,
          extraArgs: ['--format', 'structured'],
          bridgeCommand: ['node', 'dist/standalone/main.js'],
          nodeSelector: { 'kubernetes.io/os': 'linux' },
          tolerations: [{ key: 'dedicated', operator: 'Exists' }],
        },
      }).manifests,
    );
    const deployment = find(list, 'Deployment', 'etcdfn');
    const bridge = containersOf(deployment).find(c => c.name === 'bridge')!;
    assert.deepEqual(bridge.command, ['node', 'dist/standalone/main.js']);
    const options = buildCommand()
      .exitOverride()
      .parse(bridge.args as string[], { from: 'user' })
      .opts<{ concurrency: number; format: string }>();
    assert.equal(options.concurrency, 8);
    assert.equal(options.format, 'structured');
    assert.deepEqual(deployment.spec.template.spec.nodeSelector, { 'kubernetes.io/os': 'linux' });
    assert.deepEqual(deployment.spec.template.spec.tolerations, [{ key: 'dedicated', operator: 'Exists' }]);
    assert.equal(deployment.spec.template.spec.affinity, undefined);
  });

  it('another release name and namespace reach labels, namespaces and RBAC subjects', () => {
    const rendered = render({}, { releaseName: 'one', namespace: 'ns-a' });
    assert.doesNotMatch([...rendered.files.values()].join('\n'), /etcd-operator/);
    const list = objects(rendered.manifests);
    assert.ok(list.every(o => o.metadata.labels['app.kubernetes.io/instance'] === 'one'));
    assert.equal(find(list, 'ClusterRoleBinding', 'etcdfn').subjects[0].namespace, 'ns-a');
    assert.equal(find(list, 'Trigger', 'run-snapshot').metadata.namespace, 'ns-a');
  });
});

describe('the test renderer (test/support/helm-template.ts)', () => {
  const data = {
    Values: { name: 'x', list: ['a', 'b'], map: { b: 2, a: 1 }, empty: '', n: 0, nested: { k: 'v' } },
  };
  const cases: [string, string][] = [
    ['{{ .Values.name }}', 'x'],
    ['a {{- " b " -}} c', 'a b c'],
    ['a\n  {{- if .Values.name }}\n  yes\n  {{- end }}\n', 'a\n  yes\n'],
    ['{{ if .Values.empty }}t{{ else if .Values.n }}n{{ else }}e{{ end }}', 'e'],
    ['{{ with .Values.nested }}{{ .k }}/{{ $.Values.name }}{{ end }}', 'v/x'],
    ['{{ with .Values.missing }}m{{ else }}none{{ end }}', 'none'],
    ['{{ range .Values.list }}[{{ . }}]{{ end }}', '[a][b]'],
    ['{{ range .Values.map }}{{ . }}{{ end }}', '12'],
    ['{{ range .Values.missing }}x{{ else }}nothing{{ end }}', 'nothing'],
    ['{{ .Values.n | quote }} {{ .Values.missing | quote }}.', '"0" .'],
    ['{{ .Values.empty | default "d" }} {{ .Values.name | default "d" }}', 'd x'],
    ['{{ eq .Values.name "x" }}', 'true'],
    ['k:{{ toYaml .Values.map | nindent 2 }}', 'k:\n  a: 1\n  b: 2'],
    ['{{ .Values.missing }}|{{ toYaml .Values.missing }}', '|null'],
    ['{{/* a comment */}}x{{- /* another */ -}} y', 'xy'],
    ['{{ include "t" .Values.nested | indent 2 }}', '  k=v'],
  ];
  for (const [template, want] of cases) {
    it(`renders ${JSON.stringify(template)}`, () => {
      assert.equal(renderString(template, data, { partials: '{{ define "t" }}k={{ .k }}{{ end }}' }), want);
    });
  }

  const refused: [string, RegExp][] = [
    ['{{ tpl .Values.name . }}', /function "tpl" is not supported/],
    ['{{ lookup "v1" "Pod" "" "" }}', /function "lookup" is not supported/],
    ['{{ $x := .Values.name }}', /variables/],
    ['{{ (.Values.name) }}', /unsupported syntax/],
    ['{{ template "t" . }}', /"template" is not supported/],
    ['{{ if .Values.name }}x', /has no \{\{ end \}\}/],
    ['{{ end }}', /unexpected/],
    ['{{ .Values.name', /unclosed action/],
    ['{{ .Values.missing.deeper }}', /nil pointer/],
    ['{{ .Values.list }}', /cannot print a list/],
    ['{{ eq .Values.n "0" }}', /incompatible types/],
    ['{{ include "nope" . }}', /no template "nope"/],
    ['{{ range .Values.name }}{{ end }}', /can't iterate/],
    ['{{ .Values.name-}}', /trim marker/],
    ['{{ if .Values.name }}{{ define "x" }}{{ end }}{{ end }}', /define only at the top level/],
  ];
  for (const [template, error] of refused) {
    it(`refuses ${JSON.stringify(template)}`, () => {
      assert.throws(
        () => renderString(template, data),
        (err: unknown) => {
          assert.ok(err instanceof TemplateError, String(err));
          assert.match(err.message, error);
          return true;
        },
      );
    });
  }

  it('refuses a document without apiVersion and kind, and invalid YAML', () => {
    const bad = { ...chart, templates: new Map([['templates/x.yaml', '# only a comment\n---\nkind: A\n']]) };
    assert.throws(() => renderChart(bad), /without apiVersion and kind/);
    const broken = {
      ...chart,
      templates: new Map([['templates/x.yaml', 'apiVersion: v1\nkind: A\n a: [\n']]),
    };
    assert.throws(() => renderChart(broken), TemplateError);
  });
});
