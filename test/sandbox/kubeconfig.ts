// Kubeconfigs for a plain-HTTP endpoint on loopback with no credentials: the counting proxy in front
// of a test's API server (test/support/counting-proxy.ts, which adds the admin credentials), or an
// address where nothing listens. The API server itself is reached with its own admin kubeconfig
// (TLS, client certificate). client-node refuses http:// unless TLS verification is skipped, so the
// cluster entry says insecure-skip-tls-verify.

import { mkdirSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { stringify } from 'yaml';

export function kubeconfigYaml(serverUrl: string, namespace = 'default'): string {
  return stringify({
    apiVersion: 'v1',
    kind: 'Config',
    clusters: [{ name: 'sandbox', cluster: { server: serverUrl, 'insecure-skip-tls-verify': true } }],
    users: [{ name: 'sandbox', user: {} }],
    contexts: [{ name: 'sandbox', context: { cluster: 'sandbox', user: 'sandbox', namespace } }],
    'current-context': 'sandbox',
    preferences: {},
  });
}

/** Write a kubeconfig for kubectl and client-node that points at `serverUrl`. */
export function writeKubeconfig(path: string, serverUrl: string, namespace = 'default'): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, kubeconfigYaml(serverUrl, namespace));
}

/** A loaded client-node KubeConfig for the endpoint at `url`. */
export function kubeConfigFor(url: string, namespace = 'default'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigYaml(url, namespace));
  return kc;
}
