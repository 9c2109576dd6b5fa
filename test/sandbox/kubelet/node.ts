// The sandbox Node object (so that `kubectl get nodes` shows the node the Pods run on), and the
// Secret/ConfigMap reader the kubelet uses for env and volumes.
import { arch, cpus, totalmem } from 'node:os';
import type { Api } from './api.ts';
import { errorText, isConflict, isNotFound, mergePatch } from './api.ts';
import { ConfigError } from './env.ts';
import type { SourceReader } from './env.ts';
import type { Logger } from './types.ts';
import { nowIso } from './types.ts';

/** Creates (or refreshes) the Node object with a Ready condition; failures are only logged. */
export async function registerNode(
  api: Api,
  nodeName: string,
  hostIP: string,
  log: Logger,
  /** the port of the kubelet's HTTPS API (logs.ts), which the API server calls for pods/log */
  kubeletPort?: number,
): Promise<void> {
  const labels = {
    'kubernetes.io/hostname': nodeName,
    'kubernetes.io/os': 'linux',
    'kubernetes.io/arch': arch() === 'x64' ? 'amd64' : arch(),
    'node.kubernetes.io/instance-type': 'sandbox',
  };
  try {
    await api.core.createNode({
      body: { apiVersion: 'v1', kind: 'Node', metadata: { name: nodeName, labels } },
    });
  } catch (err) {
    if (!isConflict(err)) return log(`node ${nodeName}: cannot register: ${errorText(err)}`);
  }
  const now = nowIso();
  const capacity = {
    cpu: String(cpus().length),
    memory: `${Math.floor(totalmem() / 1024)}Ki`,
    pods: '110',
    'ephemeral-storage': '100Gi',
  };
  const status = {
    capacity,
    allocatable: capacity,
    ...(kubeletPort && { daemonEndpoints: { kubeletEndpoint: { Port: kubeletPort } } }),
    addresses: [
      { type: 'InternalIP', address: hostIP },
      { type: 'Hostname', address: nodeName },
    ],
    conditions: [
      {
        type: 'Ready',
        status: 'True',
        reason: 'KubeletReady',
        message: 'sandbox kubelet is posting ready status',
        lastHeartbeatTime: now,
        lastTransitionTime: now,
      },
    ],
    nodeInfo: {
      kubeletVersion: 'v1.37.2-sandbox',
      kubeProxyVersion: '',
      containerRuntimeVersion: 'sandbox://processes',
      operatingSystem: 'linux',
      architecture: labels['kubernetes.io/arch'],
      osImage: 'etcdfn sandbox',
      kernelVersion: '',
      machineID: '',
      systemUUID: '',
      bootID: '',
    },
  };
  try {
    await api.core.patchNodeStatus({ name: nodeName, body: { status } }, mergePatch);
  } catch (err) {
    log(`node ${nodeName}: cannot write status: ${errorText(err)}`);
  }
}

/**
 * Reads Secrets and ConfigMaps through the API (a missing object is undefined, other errors
 * ConfigError), and asks for service-account tokens bound to a Pod, keeping each until 80% of its
 * life has passed, as the kubelet's token manager does.
 */
export function apiSourceReader(api: Api): SourceReader {
  const tokens = new Map<string, { token: string; renewAt: number }>();
  return {
    async token(req) {
      const key = JSON.stringify([
        req.namespace,
        req.serviceAccount,
        req.pod.uid,
        req.audience ?? '',
        req.expirationSeconds ?? 0,
      ]);
      const cached = tokens.get(key);
      if (cached && Date.now() < cached.renewAt) return cached.token;
      try {
        const expirationSeconds = Math.max(600, req.expirationSeconds ?? 3607);
        const issued = await api.core.createNamespacedServiceAccountToken({
          name: req.serviceAccount,
          namespace: req.namespace,
          body: {
            spec: {
              audiences: req.audience ? [req.audience] : [],
              expirationSeconds,
              boundObjectRef: { apiVersion: 'v1', kind: 'Pod', name: req.pod.name, uid: req.pod.uid },
            },
          },
        });
        const token = issued.status?.token ?? '';
        tokens.set(key, { token, renewAt: Date.now() + expirationSeconds * 800 });
        return token;
      } catch (err) {
        throw new ConfigError(
          `cannot get a token for service account "${req.serviceAccount}": ${errorText(err)}`,
        );
      }
    },
    async secret(namespace, name) {
      try {
        const secret = await api.core.readNamespacedSecret({ name, namespace });
        const data: Record<string, Buffer> = {};
        for (const [k, v] of Object.entries(secret.data ?? {})) data[k] = Buffer.from(v, 'base64');
        for (const [k, v] of Object.entries(secret.stringData ?? {})) data[k] = Buffer.from(v);
        return data;
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw new ConfigError(`cannot read secret "${name}": ${errorText(err)}`);
      }
    },
    async configMap(namespace, name) {
      try {
        const cm = await api.core.readNamespacedConfigMap({ name, namespace });
        const data: Record<string, string> = { ...(cm.data ?? {}) };
        for (const [k, v] of Object.entries(cm.binaryData ?? {}))
          data[k] = Buffer.from(v, 'base64').toString('utf8');
        return data;
      } catch (err) {
        if (isNotFound(err)) return undefined;
        throw new ConfigError(`cannot read configmap "${name}": ${errorText(err)}`);
      }
    },
  };
}
