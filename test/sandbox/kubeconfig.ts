// Kubeconfigs for the sandbox API server: plain HTTP on loopback, no credentials. client-node refuses
// http:// unless TLS verification is skipped, so the cluster entry says insecure-skip-tls-verify.

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

/** Write a kubeconfig for kubectl and client-node that points at the sandbox. */
export function writeKubeconfig(path: string, serverUrl: string, namespace = 'default'): void {
  mkdirSync(dirname(path), { recursive: true });
  writeFileSync(path, kubeconfigYaml(serverUrl, namespace));
}

/** A loaded client-node KubeConfig for the sandbox at `url`. */
export function kubeConfigFor(url: string, namespace = 'default'): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromString(kubeconfigYaml(url, namespace));
  return kc;
}
