import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Container, V1Pod } from '@kubernetes/client-node';
import type { EtcdMember, EtcdMemberSpec } from '../../shared/api/etcd-member.ts';
import {
  buildMember,
  buildMemberPod,
  buildMemberPvc,
  goRuntimeEnv,
  isControlledBy,
  type BuildMemberPodOptions,
} from '../../shared/builders/index.ts';
import { etcdImage, parseEtcdImageDigests } from '../../shared/builders/pod.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const NS = 'prod';

const cluster = etcdCluster({
  metadata: { namespace: NS, uid: 'cluster-uid' },
  spec: { replicas: undefined },
  status: {
    clusterToken: 'prod-demo-cluster-uid',
    observed: { replicas: 3, version: '3.5.16', storage: { size: '1Gi' } },
  },
});

/** A member as it is after creation (named by the API server) and after being added to etcd. */
function member(spec: Partial<EtcdMemberSpec> = {}, status: EtcdMember['status'] = undefined): EtcdMember {
  const m = buildMember(cluster, { bootstrap: false });
  m.metadata = { ...m.metadata, name: 'demo-abcde', uid: 'member-uid' };
  delete m.metadata.generateName;
  m.spec = { ...m.spec, initialCluster: 'demo-abcde=http://demo-abcde.demo.prod.svc:2380', ...spec };
  if (status) m.status = status;
  return m;
}

const OPTS: BuildMemberPodOptions = { namespace: NS, clusterFormed: true, isVoter: true };
const pod = (m: EtcdMember = member(), opts: Partial<BuildMemberPodOptions> = {}): V1Pod =>
  buildMemberPod(m, { ...OPTS, ...opts });
const etcd = (p: V1Pod): V1Container => p.spec!.containers.find(c => c.name === 'etcd')!;
/** The etcd container's literal variables (the join settings come from annotations: see below). */
const env = (p: V1Pod): Record<string, string> =>
  Object.fromEntries((etcd(p).env ?? []).filter(e => !e.valueFrom).map(e => [e.name, e.value ?? '']));

/**
 * The rules of the "restricted" Pod Security Standard (as of Kubernetes 1.29) that a Pod spec
 * can break; returns what it breaks, empty when it passes.
 */
function restrictedViolations(p: V1Pod): string[] {
  const out: string[] = [];
  const spec = p.spec!;
  const podSc = spec.securityContext ?? {};
  if (spec.hostNetwork || spec.hostPID || spec.hostIPC) out.push('host namespaces');
  const allowedVolumes = [
    'configMap',
    'csi',
    'downwardAPI',
    'emptyDir',
    'ephemeral',
    'persistentVolumeClaim',
    'projected',
    'secret',
  ];
  for (const v of spec.volumes ?? []) {
    const kinds = Object.keys(v).filter(k => k !== 'name');
    if (kinds.some(k => !allowedVolumes.includes(k))) out.push(`volume ${v.name} of type ${kinds.join(',')}`);
  }
  if (podSc.runAsUser === 0) out.push('pod runAsUser 0');
  if (
    podSc.seccompProfile &&
    podSc.seccompProfile.type !== 'RuntimeDefault' &&
    podSc.seccompProfile.type !== 'Localhost'
  ) {
    out.push('pod seccomp');
  }
  for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
    const sc = c.securityContext ?? {};
    if (sc.privileged) out.push(`${c.name}: privileged`);
    if (sc.allowPrivilegeEscalation !== false) out.push(`${c.name}: allowPrivilegeEscalation must be false`);
    if (!(sc.capabilities?.drop ?? []).includes('ALL')) out.push(`${c.name}: must drop ALL capabilities`);
    if ((sc.capabilities?.add ?? []).some(cap => cap !== 'NET_BIND_SERVICE'))
      out.push(`${c.name}: adds capabilities`);
    if ((sc.runAsNonRoot ?? podSc.runAsNonRoot) !== true) out.push(`${c.name}: runAsNonRoot`);
    if ((sc.runAsUser ?? podSc.runAsUser) === 0) out.push(`${c.name}: runs as root`);
    const seccomp = sc.seccompProfile?.type ?? podSc.seccompProfile?.type;
    if (seccomp !== 'RuntimeDefault' && seccomp !== 'Localhost') out.push(`${c.name}: seccomp`);
    if ((c.ports ?? []).some(port => port.hostPort)) out.push(`${c.name}: hostPort`);
  }
  return out;
}

