// Every Kubernetes API call the operator's code makes, found statically with the TypeScript compiler:
// each call of a KubeObjects method (the only way shared/ and functions/ reach the API server) is
// resolved to the kinds it can touch, from its type arguments, the types of its arguments and the
// kind names in them (one hop into a variable's initialiser or a helper's body). A call that cannot
// be resolved is reported, so a new call site cannot slip past the RBAC test unseen.
import { readdirSync, statSync } from 'node:fs';
import { join, relative, resolve } from 'node:path';
import ts from 'typescript';

const repoRoot = resolve(import.meta.dirname, '..', '..');

/** Kind → API group and resource, for every kind the code may name. */
const PASS_THROUGH = ['shared/k8s/objects.ts', 'shared/k8s/secret-cache.ts'];

export const KINDS: Record<string, { group: string; resource: string }> = {
  EtcdCluster: { group: 'etcdfn.io', resource: 'etcdclusters' },
  EtcdMember: { group: 'etcdfn.io', resource: 'etcdmembers' },
  EtcdSnapshot: { group: 'etcdfn.io', resource: 'etcdsnapshots' },
  EtcdSnapshotSchedule: { group: 'etcdfn.io', resource: 'etcdsnapshotschedules' },
  Pod: { group: '', resource: 'pods' },
  PersistentVolumeClaim: { group: '', resource: 'persistentvolumeclaims' },
  PersistentVolume: { group: '', resource: 'persistentvolumes' },
  Node: { group: '', resource: 'nodes' },
  Service: { group: '', resource: 'services' },
  Secret: { group: '', resource: 'secrets' },
  ConfigMap: { group: '', resource: 'configmaps' },
  Event: { group: '', resource: 'events' },
  PodDisruptionBudget: { group: 'policy', resource: 'poddisruptionbudgets' },
  NetworkPolicy: { group: 'networking.k8s.io', resource: 'networkpolicies' },
  Job: { group: 'batch', resource: 'jobs' },
  PingSource: { group: 'sources.knative.dev', resource: 'pingsources' },
  Broker: { group: 'eventing.knative.dev', resource: 'brokers' },
  Certificate: { group: 'cert-manager.io', resource: 'certificates' },
};

/** Type names (client-node's and ours) → kind. */
const TYPE_KINDS: Record<string, string> = {
  EtcdCluster: 'EtcdCluster',
  EtcdMember: 'EtcdMember',
  EtcdSnapshot: 'EtcdSnapshot',
  EtcdSnapshotSchedule: 'EtcdSnapshotSchedule',
  V1Pod: 'Pod',
  V1PersistentVolumeClaim: 'PersistentVolumeClaim',
  V1PersistentVolume: 'PersistentVolume',
  V1Node: 'Node',
  V1Service: 'Service',
  V1Secret: 'Secret',
  V1ConfigMap: 'ConfigMap',
  CoreV1Event: 'Event',
  V1PodDisruptionBudget: 'PodDisruptionBudget',
  V1NetworkPolicy: 'NetworkPolicy',
  V1Job: 'Job',
  PingSource: 'PingSource',
  Broker: 'Broker',
  CertManagerCertificate: 'Certificate',
};

/** Kind names as they appear in source text: quoted literals and our API constants. */
const TEXT_KINDS: [RegExp, string][] = [
  ...Object.keys(KINDS).map(kind => [new RegExp(`['"\`]${kind}['"\`]`), kind] as [RegExp, string]),
  [/\bETCD_CLUSTER\b/, 'EtcdCluster'],
  [/\bETCD_MEMBER\b/, 'EtcdMember'],
  [/\bETCD_SNAPSHOT\b/, 'EtcdSnapshot'],
  [/\bETCD_SNAPSHOT_SCHEDULE\b/, 'EtcdSnapshotSchedule'],
  [/\bPING_SOURCE_KIND\b/, 'PingSource'],
];

/** KubeObjects method → verb and whether it goes to the status subresource. */
const METHODS: Record<string, { verb: string; status?: boolean }> = {
  get: { verb: 'get' },
  find: { verb: 'get' },
  list: { verb: 'list' },
  create: { verb: 'create' },
  replace: { verb: 'update' },
  replaceStatus: { verb: 'update', status: true },
  mergePatch: { verb: 'patch' },
  mergePatchStatus: { verb: 'patch', status: true },
  delete: { verb: 'delete' },
};

export interface ApiCall {
  /** file:line of the call */
  at: string;
  method: string;
  group: string;
  /** resource, or resource/status */
  resource: string;
  verb: string;
}

export interface ScanResult {
  calls: ApiCall[];
  /** Calls whose kind could not be found (file:line and the call's text). */
  unresolved: string[];
  /** Kinds named as a controller owner with blockOwnerDeletion (need update on <resource>/finalizers). */
  owners: string[];
}

function tsFiles(dir: string): string[] {
  return readdirSync(dir).flatMap(name => {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) return tsFiles(path);
    return path.endsWith('.ts') ? [path] : [];
  });
}

