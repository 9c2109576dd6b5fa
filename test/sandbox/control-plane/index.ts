// The sandbox's control plane, the real one: etcd 3.6 as its store, kube-apiserver (TLS, client
// certificates, service-account tokens, RBAC and the default admission plugins) and
// kube-controller-manager (garbage collector, namespace, job, TTL-after-finished, disruption,
// persistent-volume binder and expander, node lifecycle, pod GC, service accounts...), all built
// from their Go modules. What a node provides (kubelet, storage provisioner, DNS) stays ours.
//
// Not run: the endpoints and EndpointSlice controllers. The sandbox's Pods have loopback addresses
// (127.a.b.c), which the API server refuses in Endpoints and EndpointSlices ("may not be in the
// loopback range"); the sandbox's DNS computes each Service's addresses from its Pods instead.
import { mkdirSync, writeFileSync } from 'node:fs';
import { request } from 'node:https';
import { join } from 'node:path';
import { readFileSync } from 'node:fs';
import { controlPlaneBinaries } from './binaries.ts';
import { clientKubeconfig, ensurePki, type ControlPlanePki } from './pki.ts';
import { freePort, logTail, startChild, type Child } from './processes.ts';

export const SERVICE_CIDR = '10.96.0.0/16';
export const SERVICE_ACCOUNT_ISSUER = 'https://kubernetes.default.svc.cluster.local';

export interface ControlPlaneOptions {
  /** state directory: pki/, etcd/, logs, kubeconfigs */
  dir: string;
  /** API server port on 127.0.0.1 (0 or unset: a free one) */
  port?: number;
  /** extra API server flags (name=value) */
  apiserverFlags?: string[];
  /** how long to wait for everything to be ready */
  timeoutMs?: number;
}

export interface ControlPlane {
  url: string;
  port: number;
  /** an admin kubeconfig (system:masters), for kubectl and client-node */
  kubeconfig: string;
  pki: ControlPlanePki;
  /** the kubernetes version the API server reports */
  version: string;
  children: Child[];
  stop(): Promise<void>;
}

const KCM_CONTROLLERS = [
  '*',
  '-endpoints-controller',
  '-endpointslice-controller',
  '-endpointslice-mirroring-controller',
];

export async function startControlPlane(opts: ControlPlaneOptions): Promise<ControlPlane> {
  const bins = controlPlaneBinaries();
  const dir = opts.dir;
  mkdirSync(dir, { recursive: true });
  const pki = ensurePki(join(dir, 'pki'), [
    'IP:127.0.0.1',
    'IP:10.96.0.1',
    'DNS:localhost',
    'DNS:kubernetes',
    'DNS:kubernetes.default',
    'DNS:kubernetes.default.svc',
    'DNS:kubernetes.default.svc.cluster.local',
  ]);
  const children: Child[] = [];
  const stop = async (): Promise<void> => {
    for (const child of [...children].reverse()) await child.stop();
  };
  try {
    const deadline = Date.now() + (opts.timeoutMs ?? 120_000);
    const etcdClient = await freePort();
    const etcdPeer = await freePort();
    const etcdUrl = `http://127.0.0.1:${etcdClient}`;
    children.push(
      startChild(
        'etcd',
        bins.etcd.etcd,
        [
          '--name=control-plane',
          `--data-dir=${join(dir, 'etcd')}`,
          `--listen-client-urls=${etcdUrl}`,
          `--advertise-client-urls=${etcdUrl}`,
          `--listen-peer-urls=http://127.0.0.1:${etcdPeer}`,
          `--initial-advertise-peer-urls=http://127.0.0.1:${etcdPeer}`,
          `--initial-cluster=control-plane=http://127.0.0.1:${etcdPeer}`,
          '--listen-metrics-urls=',
          '--quota-backend-bytes=2147483648',
          '--log-level=warn',
        ],
        join(dir, 'etcd.log'),
      ),
    );
    const port = opts.port || (await freePort());
    const url = `https://127.0.0.1:${port}`;
    children.push(
      startChild(
        'kube-apiserver',
        bins.kubeApiserver,
        [
          `--etcd-servers=${etcdUrl}`,
          '--bind-address=127.0.0.1',
          `--secure-port=${port}`,
          '--advertise-address=127.0.0.1',
          '--endpoint-reconciler-type=none',
          `--tls-cert-file=${pki.apiserver.cert}`,
          `--tls-private-key-file=${pki.apiserver.key}`,
          `--client-ca-file=${pki.ca.cert}`,
          `--kubelet-client-certificate=${pki.kubeletClient.cert}`,
          `--kubelet-client-key=${pki.kubeletClient.key}`,
          `--kubelet-certificate-authority=${pki.ca.cert}`,
          '--kubelet-preferred-address-types=InternalIP',
          `--service-account-issuer=${SERVICE_ACCOUNT_ISSUER}`,
          `--service-account-key-file=${pki.serviceAccount.pub}`,
          `--service-account-signing-key-file=${pki.serviceAccount.key}`,
          `--service-cluster-ip-range=${SERVICE_CIDR}`,
          '--authorization-mode=Node,RBAC',
          '--allow-privileged=true',
          '--profiling=false',
          '--event-ttl=1h',
          '--delete-collection-workers=2',
          '--v=1',
          ...(opts.apiserverFlags ?? []),
        ],
        join(dir, 'kube-apiserver.log'),
      ),
    );
    const kubeconfig = join(dir, 'kubeconfig');
    writeFileSync(kubeconfig, clientKubeconfig(url, pki.ca.cert, pki.admin, 'admin'), { mode: 0o600 });
    const kcmKubeconfig = join(dir, 'controller-manager.kubeconfig');
    writeFileSync(
      kcmKubeconfig,
      clientKubeconfig(url, pki.ca.cert, pki.controllerManager, 'system:kube-controller-manager'),
      { mode: 0o600 },
    );
    const version = await waitReady(url, pki, children, deadline);
    children.push(
      startChild(
        'kube-controller-manager',
        bins.kubeControllerManager,
        [
          `--kubeconfig=${kcmKubeconfig}`,
          `--authentication-kubeconfig=${kcmKubeconfig}`,
          `--authorization-kubeconfig=${kcmKubeconfig}`,
          '--bind-address=127.0.0.1',
          `--secure-port=${await freePort()}`,
          '--leader-elect=false',
          `--controllers=${KCM_CONTROLLERS.join(',')}`,
          `--root-ca-file=${pki.ca.cert}`,
          `--service-account-private-key-file=${pki.serviceAccount.key}`,
          '--use-service-account-credentials=true',
          `--cluster-signing-cert-file=${pki.ca.cert}`,
          `--cluster-signing-key-file=${pki.ca.key}`,
          `--service-cluster-ip-range=${SERVICE_CIDR}`,
          '--profiling=false',
          '--v=1',
        ],
        join(dir, 'kube-controller-manager.log'),
      ),
    );
    await serviceAccountReady(url, pki, 'default', deadline);
    return { url, port, kubeconfig, pki, version, children, stop };
  } catch (err) {
    await stop();
    throw err;
  }
}