describe('member Pod', () => {
  it('passes the restricted Pod Security profile and mounts no service-account token', () => {
    for (const p of [
      pod(),
      pod(member({ storage: { size: '1Gi', medium: 'Memory' } })),
      pod(
        member({
          tls: { clientServerSecretRef: { name: 's' }, clientMTLS: true, peerSecretRef: { name: 'p' } },
        }),
      ),
    ]) {
      assert.deepEqual(restrictedViolations(p), []);
      assert.equal(p.spec!.automountServiceAccountToken, false);
      assert.equal(p.spec!.enableServiceLinks, false);
      assert.equal(etcd(p).securityContext?.readOnlyRootFilesystem, true);
      assert.equal(p.spec!.securityContext?.runAsUser, 65532);
      assert.equal(p.spec!.securityContext?.fsGroup, 65532);
    }
  });

  it('the restricted checker itself catches what it claims to', () => {
    const bad = pod();
    bad.spec!.hostNetwork = true;
    bad.spec!.volumes!.push({ name: 'host', hostPath: { path: '/' } });
    etcd(bad).securityContext = { privileged: true };
    const violations = restrictedViolations(bad).join('; ');
    for (const rule of [
      'host namespaces',
      'hostPath',
      'privileged',
      'allowPrivilegeEscalation',
      'drop ALL',
    ]) {
      assert.match(violations, new RegExp(rule));
    }
  });

  it('is named after its member, owned by it, and resolvable through the headless Service', () => {
    const p = pod();
    assert.equal(p.metadata?.name, 'demo-abcde');
    assert.equal(p.metadata?.namespace, NS);
    assert.equal(isControlledBy(p, member()), true);
    assert.equal(p.spec!.hostname, 'demo-abcde');
    assert.equal(p.spec!.subdomain, 'demo');
  });

  it('labels say cluster, member and role; a member not yet in etcd has no role', () => {
    assert.equal(pod().metadata?.labels?.['etcdfn.io/role'], 'voter');
    assert.equal(pod().metadata?.labels?.['etcdfn.io/member'], 'demo-abcde');
    assert.equal(pod().metadata?.labels?.['etcdfn.io/cluster'], 'demo');
    const learner = member({}, { memberID: 'abc', role: 'learner' });
    assert.equal(pod(learner, { isVoter: false }).metadata?.labels?.['etcdfn.io/role'], 'learner');
    assert.equal(pod(member(), { isVoter: false }).metadata?.labels?.['etcdfn.io/role'], undefined);
  });

  it('additionalMetadata lands on the Pod but cannot claim a role or another cluster', () => {
    const m = member({
      additionalMetadata: {
        labels: { team: 'db', 'etcdfn.io/role': 'voter', 'etcdfn.io/cluster': 'x' },
        annotations: { 'prometheus.io/scrape': 'true', 'etcdfn.io/initial-cluster-state': 'new' },
      },
    });
    const p = pod(m, { isVoter: false });
    assert.equal(p.metadata?.labels?.team, 'db');
    assert.equal(p.metadata?.labels?.['etcdfn.io/role'], undefined);
    assert.equal(p.metadata?.labels?.['etcdfn.io/cluster'], 'demo');
    assert.deepEqual(p.metadata?.annotations, {
      'prometheus.io/scrape': 'true',
      'etcdfn.io/initial-cluster': m.spec.initialCluster,
      'etcdfn.io/initial-cluster-state': 'existing',
    });
  });

  it('the join settings ride in annotations that etcd reads through the downward API, not on the command line', () => {
    // A kubelet builds a container's environment at each start: the operator can arm the empty-data
    // guard of a running first Pod for its next in-place restart by patching these annotations.
    const full = `demo-0=http://demo-0.demo.prod.svc:2380,demo-abcde=http://demo-abcde.demo.prod.svc:2380`;
    const p = pod(member({ initialCluster: full }, { memberID: '8e9e05c52164694d' }));
    const command = etcd(p).command ?? [];
    assert.equal(command.filter(a => /^--initial-cluster(-state)?=/.test(a)).length, 0, command.join(' '));
    assert.ok(command.includes(`--initial-cluster-token=${member().spec.clusterToken}`));
    assert.deepEqual(
      etcd(p)
        .env?.filter(e => e.valueFrom)
        .map(e => [e.name, e.valueFrom?.fieldRef?.fieldPath]),
      [
        ['POD_IP', 'status.podIP'],
        ['ETCD_INITIAL_CLUSTER', "metadata.annotations['etcdfn.io/initial-cluster']"],
        ['ETCD_INITIAL_CLUSTER_STATE', "metadata.annotations['etcdfn.io/initial-cluster-state']"],
      ],
    );
    assert.equal(p.metadata?.annotations?.['etcdfn.io/initial-cluster'], full);
    assert.equal(p.metadata?.annotations?.['etcdfn.io/initial-cluster-state'], 'existing');
    // A member that has run: its (next) Pod is built guarded, only itself, existing.
    const ran = pod(member({ initialCluster: full }, { memberID: '8e9e05c52164694d', hasData: true }));
    assert.deepEqual(
      [
        ran.metadata?.annotations?.['etcdfn.io/initial-cluster'],
        ran.metadata?.annotations?.['etcdfn.io/initial-cluster-state'],
      ],
      ['demo-abcde=http://demo-abcde.demo.prod.svc:2380', 'existing'],
    );
  });

  it('runs the etcd image of the member version, from the configured repository', () => {
    assert.equal(etcd(pod()).image, 'quay.io/coreos/etcd:v3.5.16');
    assert.equal(
      etcd(pod(member(), { etcdImageRepository: 'registry.local/etcd' })).image,
      'registry.local/etcd:v3.5.16',
    );
    assert.equal(etcd(pod()).command?.[0], 'etcd');
  });

  it('runs a release listed in ETCD_IMAGE_DIGESTS by digest, its restore step too; others by tag', () => {
    const digest = `sha256:${'c'.repeat(64)}`;
    const digests = parseEtcdImageDigests(`3.5.16=${digest}, 3.5.17=sha256:${'d'.repeat(64)}`);
    assert.equal(
      etcd(pod(member(), { etcdImageDigests: digests })).image,
      `quay.io/coreos/etcd:v3.5.16@${digest}`,
    );
    const restoring = pod(
      member({
        restore: {
          source: {
            s3: { endpoint: 'https://s3', bucket: 'b', key: 'k', credentialsSecretRef: { name: 's' } },
          },
        },
      }),
      {
        etcdImageDigests: digests,
      },
    );
    assert.ok(restoring.spec?.initContainers?.some(c => c.image === `quay.io/coreos/etcd:v3.5.16@${digest}`));
    assert.equal(etcdImage('3.4.23', 'quay.io/coreos/etcd', digests), 'quay.io/coreos/etcd:v3.4.23');
    assert.deepEqual(parseEtcdImageDigests(undefined), {});
    for (const bad of ['3.5.16', '3.5.16=sha256:abc', 'v3.5.16=sha256:' + 'c'.repeat(64), '3.5.16=latest']) {
      assert.throws(
        () => parseEtcdImageDigests(bad),
        /ETCD_IMAGE_DIGESTS: .* is not <version>=sha256:<64 hex digits>/,
        bad,
      );
    }
  });

  it('the seed says --initial-cluster-state=new only before the cluster ID and its member ID are recorded', () => {
    const state = (p: V1Pod): string | undefined =>
      p.metadata?.annotations?.['etcdfn.io/initial-cluster-state'];
    const seed = member({ bootstrap: true });
    assert.equal(state(pod(seed, { clusterFormed: false })), 'new');
    assert.equal(state(pod(seed, { clusterFormed: true })), 'existing');
    const seedWithID = member({ bootstrap: true }, { memberID: '8e9e05c52164694d' });
    assert.equal(state(pod(seedWithID, { clusterFormed: false })), 'existing');
  });

  it('exposes client, peer and metrics ports; Ready follows /health (NOSPACE excluded), liveness is only a TCP check', () => {
    const c = etcd(pod());
    assert.deepEqual(
      c.ports?.map(p => [p.name, p.containerPort]),
      [
        ['client', 2379],
        ['peer', 2380],
        ['metrics', 2381],
      ],
    );
    assert.deepEqual(c.readinessProbe?.httpGet, {
      path: '/health?exclude=NOSPACE',
      port: 2381,
      scheme: 'HTTP',
    });
    // Client TLS without client certificates: metrics and /health over TLS, and the probe follows.
    const tlsPod = pod(member({ tls: { clientServerSecretRef: { name: 's' }, clientMTLS: false } }));
    assert.equal(etcd(tlsPod).readinessProbe?.httpGet?.scheme, 'HTTPS');
    assert.ok(etcd(tlsPod).command?.includes('--listen-metrics-urls=https://$(POD_IP):2381'));
    // etcd's command names $(POD_IP): the container defines it, so the kubelet expands it.
    assert.deepEqual(c.env?.find(e => e.name === 'POD_IP')?.valueFrom?.fieldRef, {
      apiVersion: 'v1',
      fieldPath: 'status.podIP',
    });
    assert.equal(c.readinessProbe?.periodSeconds, 1);
    assert.deepEqual(c.livenessProbe?.tcpSocket, { port: 2380 });
    assert.equal(c.livenessProbe?.httpGet, undefined);
    assert.equal(pod().spec!.terminationGracePeriodSeconds, 30);
  });

  it('client mTLS: metrics over TLS (a client certificate needed), Ready read from the plain probe port 2382', () => {
    const c = etcd(pod(member({ tls: { clientServerSecretRef: { name: 's' }, clientMTLS: true } })));
    assert.ok(
      c.command?.includes('--listen-metrics-urls=https://$(POD_IP):2381,http://$(POD_IP):2382'),
      c.command?.join(' ') ?? '',
    );
    assert.deepEqual(c.readinessProbe?.httpGet, {
      path: '/health?exclude=NOSPACE',
      port: 2382,
      scheme: 'HTTP',
    });
    assert.deepEqual(
      c.ports?.map(p => [p.name, p.containerPort]),
      [
        ['client', 2379],
        ['peer', 2380],
        ['metrics', 2381],
        ['probe', 2382],
      ],
    );
  });

  it('IPv6 Pods: the listen URLs carry the Pod IP in brackets; the probes are unchanged', () => {
    const c = etcd(pod(member(), { podIPFamily: 'IPv6' }));
    assert.ok(
      c.command?.includes('--listen-client-urls=http://[$(POD_IP)]:2379'),
      c.command?.join(' ') ?? '',
    );
    assert.ok(c.command?.includes('--listen-peer-urls=http://[$(POD_IP)]:2380'));
    assert.ok(c.command?.includes('--listen-metrics-urls=http://[$(POD_IP)]:2381'));
    assert.deepEqual(c.env?.find(e => e.name === 'POD_IP')?.valueFrom?.fieldRef, {
      apiVersion: 'v1',
      fieldPath: 'status.podIP',
    });
    assert.deepEqual(c.readinessProbe?.httpGet, etcd(pod()).readinessProbe?.httpGet);
  });

  it('a user affinity passes through; without one, members prefer different nodes', () => {
    const p = pod();
    const term = p.spec!.affinity?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution?.[0];
    assert.equal(term?.weight, 100);
    assert.equal(term?.podAffinityTerm.topologyKey, 'kubernetes.io/hostname');
    assert.deepEqual(term?.podAffinityTerm.labelSelector?.matchLabels, { 'etcdfn.io/cluster': 'demo' });
    assert.equal(
      p.spec!.affinity?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution,
      undefined,
    );

    const zone = {
      nodeAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: {
          nodeSelectorTerms: [{ matchExpressions: [{ key: 'zone', operator: 'In', values: ['a'] }] }],
        },
      },
    };
    assert.deepEqual(pod(member({ affinity: zone })).spec!.affinity, zone);
    assert.ok(pod(member({ affinity: {} })).spec!.affinity?.podAntiAffinity);
  });

  it('topology spread and pull secrets pass through', () => {
    const spread = [
      { maxSkew: 1, topologyKey: 'topology.kubernetes.io/zone', whenUnsatisfiable: 'ScheduleAnyway' },
    ];
    const p = pod(member({ topologySpreadConstraints: spread, imagePullSecrets: [{ name: 'regcred' }] }));
    assert.deepEqual(p.spec!.topologySpreadConstraints, spread);
    assert.deepEqual(p.spec!.imagePullSecrets, [{ name: 'regcred' }]);
    assert.equal(pod().spec!.imagePullSecrets, undefined);
  });
});

