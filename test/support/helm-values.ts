// The chart's value sets the tests render with both Helm majors: each documented way to install
// (docs/installation.md), so every render check (schema, image, policies, audiences) covers them all.
import { createHash } from 'node:crypto';
import type { Obj } from './helm.ts';

export const DIGEST = `sha256:${createHash('sha256').update('etcdfn').digest('hex')}`;

/** The value sets every test runs with both Helm majors. */
export const VALUE_SETS: Record<string, Obj> = {
  knative: {},
  standalone: { mode: 'standalone' },
  'standalone, 2 replicas': { mode: 'standalone', standalone: { replicas: 2 } },
  'standalone, namespace created': { mode: 'standalone', namespace: { create: true } },
  'knative, pinned digest and overrides': {
    image: { repository: 'registry.example:5000/etcdfn', tag: '0.2.0-rc.1', digest: DIGEST },
    imagePullSecrets: [{ name: 'regcred' }],
    extraLabels: { team: 'storage' },
    extraEnv: [{ name: 'ETCDFN_UNHEALTHY_WAIT_MS', value: '9000' }],
    knative: { functions: { reconcileCluster: { minScale: 1, maxScale: 5, timeoutSeconds: 120 } } },
  },
  'standalone, pinned digest with no tag, an etcd mirror': {
    mode: 'standalone',
    image: { repository: 'registry.example/etcdfn', digest: DIGEST },
    etcd: { imageRepository: 'mirror.example/etcd' },
  },
  'knative, etcd releases pinned by digest': {
    etcd: { imageRepository: 'quay.io/coreos/etcd', imageDigests: { '3.5.16': DIGEST } },
  },
  'knative with a PodMonitor': { metrics: { podMonitor: { enabled: true, labels: { release: 'prom' } } } },
  'standalone with a PodMonitor': { mode: 'standalone', metrics: { podMonitor: { enabled: true } } },
  'knative with sender authentication': {
    oidc: { enabled: true, issuer: 'https://kubernetes.default.svc.cluster.local' },
  },
  'knative, namespaced (watchNamespaces), sender authentication': {
    watchNamespaces: ['team-a', 'team-b'],
    oidc: { enabled: true, issuer: 'https://kubernetes.default.svc.cluster.local' },
  },
  'standalone, namespaced (watchNamespaces)': { mode: 'standalone', watchNamespaces: ['team-a'] },
};
