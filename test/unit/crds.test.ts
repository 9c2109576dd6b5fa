// The CRDs in crds/ as files: names agree with shared/api/group.ts, subresources and printer
// columns point at real fields, schema defaults agree with shared/api/defaults.ts, and copies of
// shared shapes stay identical. What the API server accepts (realistic manifests, the supported
// versions, every rule) is asked of the real one in test/integration/crd-rules.test.ts.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { GROUP, RESOURCES, VERSION } from '../../shared/api/group.ts';
import {
  DEFAULT_ISSUER_KIND,
  DEFAULT_PROGRESS_DEADLINE_SECONDS,
  DEFAULT_REPLICAS,
  DEFAULT_SCHEDULE_SUSPEND,
  DEFAULT_SNAPSHOT_KEEP_LAST,
  DEFAULT_STORAGE_MEDIUM,
  DEFAULT_STORAGE_SIZE,
} from '../../shared/api/defaults.ts';
import { CRDS_DIR, crdSchema, loadCrds, type Crd, type OpenApiSchema } from '../support/crds.ts';

const crds = loadCrds();
const crdOf = (kind: string): Crd => {
  const crd = crds.find(c => c.spec.names.kind === kind);
  assert.ok(crd, `no CRD for ${kind}`);
  return crd;
};
const schemaOf = (kind: string) => crdSchema(crdOf(kind), VERSION);

/** The schema node at a JSONPath-ish path: `.spec.storage.size`, `.status.conditions[?(...)].status`. */
function nodeAt(schema: OpenApiSchema, path: string): OpenApiSchema | undefined {
  let node: OpenApiSchema | undefined = schema;
  for (const part of path
    .replace(/\[[^\]]*\]/g, '.[]')
    .split('.')
    .filter(Boolean)) {
    if (part === '[]') node = node?.items;
    else node = node?.properties?.[part];
  }
  return node;
}

function strip(schema: unknown, keys: string[]): unknown {
  if (Array.isArray(schema)) return schema.map(s => strip(s, keys));
  if (schema === null || typeof schema !== 'object') return schema;
  return Object.fromEntries(
    Object.entries(schema)
      .filter(([k]) => !keys.includes(k))
      .map(([k, v]) => [
        k,
        k === 'properties' || k === 'default' || k === 'enum' ? stripEach(v, keys) : strip(v, keys),
      ]),
  );
}
function stripEach(value: unknown, keys: string[]): unknown {
  if (value === null || typeof value !== 'object' || Array.isArray(value)) return value;
  return Object.fromEntries(Object.entries(value).map(([k, v]) => [k, strip(v, keys)]));
}
const withoutDocs = (schema: unknown) => strip(schema, ['description']);

describe('CRD names', () => {
  it('has one file per resource of shared/api/group.ts, named <group>_<plural>.yaml', () => {
    assert.deepEqual(readdirSync(CRDS_DIR).sort(), RESOURCES.map(r => `${GROUP}_${r.plural}.yaml`).sort());
  });

  for (const resource of RESOURCES) {
    it(`${resource.kind} agrees with group.ts`, () => {
      const crd = crdOf(resource.kind);
      assert.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
      assert.equal(crd.metadata.name, `${resource.plural}.${GROUP}`);
      assert.equal(crd.spec.group, GROUP);
      assert.equal(crd.spec.scope, 'Namespaced');
      assert.deepEqual(crd.spec.names, {
        kind: resource.kind,
        listKind: `${resource.kind}List`,
        plural: resource.plural,
        singular: resource.singular,
        shortNames: resource.shortNames,
        categories: ['etcdfn'],
      });
      assert.deepEqual(
        crd.spec.versions.map(v => [v.name, v.served, v.storage]),
        [[VERSION, true, true]],
      );
    });
  }
});