describe('member Pod resources and Go runtime', () => {
  it('defaults to modest requests and a 2Gi memory limit (no CPU limit), with GOMEMLIMIT to match', () => {
    assert.deepEqual(etcd(pod()).resources, {
      requests: { cpu: '100m', memory: '128Mi' },
      limits: { memory: '2048Mi' },
    });
    assert.deepEqual(env(pod()), { GOMEMLIMIT: String((2n * 1024n ** 3n * 9n) / 10n) });
  });

  it('adds a Memory-medium data volume to the default memory limit (it is charged to the same cgroup)', () => {
    const inMemory = member({ storage: { size: '512Mi', medium: 'Memory' } });
    assert.deepEqual(etcd(pod(inMemory)).resources?.limits, { memory: '2560Mi' });
    // The Go heap still gets 90% of the 2Gi left once the volume is taken off.
    assert.equal(env(pod(inMemory)).GOMEMLIMIT, String((2n * 1024n ** 3n * 9n) / 10n));
    const odd = member({ storage: { size: '1G', medium: 'Memory' } });
    assert.deepEqual(etcd(pod(odd)).resources?.limits, { memory: String(2n * 1024n ** 3n + 10n ** 9n) });
  });

  it('uses the user resources as given', () => {
    const resources = { requests: { cpu: '500m' }, limits: { cpu: 2, memory: '1Gi' } };
    assert.deepEqual(etcd(pod(member({ resources }))).resources, {
      requests: { cpu: '500m' },
      limits: { cpu: '2', memory: '1Gi' },
    });
  });

  const cpu: [string, string][] = [
    ['1500m', '2'],
    ['1', '1'],
    ['100m', '1'],
    ['2', '2'],
    ['2.1', '3'],
  ];
  for (const [limit, want] of cpu) {
    it(`GOMAXPROCS ${want} for a CPU limit of ${limit}`, () => {
      assert.equal(env(pod(member({ resources: { limits: { cpu: limit } } }))).GOMAXPROCS, want);
    });
  }

  it('no GOMAXPROCS from a CPU request alone (requests do not throttle)', () => {
    assert.equal(env(pod(member({ resources: { requests: { cpu: '4' } } }))).GOMAXPROCS, undefined);
  });

  it('GOMEMLIMIT is 90% of the memory limit, less a Memory-medium volume charged to the same cgroup', () => {
    assert.equal(
      env(pod(member({ resources: { limits: { memory: '1000Mi' } } }))).GOMEMLIMIT,
      String(900 * 1024 ** 2),
    );
    const inMemory = member({
      storage: { size: '512Mi', medium: 'Memory' },
      resources: { limits: { memory: '1536Mi' } },
    });
    assert.equal(env(pod(inMemory)).GOMEMLIMIT, String(Math.floor((1024 * 1024 ** 2 * 9) / 10)));
    assert.deepEqual(goRuntimeEnv({ limits: { memory: '256Mi' } }, 512n * 1024n ** 2n), []);
  });
});

