// knative/ as a kustomize base and what is built from it (release/overlay, release/etcdfn-knative.yaml)
// and from the chart in knative mode: the release manifest is up to date; the base names no
// namespace and no tag; every object is valid against its schema; every Trigger's delivery is
// complete in itself and its timeout is at least the request limit of the function it delivers to;
// the sources watch only labelled objects; an idle system receives no event for longer than
// Knative's scale-to-zero window, and every function sets a short window of its own.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync, spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';

import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { Cron } from 'croner';
import { pingEvent } from '../../standalone/bridge/format.ts';
import { parseIsoDuration, parseSources } from '../../standalone/bridge/sources.ts';
import { attributesOf, loadTriggers, triggerMatches } from '../../standalone/bridge/triggers.ts';
import { pingSpecOf } from '../../standalone/bridge/api-pings.ts';
import type { WatchedObject } from '../../standalone/bridge/format.ts';
import type { PingSourceSpec } from '../../standalone/bridge/sources.ts';
import { desiredPingSource } from '../../shared/plan/schedule/ping.ts';
import {
  find,
  helmTemplate,
  HELM_MAJORS,
  key,
  kustomize,
  parseYaml,
  ROOT,
  schemaErrors,
  type Obj,
} from '../support/helm.ts';

const KNATIVE_DIR = join(ROOT, 'knative');
const RELEASE_FILE = join(ROOT, 'release', 'etcdfn-knative.yaml');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;

/** Knative Serving's defaults: revision timeout, stable window and scale-to-zero grace period. */
const KNATIVE_DEFAULT_TIMEOUT_S = 300;
const KNATIVE_MAX_TIMEOUT_S = 600;
const STABLE_WINDOW_S = 60;
const SCALE_TO_ZERO_GRACE_S = 30;
/** A Trigger's delivery timeout leaves this much over its function's request limit (cold start, queueing). */
const DELIVERY_HEADROOM_S = 60;

