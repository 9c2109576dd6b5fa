// Function Pods as knative/ and the chart (both modes) declare them: a numeric non-root user, a
// read-only root filesystem, no capabilities, no privilege escalation, seccomp RuntimeDefault and a
// memory limit, for every container.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import { parseAllDocuments } from 'yaml';
import { helmTemplate } from '../support/helm.ts';

const ROOT = join(import.meta.dirname, '..', '..');
// eslint-disable-next-line @typescript-eslint/no-explicit-any
type Obj = Record<string, any>;

function containersOf(objects: Obj[]): { where: string; container: Obj }[] {
  return objects.flatMap(o => {
    const spec =
      o.kind === 'Deployment'
        ? o.spec.template.spec
        : o.kind === 'Service'
          ? o.spec.template?.spec
          : undefined;
    if (!spec) return [];
    return (spec.containers as Obj[]).map(c => ({
      where: `${o.kind}/${o.metadata.name}/${c.name ?? ''}`,
      container: c,
    }));
  });
}

function assertLockedDown(where: string, c: Obj): void {
  const sc = c.securityContext ?? {};
  assert.equal(sc.runAsNonRoot, true, where);
  assert.ok(Number.isInteger(sc.runAsUser) && sc.runAsUser > 0, `${where}: numeric runAsUser`);
  assert.ok(Number.isInteger(sc.runAsGroup) && sc.runAsGroup > 0, `${where}: numeric runAsGroup`);
  assert.equal(sc.readOnlyRootFilesystem, true, where);
  assert.equal(sc.allowPrivilegeEscalation, false, where);
  assert.deepEqual(sc.capabilities, { drop: ['ALL'] }, where);
  assert.equal(sc.seccompProfile?.type, 'RuntimeDefault', where);
  assert.ok(c.resources?.limits?.memory, `${where}: memory limit`);
  assert.ok(c.resources?.requests?.cpu && c.resources?.requests?.memory, `${where}: requests`);
}

describe('function Pods are locked down', () => {
  it('in knative/services.yaml', () => {
    const objects = parseAllDocuments(readFileSync(join(ROOT, 'knative', 'services.yaml'), 'utf8')).map(
      d => d.toJS() as Obj,
    );
    const found = containersOf(objects);
    assert.equal(found.length, 5);
    for (const { where, container } of found) assertLockedDown(where, container);
  });

  for (const mode of ['knative', 'standalone']) {
    it(`in the chart, ${mode} mode`, () => {
      const objects = helmTemplate(4, { mode }, { release: 'etcdfn', namespace: 'ops' });
      const found = containersOf(objects);
      assert.equal(found.length, 5);
      for (const { where, container } of found) assertLockedDown(where, container);
    });
  }
});
