// The installed image is the one every Pod etcdfn creates runs, digest included: each function gets
// it as ETCDFN_IMAGE from the chart (every value set, both Helm majors) and from knative/ (through an
// overlay's `images:`), and the Pods the product's builders make from those settings (a restoring
// seed's init containers, snapshot and delete Jobs) run it; etcd containers run the etcd repository.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, relative } from 'node:path';
import { settingsFromEnv } from '../../shared/runtime/context.ts';
import { createdPods, imagesOf } from '../support/created-pods.ts';
import { DIGEST, VALUE_SETS } from '../support/helm-values.ts';
import {
  CHART_DIR,
  containersOf,
  envOf,
  helm,
  helmTemplate,
  HELM_MAJORS,
  kustomize,
  parseYaml,
  ROOT,
  type Obj,
} from '../support/helm.ts';

/** What a function with these settings would make run something other than `installed` (or etcd). */
function createdImageProblems(where: string, env: Record<string, string>, installed: string): string[] {
  const problems: string[] = [];
  const settings = settingsFromEnv(env);
  // etcd itself: by digest when one was given for its release (created-pods runs 3.5.16).
  const digest = settings.etcdImageDigests?.['3.5.16'];
  const wantEtcd = `${settings.etcdImageRepository}:v3.5.16${digest ? `@${digest}` : ''}`;
  for (const pod of createdPods(settings))
    for (const { container, image } of imagesOf(pod.template)) {
      const etcd = image.startsWith(`${settings.etcdImageRepository}:v`);
      if (!etcd && image !== installed) problems.push(`${where}: ${pod.what} ${container} runs ${image}`);
      if (etcd && image !== wantEtcd)
        problems.push(`${where}: ${pod.what} ${container} runs ${image}, not ${wantEtcd}`);
    }
  return problems;
}

/** Problems with the image of every function container and of every Pod built from its settings. */
function imageProblems(objects: Obj[]): string[] {
  const problems: string[] = [];
  const workloads = objects.filter(o => o.kind === 'Deployment' || (o.kind === 'Service' && o.spec.template));
  for (const w of workloads) {
    for (const c of containersOf(w).filter(x => x.name !== 'bridge')) {
      const where = `${w.kind}/${w.metadata.name}/${c.name}`;
      const env = envOf(c);
      if (env.ETCDFN_IMAGE !== c.image)
        problems.push(`${where}: ETCDFN_IMAGE ${env.ETCDFN_IMAGE} is not ${c.image}`);
      problems.push(...createdImageProblems(where, env, c.image as string));
    }
  }
  if (workloads.length === 0) problems.push('no function workload rendered');
  return problems;
}

/** knative/ built through a throw-away overlay with these `images:` settings. */
function overlay(image: Obj): Obj[] {
  const dir = mkdtempSync(join(tmpdir(), 'etcdfn-kustomize-'));
  try {
    const resources = [relative(dir, join(ROOT, 'knative'))];
    const images = [{ name: 'ghcr.io/etcdfn/etcdfn', ...image }];
    writeFileSync(join(dir, 'kustomization.yaml'), JSON.stringify({ namespace: 'ops', resources, images }));
    return kustomize(dir);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

describe('the installed image runs every Pod etcdfn creates', () => {
  for (const major of HELM_MAJORS)
    for (const [name, values] of Object.entries(VALUE_SETS))
      it(`Helm ${major}, values: ${name}`, () => {
        assert.deepEqual(imageProblems(helmTemplate(major, values)), []);
      });

  it('the chart with a digest: the created Pods run repository:tag@digest', () => {
    const objects = helmTemplate(4, { image: { repository: 'r.example/e', tag: '9.9.9', digest: DIGEST } });
    const env = envOf(containersOf(objects.find(o => o.kind === 'Service')!)[0]);
    assert.equal(env.ETCDFN_IMAGE, `r.example/e:9.9.9@${DIGEST}`);
  });

  for (const [name, image] of Object.entries({
    'a tag': { newTag: '0.3.0' },
    'another registry and a digest': { newName: 'r.example/etcdfn', digest: DIGEST },
    'a tag and a digest': { newTag: '0.3.0', digest: DIGEST },
  }))
    it(`knative/ through an overlay with ${name}`, () => {
      const objects = overlay(image);
      assert.deepEqual(imageProblems(objects), []);
      const set = new Set(
        objects.filter(o => o.kind === 'Service').map(o => envOf(containersOf(o)[0]).ETCDFN_IMAGE),
      );
      assert.equal(set.size, 1);
      if ('digest' in image) assert.match([...set][0], new RegExp(`@${DIGEST}$`));
    });

  it('etcd.imageDigests pins the etcd releases it names, and only those', () => {
    const objects = helmTemplate(4, {
      etcd: {
        imageRepository: 'mirror.example/etcd',
        imageDigests: { '3.5.16': DIGEST, '3.6.5': `sha256:${'b'.repeat(64)}` },
      },
    });
    const env = envOf(containersOf(objects.find(o => o.kind === 'Service')!)[0]);
    const settings = settingsFromEnv(env);
    assert.deepEqual(settings.etcdImageDigests, { '3.5.16': DIGEST, '3.6.5': `sha256:${'b'.repeat(64)}` });
    const member = createdPods(settings).find(p => p.what === 'member Pod')!;
    assert.equal(
      imagesOf(member.template).find(i => i.container === 'etcd')?.image,
      `mirror.example/etcd:v3.5.16@${DIGEST}`,
    );
    assert.equal(
      createdPods({ ...settings, etcdImageDigests: { '3.6.5': DIGEST } }).find(p => p.what === 'member Pod')!
        .template.spec!.containers[0].image,
      'mirror.example/etcd:v3.5.16',
    );
    assert.deepEqual(imageProblems(objects), []);
    for (const bad of [{ '3.5': DIGEST }, { '3.5.16': 'latest' }]) {
      const result = helm(4, ['template', 'etcdfn', CHART_DIR], {
        etcd: { imageRepository: 'r', imageDigests: bad },
      });
      assert.notEqual(result.status, 0, JSON.stringify(bad));
    }
    assert.throws(() => settingsFromEnv({ ETCD_IMAGE_DIGESTS: '3.5.16=latest' }), /ETCD_IMAGE_DIGESTS/);
  });

  it('release/etcdfn-knative.yaml', () => {
    const file = join(ROOT, 'release', 'etcdfn-knative.yaml');
    assert.deepEqual(imageProblems(parseYaml(readFileSync(file, 'utf8'), file)), []);
  });

  it('the check itself: a function without ETCDFN_IMAGE is caught', () => {
    const objects = helmTemplate(4, { image: { tag: '9.9.9' } });
    const c = containersOf(objects.find(o => o.kind === 'Service')!)[0];
    c.env = (c.env as Obj[]).filter(e => e.name !== 'ETCDFN_IMAGE');
    assert.match(
      imageProblems(objects).join('\n'),
      /ETCDFN_IMAGE undefined[^]*restoring seed Pod restore-fetch runs ghcr.io\/etcdfn\/etcdfn:0.1.0/,
    );
  });
});
