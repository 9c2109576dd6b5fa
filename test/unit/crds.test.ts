// The CRDs in crds/ as a whole: names agree with shared/api/group.ts, subresources and printer
// columns point at real fields, schema defaults agree with shared/api/defaults.ts, copies of shared
// shapes stay identical, and realistic manifests pass the OpenAPI schema (with ajv) and CEL.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readdirSync } from 'node:fs';
import { Ajv } from 'ajv';
import { parse } from 'yaml';
import { GROUP, RESOURCES, VERSION } from '../../shared/api/group.ts';
import {
  DEFAULT_ISSUER_KIND,
  DEFAULT_PROGRESS_DEADLINE_SECONDS,
  DEFAULT_REPLICAS,
  DEFAULT_SCHEDULE_SUSPEND,
  DEFAULT_SNAPSHOT_KEEP_LAST,
  DEFAULT_STORAGE_MEDIUM,
  DEFAULT_STORAGE_SIZE,
  NEW_CLUSTER_ETCD_MINORS,
  DEFAULT_ETCD_VERSION,
} from '../../shared/api/defaults.ts';
import type { EtcdCluster } from '../../shared/api/types.ts';
import { compileRule } from '../support/crd-validation/cel.ts';
import type { Crd } from '../support/crd-validation/crd-rules.ts';
import { CRDS_DIR, crdSchema, loadCrds, validateObject } from '../support/crd-validation/crd-rules.ts';
import type { OpenApiSchema } from '../support/crd-validation/schema.ts';

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

  it('spec.version defaults to DEFAULT_ETCD_VERSION', () => {
    assert.equal(nodeAt(cluster, '.spec.version')?.default, DEFAULT_ETCD_VERSION);
    assert.ok(!(nodeAt(cluster, '.spec')?.required ?? []).includes('version'));
  });

  it("a new cluster's spec.version accepts exactly the NEW_CLUSTER_ETCD_MINORS", () => {
    const rules = (nodeAt(cluster, '.spec.version')?.['x-kubernetes-validations'] ?? []).filter(
      r => !r.rule.includes('oldSelf'),
    );
    const checks = rules.map(r => compileRule(r.rule));
    for (let minor = 0; minor <= 9; minor++) {
      const supported = (NEW_CLUSTER_ETCD_MINORS as readonly string[]).includes(`3.${minor}`);
      assert.equal(
        checks.every(check => check(`3.${minor}.7`).ok),
        supported,
        `3.${minor}.7`,
      );
    }
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

// ajv stands in for the API server's OpenAPI validation and defaulting. The schema is closed
// (unknown fields rejected) so a manifest field that the CRD lacks is caught, as kubectl's
// default strict field validation would.
function schemaValidator(kind: string) {
  const ajv = new Ajv({ useDefaults: true, allErrors: true, strictTypes: false });
  ajv.addVocabulary([
    'x-kubernetes-validations',
    'x-kubernetes-int-or-string',
    'x-kubernetes-preserve-unknown-fields',
    'x-kubernetes-list-type',
    'x-kubernetes-list-map-keys',
    'x-kubernetes-map-type',
  ]);
  ajv.addFormat('int32', { type: 'number', validate: n => Number.isInteger(n) && Math.abs(n) <= 2 ** 31 });
  ajv.addFormat('int64', { type: 'number', validate: n => Number.isInteger(n) });
  ajv.addFormat('date-time', /^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$/);
  const validate = ajv.compile(closed(schemaOf(kind)));
  return (object: unknown): string[] =>
    validate(object) ? [] : (validate.errors ?? []).map(e => `${e.instancePath} ${e.message ?? ''}`);
}

function closed(schema: OpenApiSchema): OpenApiSchema {
  const copy: OpenApiSchema = { ...schema };
  if (schema.properties) {
    copy.properties = Object.fromEntries(Object.entries(schema.properties).map(([k, v]) => [k, closed(v)]));
    if (schema.additionalProperties === undefined && !schema['x-kubernetes-preserve-unknown-fields']) {
      copy.additionalProperties = false;
    }
  }
  if (schema.items) copy.items = closed(schema.items);
  return copy;
}

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
  version: 3.7.3
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
    .map(doc => parse(doc) as Record<string, unknown>)
    .filter(Boolean);

describe('realistic manifests pass the schema and every CEL rule', () => {
  it('cozystack-style EtcdClusters validate, default and update cleanly', () => {
    const validate = schemaValidator('EtcdCluster');
    const crd = crdOf('EtcdCluster');
    for (const full of docs(COZYSTACK_CLUSTERS)) {
      assert.deepEqual(validate(full), [], JSON.stringify(full));
      // Every TLS source and auth work end to end: the full manifest passes every rule as it is.
      const manifest = full;
      assert.deepEqual(validateObject(crd, VERSION, manifest), []);
      const scaled = { ...structuredClone(manifest), spec: { ...(manifest.spec as object), replicas: 5 } };
      assert.deepEqual(validateObject(crd, VERSION, scaled, manifest), []);
    }
  });

  it('fills in the schema defaults', () => {
    const [first, second] = docs(COZYSTACK_CLUSTERS) as unknown as EtcdCluster[];
    const validate = schemaValidator('EtcdCluster');
    validate(first);
    validate(second);
    assert.equal(first.spec.storage?.medium, DEFAULT_STORAGE_MEDIUM);
    assert.equal(first.spec.tls?.client?.certManager?.serverIssuerRef.kind, DEFAULT_ISSUER_KIND);
    assert.equal(second.spec.replicas, DEFAULT_REPLICAS);
    assert.equal(second.spec.progressDeadlineSeconds, DEFAULT_PROGRESS_DEADLINE_SECONDS);
    const minimal = {
      apiVersion: 'etcdfn.io/v1alpha1',
      kind: 'EtcdCluster',
      metadata: {},
      spec: { version: '3.5.16' },
    };
    assert.deepEqual(validate(minimal), []);
    assert.deepEqual(minimal.spec, {
      version: '3.5.16',
      replicas: DEFAULT_REPLICAS,
      storage: { size: DEFAULT_STORAGE_SIZE, medium: DEFAULT_STORAGE_MEDIUM },
      progressDeadlineSeconds: DEFAULT_PROGRESS_DEADLINE_SECONDS,
    });
  });

  it('a PVC snapshot destination passes the schema and every rule (deletionPolicy defaults to Retain)', () => {
    const [manifest] = docs(COZYSTACK_SNAPSHOT);
    assert.deepEqual(schemaValidator('EtcdSnapshot')(manifest), []);
    assert.deepEqual(validateObject(crdOf('EtcdSnapshot'), VERSION, manifest), []);
    assert.equal((manifest.spec as { deletionPolicy?: string }).deletionPolicy, 'Retain');
  });

  it('snapshots and schedules validate', () => {
    for (const [kind, text] of [['EtcdSnapshotSchedule', SCHEDULE]] as const) {
      const [manifest] = docs(text);
      assert.deepEqual(schemaValidator(kind)(manifest), [], kind);
      assert.deepEqual(validateObject(crdOf(kind), VERSION, manifest), [], kind);
    }
  });

  it('the closed schema catches typos and bad enum values', () => {
    const validate = schemaValidator('EtcdCluster');
    const errors = validate({
      apiVersion: 'etcdfn.io/v1alpha1',
      kind: 'EtcdCluster',
      metadata: {},
      spec: { version: '3.5.16', storage: { sise: '1Gi', medium: 'Disk' }, replicas: -1 },
    });
    assert.ok(
      errors.some(e => e.includes('/spec/storage') && e.includes('additional properties')),
      errors.join('; '),
    );
    assert.ok(
      errors.some(e => e.startsWith('/spec/storage/medium')),
      errors.join('; '),
    );
    assert.ok(
      errors.some(e => e.startsWith('/spec/replicas')),
      errors.join('; '),
    );
  });
});