describe('CRD structure', () => {
  function structuralProblems(schema: OpenApiSchema, path: string, out: string[]): string[] {
    const intOrString = schema['x-kubernetes-int-or-string'] === true;
    if (intOrString && schema.type) out.push(`${path}: int-or-string must not have a type`);
    if (!intOrString && !schema.type) out.push(`${path}: no type`);
    if (schema.properties && schema.type !== 'object') out.push(`${path}: properties on a non-object`);
    if (schema.type === 'array' && !schema.items) out.push(`${path}: array without items`);
    for (const key of schema['x-kubernetes-list-map-keys'] ?? []) {
      if (!schema.items?.required?.includes(key)) out.push(`${path}: list map key ${key} is not required`);
    }
    for (const key of schema.required ?? []) {
      if (!schema.properties?.[key]) out.push(`${path}: required ${key} is not a property`);
    }
    for (const [key, child] of Object.entries(schema.properties ?? {}))
      structuralProblems(child, `${path}.${key}`, out);
    if (schema.items) structuralProblems(schema.items, `${path}[*]`, out);
    if (typeof schema.additionalProperties === 'object')
      structuralProblems(schema.additionalProperties, `${path}{*}`, out);
    return out;
  }

  for (const crd of crds) {
    const kind = crd.spec.names.kind;
    it(`${kind} has a structural schema with descriptions on spec and status`, () => {
      const schema = schemaOf(kind);
      assert.deepEqual(structuralProblems(schema, '', []), []);
      assert.ok(schema.description);
      for (const part of ['spec', 'status']) {
        const node = schema.properties?.[part];
        assert.ok(node?.description, `${kind}.${part} needs a description`);
        for (const [key, child] of Object.entries(part === 'spec' ? (node.properties ?? {}) : {})) {
          assert.ok(child.description, `${kind}.spec.${key} needs a description for kubectl explain`);
        }
      }
    });

    it(`${kind} has a status subresource and printer columns over real fields`, () => {
      const version = crd.spec.versions[0];
      assert.deepEqual(version.subresources?.status, {});
      const columns = version.additionalPrinterColumns ?? [];
      assert.ok(columns.some(c => c.name === 'Age' && c.jsonPath === '.metadata.creationTimestamp'));
      for (const column of columns) {
        if (column.jsonPath.startsWith('.metadata.')) continue;
        assert.ok(
          nodeAt(schemaOf(kind), column.jsonPath),
          `${kind} column ${column.name}: ${column.jsonPath}`,
        );
      }
    });
  }

  it('shows the columns asked for, in order', () => {
    const shown = (kind: string) =>
      (crdOf(kind).spec.versions[0].additionalPrinterColumns ?? []).filter(c => !c.priority).map(c => c.name);
    assert.deepEqual(shown('EtcdCluster'), ['Ready', 'Version', 'Phase', 'Available', 'Age']);
    assert.deepEqual(shown('EtcdMember'), ['Cluster', 'Role', 'Ready', 'Version', 'Age']);
    assert.deepEqual(shown('EtcdSnapshot'), ['Cluster', 'Phase', 'Verified', 'Size', 'Age']);
    assert.deepEqual(shown('EtcdSnapshotSchedule'), ['Cluster', 'Schedule', 'Suspend', 'Last', 'Age']);
  });

  it('gives EtcdCluster a scale subresource over replicas, readyMembers and selector', () => {
    const scale = crdOf('EtcdCluster').spec.versions[0].subresources?.scale;
    assert.deepEqual(scale, {
      specReplicasPath: '.spec.replicas',
      statusReplicasPath: '.status.readyMembers',
      labelSelectorPath: '.status.selector',
    });
    const schema = schemaOf('EtcdCluster');
    assert.equal(nodeAt(schema, scale.specReplicasPath)?.type, 'integer');
    assert.equal(nodeAt(schema, scale.statusReplicasPath)?.type, 'integer');
    assert.equal(nodeAt(schema, scale.labelSelectorPath)?.type, 'string');
  });
});