describe('member data volume', () => {
  it('a disk member mounts its own PVC at /var/lib/etcd', () => {
    const p = pod();
    assert.deepEqual(p.spec!.volumes, [
      { name: 'data', persistentVolumeClaim: { claimName: 'data-demo-abcde' } },
    ]);
    assert.deepEqual(etcd(p).volumeMounts, [{ name: 'data', mountPath: '/var/lib/etcd' }]);
  });

  it('a Memory member has no PVC and an emptyDir in memory limited to the storage size', () => {
    const m = member({ storage: { size: '256Mi', medium: 'Memory' } });
    assert.equal(buildMemberPvc(m, NS), undefined);
    assert.deepEqual(pod(m).spec!.volumes, [
      { name: 'data', emptyDir: { medium: 'Memory', sizeLimit: '256Mi' } },
    ]);
  });

  it('TLS Secrets are mounted read-only where the flags point', () => {
    const p = pod(
      member({
        tls: { clientServerSecretRef: { name: 's' }, clientMTLS: true, peerSecretRef: { name: 'p' } },
      }),
    );
    assert.deepEqual(
      p.spec!.volumes?.filter(v => v.secret).map(v => [v.name, v.secret?.secretName]),
      [
        ['tls-client', 's'],
        ['tls-peer', 'p'],
      ],
    );
    const mounts = etcd(p).volumeMounts?.filter(v => v.name.startsWith('tls-'));
    assert.deepEqual(mounts, [
      { name: 'tls-client', mountPath: '/etc/etcd/tls/client', readOnly: true },
      { name: 'tls-peer', mountPath: '/etc/etcd/tls/peer', readOnly: true },
    ]);
  });

  it('a restoring seed (etcd 3.5, S3) fetches, restores with etcdutl under the new token, then commits', () => {
    const s3 = {
      endpoint: 'https://s3.example.com',
      bucket: 'b',
      key: 'k/snap.db',
      credentialsSecretRef: { name: 'creds' },
    };
    const m = member({ bootstrap: true, restore: { source: { s3, sha256: `sha256:${'ab'.repeat(32)}` } } });
    const p = pod(m, { clusterFormed: false, operatorImage: 'registry.example/etcdfn:1.2.3' });
    const inits = p.spec!.initContainers!;
    assert.deepEqual(
      inits.map(c => [c.name, c.image]),
      [
        ['restore-fetch', 'registry.example/etcdfn:1.2.3'],
        ['restore', 'quay.io/coreos/etcd:v3.5.16'],
        ['restore-commit', 'registry.example/etcdfn:1.2.3'],
      ],
    );
    const [fetch, restore, commit] = inits;
    assert.deepEqual(fetch.args, [
      'restore-fetch',
      '--data-dir=/var/lib/etcd',
      '--etcd-version=3.5.16',
      '--source-name=s3://b/k/snap.db',
      `--sha256=${'ab'.repeat(32)}`,
      '--s3-endpoint=https://s3.example.com',
      '--s3-bucket=b',
      '--s3-key=k/snap.db',
      '--s3-secret=creds',
    ]);
    // Optional refs: a missing Secret is the agent's to report with its fix, not a stuck Pod.
    assert.deepEqual(
      fetch.env?.map(e => [e.name, e.valueFrom?.secretKeyRef?.name, e.valueFrom?.secretKeyRef?.optional]),
      [
        ['AWS_ACCESS_KEY_ID', 'creds', true],
        ['AWS_SECRET_ACCESS_KEY', 'creds', true],
      ],
    );
    assert.deepEqual(restore.command, [
      'etcdutl',
      'snapshot',
      'restore',
      '/var/lib/etcd/.etcdfn-restore/snapshot.db',
      '--data-dir=/var/lib/etcd/.etcdfn-restore/data',
      '--name=demo-abcde',
      '--initial-cluster=demo-abcde=http://demo-abcde.demo.prod.svc:2380',
      `--initial-cluster-token=${m.spec.clusterToken}`,
      '--initial-advertise-peer-urls=http://demo-abcde.demo.prod.svc:2380',
    ]);
    assert.deepEqual(commit.args, [
      'restore-commit',
      '--data-dir=/var/lib/etcd',
      '--source-name=s3://b/k/snap.db',
    ]);
    for (const c of inits)
      assert.deepEqual(c.volumeMounts?.[0], { name: 'data', mountPath: '/var/lib/etcd' });
    assert.deepEqual(restrictedViolations(p), []);
  });

  it('a restoring seed on etcd 3.4 restores with etcdctl (API v3) and reads a PVC file read-only', () => {
    const m = member({
      version: '3.4.23',
      bootstrap: true,
      restore: { source: { pvc: { claimName: 'backups', subPath: 'etcd/snap.db' } } },
    });
    const p = pod(m, { clusterFormed: false });
    const [fetch, restore] = p.spec!.initContainers!;
    assert.equal(restore.command![0], 'etcdctl');
    assert.deepEqual(restore.env, [{ name: 'ETCDCTL_API', value: '3' }]);
    assert.ok(fetch.args!.includes('--source-file=/restore-source/etcd/snap.db'));
    assert.ok(
      fetch.args!.includes('--source-mount=/restore-source'),
      'the agent checks the file resolves inside this mount',
    );
    assert.ok(fetch.args!.includes('--source-name=pvc://backups/etcd/snap.db'));
    assert.deepEqual(fetch.volumeMounts?.[1], {
      name: 'restore-source',
      mountPath: '/restore-source',
      readOnly: true,
    });
    assert.deepEqual(p.spec!.volumes!.find(v => v.name === 'restore-source')?.persistentVolumeClaim, {
      claimName: 'backups',
      readOnly: true,
    });
  });

  it('a seed whose snapshotRef was never resolved gets no Pod rather than an empty one', () => {
    const m = member({ bootstrap: true, restore: { source: { snapshotRef: { name: 'nightly' } } } });
    assert.throws(
      () => pod(m, { clusterFormed: false }),
      /snapshotRef is resolved by the cluster controller/,
    );
  });

  it('members that do not restore have no init containers', () => {
    assert.equal(pod().spec!.initContainers, undefined);
  });
});