/** The base built into a namespace through a throw-away overlay (as a user's overlay would). */
function overlayBuild(namespace: string, image: Obj): Obj[] {
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-kustomize-'));
  try {
    const base = relative(dir, KNATIVE_DIR);
    writeFileSync(
      join(dir, 'kustomization.yaml'),
      JSON.stringify({ namespace, resources: [base], images: [{ name: 'ghcr.io/etcdfn/etcdfn', ...image }] }),
    );
    return kustomize(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * What the API server would refuse when these objects are applied as they are: a ServiceAccount
 * subject without a namespace (the schema leaves it optional; the API server requires it), a
 * namespaced object in a namespace neither created here nor named.
 */
export function applyProblems(objects: Obj[]): string[] {
  const problems: string[] = [];
  const CLUSTER_SCOPED = new Set([
    'Namespace',
    'ClusterRole',
    'ClusterRoleBinding',
    'CustomResourceDefinition',
  ]);
  for (const o of objects) {
    problems.push(...schemaErrors(o).map(e => `${key(o)}: ${e}`));
    if (!CLUSTER_SCOPED.has(o.kind) && !o.metadata.namespace) problems.push(`${key(o)}: no namespace`);
    for (const s of (o.subjects ?? []) as Obj[])
      if (s.kind === 'ServiceAccount' && !s.namespace)
        problems.push(`${key(o)}: ServiceAccount subject ${s.name} has no namespace`);
  }
  return problems;
}

/** Seconds, from an ISO-8601 duration (PT300S) or a Go duration (15s, 1m). */
function seconds(value: string): number {
  if (value.startsWith('P')) return parseIsoDuration(value) / 1000;
  const m = /^(\d+)(ms|s|m|h)$/.exec(value);
  assert.ok(m, `duration ${value}`);
  return Number(m[1]) * { ms: 0.001, s: 1, m: 60, h: 3600 }[m[2] as 'ms' | 's' | 'm' | 'h'];
}

/** Every delivery problem of the Triggers in a set of objects (empty when all is well). */
export function deliveryProblems(objects: Obj[]): string[] {
  const problems: string[] = [];
  const services = objects.filter(o => o.kind === 'Service' && o.apiVersion === 'serving.knative.dev/v1');
  for (const trigger of objects.filter(o => o.kind === 'Trigger')) {
    const where = `Trigger ${trigger.metadata.name}`;
    const delivery = trigger.spec.delivery as Obj | undefined;
    if (!delivery) {
      problems.push(`${where}: no delivery (the Broker's would apply)`);
      continue;
    }
    if (!(delivery.retry >= 1)) problems.push(`${where}: no retry`);
    if (delivery.backoffPolicy !== 'exponential') problems.push(`${where}: back-off is not exponential`);
    if (!delivery.backoffDelay || !(seconds(delivery.backoffDelay as string) > 0))
      problems.push(`${where}: no back-off delay`);
    const sink = delivery.deadLetterSink?.ref as Obj | undefined;
    if (!sink || !services.some(s => s.metadata.name === sink.name))
      problems.push(`${where}: no dead-letter sink Service`);
    const subscriber = trigger.spec.subscriber.ref as Obj;
    const service = services.find(s => s.metadata.name === subscriber.name);
    if (!service) {
      problems.push(`${where}: subscriber ${subscriber.name} is not here`);
      continue;
    }
    const limit =
      (service.spec.template.spec.timeoutSeconds as number | undefined) ?? KNATIVE_DEFAULT_TIMEOUT_S;
    if (limit > KNATIVE_MAX_TIMEOUT_S) problems.push(`${subscriber.name}: timeoutSeconds ${limit} > 600`);
    if (!delivery.timeout) problems.push(`${where}: no timeout`);
    else if (seconds(delivery.timeout as string) < limit + DELIVERY_HEADROOM_S)
      problems.push(
        `${where}: delivery timeout ${delivery.timeout} leaves less than ${DELIVERY_HEADROOM_S} s over ${subscriber.name}'s ${limit} s`,
      );
  }
  return problems;
}

/**
 * The shortest gap between two moments at which PingSources fire, over a week, in seconds: the
 * longest an idle system is left alone. Sources that fire together count once.
 */
export function shortestIdleGap(objects: Obj[]): number {
  const start = new Date('2026-01-05T00:00:00Z');
  const end = start.getTime() + 7 * 24 * 3600 * 1000;
  const found = new Set<number>();
  for (const ping of objects.filter(o => o.kind === 'PingSource')) {
    const cron = new Cron(ping.spec.schedule as string, { timezone: ping.spec.timezone ?? 'UTC' });
    for (let t = cron.nextRun(start); t && t.getTime() < end; t = cron.nextRun(t)) found.add(t.getTime());
  }
  const times = [...found].sort((a, b) => a - b);
  let gap = Number.POSITIVE_INFINITY;
  for (let i = 1; i < times.length; i++) gap = Math.min(gap, (times[i] - times[i - 1]) / 1000);
  return gap;
}

/** Checks of every build: deliveries, sources, idle gap, windows. */
function checkBuild(name: string, build: () => Obj[]) {
  describe(name, () => {
    const objects = build();

    it('every object is valid against its schema and has what the API server requires', () => {
      for (const o of objects) assert.deepEqual(schemaErrors(o), [], key(o));
      assert.deepEqual(applyProblems(objects), []);
    });

    it("every Trigger's delivery is complete and outlasts the function it delivers to", () => {
      assert.equal(objects.filter(o => o.kind === 'Trigger').length, 4);
      assert.deepEqual(deliveryProblems(objects), []);
    });

    it('the owned-object source watches only labelled objects, in every namespace', () => {
      for (const source of objects.filter(o => o.kind === 'ApiServerSource')) {
        assert.deepEqual(source.spec.namespaceSelector, {}, 'namespaceSelector is explicit');
        assert.equal(source.spec.mode, 'Reference');
      }
      const owned = find(objects, 'ApiServerSource', 'etcdfn-owned');
      for (const r of owned.spec.resources as Obj[]) assert.ok(r.selector, `${r.kind} has a selector`);
    });

    it('every function is probed for readiness with periodSeconds 0 (Knative then probes a cold start aggressively)', () => {
      const services = objects.filter(o => o.kind === 'Service' && o.apiVersion === 'serving.knative.dev/v1');
      assert.equal(services.length, 5);
      for (const s of services)
        assert.equal(s.spec.template.spec.containers[0].readinessProbe.periodSeconds, 0, s.metadata.name);
    });

    it("an idle system gets no event for longer than Knative's scale-to-zero window", () => {
      const windows = objects
        .filter(o => o.kind === 'Service' && o.apiVersion === 'serving.knative.dev/v1')
        .map(s => s.spec.template.metadata.annotations['autoscaling.knative.dev/window'] as string);
      assert.equal(windows.length, 5);
      for (const w of windows) assert.ok(seconds(w) >= 6 && seconds(w) <= 20, `window ${w} is short`);
      const gap = shortestIdleGap(objects);
      assert.ok(gap > STABLE_WINDOW_S + SCALE_TO_ZERO_GRACE_S, `idle gap ${gap} s`);
      assert.ok(gap > Math.max(...windows.map(seconds)) + SCALE_TO_ZERO_GRACE_S);
    });
  });
}

describe('knative/ kustomize base', () => {
  it('applies as it is (kubectl apply -k knative/): every object in etcdfn-system, which it creates', () => {
    const base = kustomize(KNATIVE_DIR);
    assert.deepEqual(applyProblems(base), []);
    assert.equal(find(base, 'Namespace', 'etcdfn-system').kind, 'Namespace');
    for (const o of base.filter(x => !x.kind.startsWith('Cluster') && x.kind !== 'Namespace'))
      assert.equal(o.metadata.namespace, 'etcdfn-system', key(o));
    for (const s of base.filter(o => o.kind === 'Service'))
      assert.equal(s.spec.template.spec.containers[0].image, 'ghcr.io/etcdfn/etcdfn');
  });

  it("an overlay moves everything, the Namespace and the bindings' subjects included, and pins the image", () => {
    const built = overlayBuild('ns-a', { digest: `sha256:${'a'.repeat(64)}` });
    assert.deepEqual(applyProblems(built), []);
    assert.deepEqual(
      built.filter(o => o.kind === 'Namespace').map(o => o.metadata.name),
      ['ns-a'],
    );
    for (const o of built.filter(x => !x.kind.startsWith('Cluster') && x.kind !== 'Namespace'))
      assert.equal(o.metadata.namespace, 'ns-a', key(o));
    for (const b of built.filter(o => o.kind === 'ClusterRoleBinding'))
      assert.equal(b.subjects[0].namespace, 'ns-a');
    for (const s of built.filter(o => o.kind === 'Service'))
      assert.equal(
        s.spec.template.spec.containers[0].image,
        `ghcr.io/etcdfn/etcdfn@sha256:${'a'.repeat(64)}`,
      );
  });

  it('the check itself: a binding subject without a namespace is caught', () => {
    const base = kustomize(KNATIVE_DIR);
    delete find(base, 'ClusterRoleBinding', 'etcdfn').subjects[0].namespace;
    assert.match(
      applyProblems(base).join('\n'),
      /ClusterRoleBinding\/etcdfn: ServiceAccount subject etcdfn has no namespace/,
    );
  });

  it('a release with ETCDFN_IMAGE_DIGEST / ETCD_IMAGE_DIGESTS references the images by digest; a malformed digest is refused', () => {
    const digest = `sha256:${'b'.repeat(64)}`;
    const saved = readFileSync(RELEASE_FILE);
    try {
      const made = spawnSync('bash', [join(ROOT, 'scripts', 'release-manifests.sh')], {
        encoding: 'utf8',
        env: { ...process.env, ETCDFN_IMAGE_DIGEST: digest, ETCD_IMAGE_DIGESTS: `3.5.16=${digest}` },
      });
      assert.equal(made.status, 0, made.stderr);
      const release = parseYaml(readFileSync(RELEASE_FILE, 'utf8'), RELEASE_FILE);
      for (const s of release.filter(o => o.kind === 'Service')) {
        const container = s.spec.template.spec.containers[0];
        assert.equal(container.image, `ghcr.io/etcdfn/etcdfn:${VERSION}@${digest}`);
        const env = (container.env as { name: string; value?: string }[]).find(
          e => e.name === 'ETCD_IMAGE_DIGESTS',
        );
        assert.equal(env?.value, `3.5.16=${digest}`, s.metadata.name);
      }
      const badEtcd = spawnSync('bash', [join(ROOT, 'scripts', 'release-manifests.sh')], {
        encoding: 'utf8',
        env: { ...process.env, ETCD_IMAGE_DIGESTS: '3.5.16=latest' },
      });
      assert.equal(badEtcd.status, 2);
      const refused = spawnSync('bash', [join(ROOT, 'scripts', 'release-manifests.sh')], {
        encoding: 'utf8',
        env: { ...process.env, ETCDFN_IMAGE_DIGEST: 'latest' },
      });
      assert.equal(refused.status, 2);
      assert.match(refused.stderr, /sha256:<64 hex digits>/);
    } finally {
      writeFileSync(RELEASE_FILE, saved);
    }
  });

  it('release/etcdfn-knative.yaml is up to date (fix: scripts/release-manifests.sh)', () => {
    const result = spawnSync('bash', [join(ROOT, 'scripts', 'release-manifests.sh'), '--check'], {
      encoding: 'utf8',
    });
    assert.equal(result.status, 0, result.stderr);
  });

  it('the release is the CRDs, then the base in etcdfn-system with the image of this version', () => {
    const release = parseYaml(readFileSync(RELEASE_FILE, 'utf8'), RELEASE_FILE);
    assert.deepEqual(
      release.slice(0, 4).map(o => o.kind),
      Array(4).fill('CustomResourceDefinition'),
    );
    const namespace = find(release, 'Namespace', 'etcdfn-system');
    // Pod Security's restricted profile, enforced where the operator runs.
    for (const mode of ['enforce', 'warn', 'audit'])
      assert.equal(namespace.metadata.labels[`pod-security.kubernetes.io/${mode}`], 'restricted', mode);
    for (const s of release.filter(o => o.kind === 'Service'))
      assert.equal(s.spec.template.spec.containers[0].image, `ghcr.io/etcdfn/etcdfn:${VERSION}`);
  });
});

checkBuild('release/etcdfn-knative.yaml', () => parseYaml(readFileSync(RELEASE_FILE, 'utf8'), RELEASE_FILE));
checkBuild('knative/ through an overlay', () => overlayBuild('etcdfn-system', { newTag: VERSION }));
for (const major of HELM_MAJORS) {
  checkBuild(`the chart in knative mode, Helm ${major}`, () => helmTemplate(major));
  checkBuild(`the chart with other timeouts, Helm ${major}`, () =>
    helmTemplate(major, {
      knative: {
        functions: { runSnapshot: { timeoutSeconds: 450 }, reconcileMember: { timeoutSeconds: 60 } },
      },
    }),
  );
}

describe('the chart renders what knative/ holds', () => {
  const chart = helmTemplate(4, {}, { namespace: 'etcd-operator' });
  const base = overlayBuild('etcd-operator', { newTag: VERSION });
  const withoutLabels = (o: Obj) => {
    const copy = structuredClone(o);
    delete copy.metadata.labels;
    return copy;
  };

  it('the same objects (the Namespace aside: helm install --create-namespace makes it)', () => {
    assert.deepEqual(
      chart.map(key).sort(),
      base
        .filter(o => o.kind !== 'Namespace')
        .map(key)
        .sort(),
    );
  });

  it('Broker, sources, Triggers and RBAC are identical, labels aside', () => {
    for (const want of base.filter(o => o.kind !== 'Service' && o.kind !== 'Namespace')) {
      assert.deepEqual(
        withoutLabels(find(chart, want.kind, want.metadata.name)),
        withoutLabels(want),
        key(want),
      );
    }
  });

  it('the Services agree on everything but labels and the values-driven environment', () => {
    for (const want of base.filter(o => o.kind === 'Service')) {
      const got = find(chart, 'Service', want.metadata.name);
      const strip = (s: Obj) => {
        const copy = withoutLabels(s);
        delete copy.spec.template.metadata.labels;
        copy.spec.template.spec.containers[0].env = (
          copy.spec.template.spec.containers[0].env as Obj[]
        ).filter(e => e.name === 'FUNCTION_TARGET' || e.name === 'HOST');
        return copy;
      };
      assert.deepEqual(strip(got), strip(want), key(want));
    }
  });
});

describe('the chart with oidc.enabled: knative/ plus the audiences and the env, nothing else', () => {
  const chart = helmTemplate(
    4,
    { oidc: { enabled: true, issuer: 'https://kubernetes.default.svc.cluster.local' } },
    { namespace: 'etcd-operator' },
  );
  const base = overlayBuild('etcd-operator', { newTag: VERSION });

  it('every Trigger is the base one plus its subscriber audience and dead-letter audience', () => {
    for (const want of base.filter(o => o.kind === 'Trigger')) {
      const got = structuredClone(find(chart, 'Trigger', want.metadata.name));
      assert.match(got.spec.subscriber.audience, /^etcdfn\.io\/etcd-operator\//);
      assert.equal(got.spec.delivery.deadLetterSink.audience, 'etcdfn.io/etcd-operator/dead-letter');
      delete got.spec.subscriber.audience;
      delete got.spec.delivery.deadLetterSink.audience;
      const plain = structuredClone(want);
      delete got.metadata.labels;
      delete plain.metadata.labels;
      assert.deepEqual(got, plain, key(want));
    }
  });

  it("every function's Service carries the audience its Trigger asks for", () => {
    const audiences = new Map<string, string>();
    for (const trigger of chart.filter(o => o.kind === 'Trigger')) {
      audiences.set(trigger.spec.subscriber.ref.name, trigger.spec.subscriber.audience);
      audiences.set('dead-letter', trigger.spec.delivery.deadLetterSink.audience);
    }
    for (const service of chart.filter(o => o.kind === 'Service')) {
      const env = Object.fromEntries(
        (service.spec.template.spec.containers[0].env as Obj[]).map(e => [e.name, e.value]),
      );
      assert.equal(env.ETCDFN_OIDC_AUDIENCE, audiences.get(service.metadata.name), service.metadata.name);
    }
    assert.equal(audiences.size, 5);
  });

  it('every object stays valid against its schema', () => {
    assert.deepEqual(chart.flatMap(schemaErrors), []);
  });
});

describe("snapshot schedules' own timing: the PingSource run-snapshot makes for each", () => {
  const routing = find(helmTemplate(4, { mode: 'standalone' }), 'ConfigMap', 'etcdfn-routing').data as Record<
    string,
    string
  >;
  const dir = mkdtempSync(join(ROOT, '.cache', 'routing-'));
  let triggers: ReturnType<typeof loadTriggers>;
  try {
    for (const [file, text] of Object.entries(routing)) writeFileSync(join(dir, file), text);
    triggers = loadTriggers(dir, { strict: true });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const tick = parseSources(parseYaml(routing['sources.yaml'], 'sources.yaml')).pingSources;
  const schedule = (name: string, cron: string, timeZone?: string) =>
    ({
      apiVersion: 'etcdfn.io/v1alpha1',
      kind: 'EtcdSnapshotSchedule',
      metadata: { name, namespace: 'team-a', uid: `uid-${name}` },
      spec: {
        clusterRef: { name: 'demo' },
        schedule: cron,
        ...(timeZone && { timeZone }),
        destination: {
          s3: { endpoint: 'https://s3.example', bucket: 'b', credentialsSecretRef: { name: 's' } },
        },
      },
    }) as Parameters<typeof desiredPingSource>[0];
  const made = [
    desiredPingSource(schedule('nightly', '0 3 * * *', 'Europe/Paris'), {
      uri: 'http://broker.example/etcdfn',
    })!,
    desiredPingSource(schedule('six-hourly', '@every 6h'), { uri: 'http://broker.example/etcdfn' })!,
  ];
  const routedTo = (ping: PingSourceSpec) =>
    triggers
      .filter(t => triggerMatches(t, attributesOf(pingEvent(ping))))
      .map(t => t.name)
      .sort();

  it("a schedule's PingSource wakes run-snapshot alone; the resync tick wakes the three that resync", () => {
    for (const ping of made)
      assert.deepEqual(routedTo(pingSpecOf(ping as unknown as WatchedObject)!), ['run-snapshot']);
    assert.deepEqual(routedTo(tick.find(p => p.name === 'etcdfn-tick')!), [
      'reconcile-cluster',
      'reconcile-member',
      'run-snapshot',
    ]);
  });

  it('the manifests hold only the tick: an idle system without schedules gets one event per tick period', () => {
    for (const objects of [
      helmTemplate(4, {}),
      helmTemplate(4, { mode: 'standalone' }),
      overlayBuild('etcdfn-system', { newTag: VERSION }),
    ]) {
      const pings = objects.filter(o => o.kind === 'PingSource');
      assert.deepEqual(
        pings.map(p => p.metadata.name),
        pings.length ? ['etcdfn-tick'] : [],
      );
    }
    assert.deepEqual(
      tick.map(p => p.name),
      ['etcdfn-tick'],
    );
  });

  it('with schedules, the reconcilers still idle for the whole tick period; run-snapshot wakes at the runs', () => {
    const objects = [...helmTemplate(4, {}), ...(made as unknown as Obj[])];
    const tickOnly = objects.filter(o => o.kind !== 'PingSource' || o.metadata.name === 'etcdfn-tick');
    assert.equal(shortestIdleGap(tickOnly), 600);
    // @every 6h fires at 00:00, 06:00, ... UTC, on a tick's minute; 03:00 in Paris too: no gap shrinks.
    assert.equal(shortestIdleGap(objects), 600);
    assert.ok(shortestIdleGap(objects) > STABLE_WINDOW_S + SCALE_TO_ZERO_GRACE_S);
  });
});

describe('the checks themselves', () => {
  const objects = overlayBuild('etcdfn-system', { newTag: VERSION });
  it("a Trigger whose timeout equals its function's is caught (no headroom)", () => {
    const equal = structuredClone(objects);
    find(equal, 'Trigger', 'reconcile-cluster').spec.delivery.timeout = 'PT300S';
    assert.match(
      deliveryProblems(equal).join('\n'),
      /reconcile-cluster: delivery timeout PT300S leaves less than 60 s/,
    );
  });

  it('a Trigger whose timeout is shorter than its function, or that sets only a timeout, is caught', () => {
    const short = structuredClone(objects);
    find(short, 'Trigger', 'run-snapshot').spec.delivery.timeout = 'PT120S';
    assert.match(
      deliveryProblems(short).join('\n'),
      /run-snapshot: delivery timeout PT120S leaves less than 60 s over run-snapshot's 600 s/,
    );
    const bare = structuredClone(objects);
    find(bare, 'Trigger', 'reconcile-member').spec.delivery = { timeout: 'PT300S' };
    assert.match(deliveryProblems(bare).join('\n'), /no retry/);
  });

  it('a tick every minute is caught as too frequent to scale to zero', () => {
    const busy = structuredClone(objects);
    find(busy, 'PingSource', 'etcdfn-tick').spec.schedule = '* * * * *';
    assert.equal(shortestIdleGap(busy), 60);
    assert.equal(shortestIdleGap(objects), 600);
  });
});

// kubectl itself is needed: say so plainly if it is missing.
execFileSync('kubectl', ['version', '--client'], { stdio: 'ignore' });