/** Scans shared/ and functions/ (what runs as the operator's service account). */
export function scanApiCalls(dirs = ['shared', 'functions']): ScanResult {
  const files = dirs.flatMap(d => tsFiles(join(repoRoot, d)));
  const config = ts.readConfigFile(join(repoRoot, 'tsconfig.json'), path => ts.sys.readFile(path));
  const options = ts.parseJsonConfigFileContent(config.config, ts.sys, repoRoot).options;
  const program = ts.createProgram(files, options);
  const checker = program.getTypeChecker();
  const result: ScanResult = { calls: [], unresolved: [], owners: [] };
  const owners = new Set<string>();

  const kindsOfType = (type: ts.Type, depth = 0): Set<string> => {
    const found = new Set<string>();
    if (depth > 3) return found;
    const parts = type.isUnionOrIntersection() ? type.types : [type];
    for (const part of parts) {
      const names = [part.aliasSymbol?.getName(), part.getSymbol()?.getName()];
      for (const name of names) if (name && TYPE_KINDS[name]) found.add(TYPE_KINDS[name]);
      if (part !== type && part.isUnionOrIntersection())
        for (const k of kindsOfType(part, depth + 1)) found.add(k);
    }
    return found;
  };
  const kindsOfText = (text: string): Set<string> =>
    new Set(TEXT_KINDS.filter(([re]) => re.test(text)).map(([, kind]) => kind));

  /**
   * Kinds named by an expression: its type, its text, and what the identifiers in it refer to (a
   * variable's initialiser, a helper function's body), two hops deep. A property access counts by its
   * own type only (`cluster.metadata.namespace` is a string, not a cluster).
   */
  const kindsOfExpression = (expr: ts.Expression, depth = 0): Set<string> => {
    let inner: ts.Expression = expr;
    while (ts.isAsExpression(inner) || ts.isParenthesizedExpression(inner)) inner = inner.expression;
    const typed = kindsOfType(checker.getTypeAtLocation(inner));
    if (typed.size > 0) return typed; // a typed object names its own kind
    const found = kindsOfText(inner.getText());
    const add = (kinds: Iterable<string>) => {
      for (const k of kinds) found.add(k);
    };
    const visit = (node: ts.Node): void => {
      if (ts.isPropertyAccessExpression(node)) {
        add(kindsOfType(checker.getTypeAtLocation(node)));
        return;
      }
      if (ts.isIdentifier(node)) {
        const typed = kindsOfType(checker.getTypeAtLocation(node));
        add(typed);
        const decl = checker.getSymbolAtLocation(node)?.valueDeclaration;
        if (typed.size === 0 && depth < 2 && decl && ts.isVariableDeclaration(decl) && decl.initializer)
          add(kindsOfExpression(decl.initializer, depth + 1));
        if (decl && ts.isFunctionDeclaration(decl) && decl.body) add(kindsOfText(decl.body.getText()));
      }
      ts.forEachChild(node, visit);
    };
    if (ts.isPropertyAccessExpression(inner)) ts.forEachChild(inner, visit);
    else visit(inner);
    return found;
  };

  for (const source of program.getSourceFiles()) {
    const file = relative(repoRoot, source.fileName);
    // The adapter itself, and the per-reconcile Secret cache that only passes its callers' calls on
    // (each caller's own call is what is resolved and checked).
    if (!files.includes(source.fileName) || PASS_THROUGH.includes(file)) continue;
    const record = (node: ts.CallExpression, method: string): void => {
      const line = source.getLineAndCharacterOfPosition(node.getStart()).line + 1;
      // An explicit type argument names the object's type; otherwise the arguments do.
      const kinds = new Set<string>();
      for (const arg of node.typeArguments ?? [])
        for (const k of kindsOfType(checker.getTypeFromTypeNode(arg))) kinds.add(k);
      if (kinds.size === 0)
        for (const arg of node.arguments) for (const k of kindsOfExpression(arg)) kinds.add(k);
      if (kinds.size === 0) result.unresolved.push(`${file}:${line}: ${node.getText()}`);
      const { verb, status } = METHODS[method];
      for (const kind of kinds) {
        const { group, resource } = KINDS[kind];
        const at = `${file}:${line}`;
        result.calls.push({ at, method, group, resource: status ? `${resource}/status` : resource, verb });
      }
    };
    const visit = (node: ts.Node): void => {
      if (ts.isCallExpression(node) && ts.isPropertyAccessExpression(node.expression)) {
        const method = node.expression.name.text;
        const target = checker.getTypeAtLocation(node.expression.expression).getSymbol()?.getName();
        if (target === 'KubeObjects' && METHODS[method]) record(node, method);
      }
      // Owner references with blockOwnerDeletion: controllerRef(owner) or a literal with that field.
      if (
        ts.isCallExpression(node) &&
        ts.isIdentifier(node.expression) &&
        node.expression.text === 'controllerRef'
      ) {
        for (const k of kindsOfType(checker.getTypeAtLocation(node.arguments[0]))) owners.add(k);
        // An owner written out in place ({ apiVersion, kind: ETCD_SNAPSHOT_SCHEDULE.kind, metadata }).
        for (const k of kindsOfText(node.arguments[0]?.getText() ?? '')) owners.add(k);
      }
      if (
        ts.isObjectLiteralExpression(node) &&
        node.properties.some(p => p.name?.getText() === 'blockOwnerDeletion') &&
        file !== 'shared/builders/owner.ts'
      ) {
        for (const k of kindsOfText(node.getText())) owners.add(k);
      }
      ts.forEachChild(node, visit);
    };
    visit(source);
  }
  result.owners = [...owners].sort();
  return result;
}