describe('member PVC', () => {
  it('is data-<member>, ReadWriteOnce, sized like the storage, owned by the member', () => {
    const pvc = buildMemberPvc(member(), NS)!;
    assert.equal(pvc.metadata?.name, 'data-demo-abcde');
    assert.equal(pvc.metadata?.namespace, NS);
    assert.equal(isControlledBy(pvc, member()), true);
    assert.equal(pvc.metadata?.labels?.['etcdfn.io/cluster'], 'demo');
    assert.equal(pvc.metadata?.labels?.['etcdfn.io/member'], 'demo-abcde');
    assert.deepEqual(pvc.spec?.accessModes, ['ReadWriteOnce']);
    assert.deepEqual(pvc.spec?.resources?.requests, { storage: '1Gi' });
    assert.equal('storageClassName' in pvc.spec, false);
  });

  it('passes a storage class through, including "" (no dynamic provisioning)', () => {
    assert.equal(
      buildMemberPvc(member({ storage: { size: '1Gi', storageClassName: 'fast' } }), NS)?.spec
        ?.storageClassName,
      'fast',
    );
    assert.equal(
      buildMemberPvc(member({ storage: { size: '1Gi', storageClassName: '' } }), NS)?.spec?.storageClassName,
      '',
    );
  });

  it('carries additionalMetadata under the operator labels', () => {
    const pvc = buildMemberPvc(
      member({
        additionalMetadata: { labels: { team: 'db', 'etcdfn.io/member': 'x' }, annotations: { a: 'b' } },
      }),
      NS,
    )!;
    assert.equal(pvc.metadata?.labels?.team, 'db');
    assert.equal(pvc.metadata?.labels?.['etcdfn.io/member'], 'demo-abcde');
    assert.deepEqual(pvc.metadata?.annotations, { a: 'b' });
  });
});