describe('schema defaults and limits agree with shared/api/defaults.ts', () => {
  const cluster = schemaOf('EtcdCluster');
  const at = (kind: string, path: string) => nodeAt(schemaOf(kind), path);

  it('EtcdCluster defaults', () => {
    assert.equal(nodeAt(cluster, '.spec.replicas')?.default, DEFAULT_REPLICAS);
    assert.equal(
      nodeAt(cluster, '.spec.progressDeadlineSeconds')?.default,
      DEFAULT_PROGRESS_DEADLINE_SECONDS,
    );
    for (const kind of ['EtcdCluster', 'EtcdMember']) {
      assert.deepEqual(at(kind, '.spec.storage')?.default, {
        size: DEFAULT_STORAGE_SIZE,
        medium: DEFAULT_STORAGE_MEDIUM,
      });
      assert.equal(at(kind, '.spec.storage.size')?.default, DEFAULT_STORAGE_SIZE);
      assert.equal(at(kind, '.spec.storage.medium')?.default, DEFAULT_STORAGE_MEDIUM);
    }
    for (const path of [
      '.spec.tls.client.certManager.serverIssuerRef.kind',
      '.spec.tls.client.certManager.operatorClientIssuerRef.kind',
      '.spec.tls.peer.certManager.issuerRef.kind',
    ]) {
      assert.equal(nodeAt(cluster, path)?.default, DEFAULT_ISSUER_KIND, path);
    }
  });

  it('EtcdSnapshotSchedule defaults', () => {
    assert.equal(at('EtcdSnapshotSchedule', '.spec.suspend')?.default, DEFAULT_SCHEDULE_SUSPEND);
    assert.deepEqual(at('EtcdSnapshotSchedule', '.spec.retention')?.default, {
      keepLast: DEFAULT_SNAPSHOT_KEEP_LAST,
    });
    assert.equal(at('EtcdSnapshotSchedule', '.spec.retention.keepLast')?.default, DEFAULT_SNAPSHOT_KEEP_LAST);
  });
});

describe('copies of shared shapes stay identical', () => {
  const location = (kind: string, path: string) => withoutDocs(nodeAt(schemaOf(kind), path));

  it('SnapshotLocation: restore sources and snapshot destinations', () => {
    const reference = location('EtcdSnapshot', '.spec.destination');
    assert.deepEqual(location('EtcdSnapshotSchedule', '.spec.destination'), reference);
    // Restore sources add sha256 (and, on the cluster, snapshotRef, which the operator resolves
    // before a member exists); s3 and pvc are the destinations' own.
    const cluster = location('EtcdCluster', '.spec.bootstrap.restore.source') as OpenApiSchema;
    const member = location('EtcdMember', '.spec.restore.source') as OpenApiSchema;
    for (const source of [cluster, member]) {
      assert.deepEqual(source.properties?.s3, (reference as OpenApiSchema).properties?.s3);
      assert.deepEqual(source.properties?.pvc, (reference as OpenApiSchema).properties?.pvc);
    }
    assert.deepEqual(member.properties?.sha256, cluster.properties?.sha256);
    assert.deepEqual(Object.keys(member.properties ?? {}).sort(), ['pvc', 's3', 'sha256']);
    assert.deepEqual(Object.keys(cluster.properties ?? {}).sort(), ['pvc', 's3', 'sha256', 'snapshotRef']);
    assert.deepEqual(
      member['x-kubernetes-validations'],
      (reference as OpenApiSchema)['x-kubernetes-validations'],
    );
    const memberRestore = location('EtcdMember', '.spec.restore') as OpenApiSchema;
    const clusterRestore = location('EtcdCluster', '.spec.bootstrap.restore') as OpenApiSchema;
    assert.deepEqual(memberRestore['x-kubernetes-validations'], clusterRestore['x-kubernetes-validations']);
    assert.deepEqual(memberRestore.required, clusterRestore.required);
  });

  it('storage, resources and options of EtcdCluster and EtcdMember', () => {
    for (const path of ['.spec.storage', '.spec.resources']) {
      assert.deepEqual(location('EtcdMember', path), location('EtcdCluster', path), path);
    }
    // The member's options skip the cluster's cross-field rules: the cluster already enforced them.
    assert.deepEqual(
      location('EtcdMember', '.spec.options'),
      strip(location('EtcdCluster', '.spec.options'), ['x-kubernetes-validations']),
    );
  });

  it('conditions are metav1.Condition everywhere', () => {
    const reference = withoutDocs(nodeAt(schemaOf('EtcdCluster'), '.status.conditions'));
    for (const kind of ['EtcdMember', 'EtcdSnapshot', 'EtcdSnapshotSchedule']) {
      assert.deepEqual(withoutDocs(nodeAt(schemaOf(kind), '.status.conditions')), reference, kind);
    }
  });
});