/** Resolves with the server's version once /readyz answers ok; fails early when a child exits. */
async function waitReady(
  url: string,
  pki: ControlPlanePki,
  children: Child[],
  deadline: number,
): Promise<string> {
  for (;;) {
    for (const child of children) {
      const exit = child.exited();
      if (exit) {
        throw new Error(
          `${child.name} exited (${exit.code ?? exit.signal}) while the control plane started; its log ${child.log}:\n${logTail(child)}`,
        );
      }
    }
    const ready = await get(url, '/readyz', pki).catch((err: Error) => ({ status: 0, body: err.message }));
    if (ready.status === 200) {
      const version = JSON.parse((await get(url, '/version', pki)).body) as { gitVersion: string };
      return version.gitVersion;
    }
    const last = `${ready.status} ${ready.body.slice(0, 500)}`;
    if (Date.now() > deadline) {
      throw new Error(
        `kube-apiserver at ${url} not ready in time (last /readyz: ${last}); log:\n${logTail(children[1])}`,
      );
    }
    await new Promise(resolve => setTimeout(resolve, 200));
  }
}

/**
 * Waits for the ServiceAccount controller's `default` account in a namespace: the ServiceAccount
 * admission plugin refuses Pods there until it exists.
 */
export async function serviceAccountReady(
  url: string,
  pki: ControlPlanePki,
  namespace: string,
  deadline: number,
): Promise<void> {
  const path = `/api/v1/namespaces/${namespace}/serviceaccounts/default`;
  while ((await get(url, path, pki).catch(() => ({ status: 0 }))).status !== 200) {
    if (Date.now() > deadline) throw new Error(`no ServiceAccount default in namespace ${namespace} in time`);
    await new Promise(resolve => setTimeout(resolve, 100));
  }
}

export function get(
  url: string,
  path: string,
  pki: ControlPlanePki,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(
      `${url}${path}`,
      {
        ca: readFileSync(pki.ca.cert),
        cert: readFileSync(pki.admin.cert),
        key: readFileSync(pki.admin.key),
        timeout: 5_000,
      },
      res => {
        let body = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (body += chunk));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
      },
    );
    req.on('timeout', () => req.destroy(new Error('timeout')));
    req.on('error', reject);
    req.end();
  });
}