describe('member Pod: etcd check v2store before a member first runs 3.6 on its 3.5 data', () => {
  const inits = (m: EtcdMember) => (pod(m).spec?.initContainers ?? []).map(c => [c.name, c.image, c.command]);

  it("3.5 → 3.6: the previous release's etcdutl checks the data directory before etcd 3.6 opens it", () => {
    assert.deepEqual(inits(member({ version: '3.6.16' }, { version: '3.5.35' })), [
      [
        'check-v2store',
        'quay.io/coreos/etcd:v3.5.35',
        ['etcdutl', 'check', 'v2store', '--data-dir=/var/lib/etcd'],
      ],
    ]);
  });

  it('no check for a new member, a patch change, 3.6 → 3.7, a downgrade, or a Memory member', () => {
    for (const [spec, running, storage] of [
      ['3.6.16', undefined, undefined],
      ['3.5.35', '3.5.16', undefined],
      ['3.7.3', '3.6.16', undefined],
      ['3.5.35', '3.6.16', undefined],
      ['3.6.16', '3.5.35', { size: '1Gi', medium: 'Memory' as const }],
    ] as const) {
      const m = member(
        { version: spec, ...(storage && { storage }) },
        running ? { version: running } : undefined,
      );
      assert.deepEqual(inits(m), [], `${running} → ${spec}`);
    }
  });
});
