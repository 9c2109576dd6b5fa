// The control plane's certificates and keys, made with the openssl command line as kubeadm lays
// them out: one cluster CA; the API server's serving certificate; client certificates for the
// admin (system:masters), the controller manager and the API server's calls to kubelets; and the
// service-account signing key pair. Files are reused when present (a persistent sandbox restarts
// with the same CA, so its kubeconfig and issued tokens stay valid).
import { execFileSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface Pair {
  cert: string;
  key: string;
}

export interface ControlPlanePki {
  dir: string;
  ca: Pair;
  apiserver: Pair;
  admin: Pair;
  controllerManager: Pair;
  kubeletClient: Pair;
  /** the kubelets' serving certificate (pods/log, exec), signed by the cluster CA */
  kubeletServing: Pair;
  serviceAccount: { key: string; pub: string };
}

const DAYS = '3650';

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}

function newKey(path: string): void {
  if (!existsSync(path))
    openssl(['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', path]);
}

function issue(dir: string, ca: Pair, name: string, subject: string, ext: string[]): Pair {
  const pair = { cert: join(dir, `${name}.crt`), key: join(dir, `${name}.key`) };
  if (existsSync(pair.cert) && existsSync(pair.key)) return pair;
  newKey(pair.key);
  const csr = join(dir, `${name}.csr`);
  const extFile = join(dir, `${name}.ext`);
  writeFileSync(extFile, ext.join('\n') + '\n');
  openssl(['req', '-new', '-key', pair.key, '-subj', subject, '-out', csr]);
  openssl([
    'x509',
    '-req',
    '-in',
    csr,
    '-CA',
    ca.cert,
    '-CAkey',
    ca.key,
    '-CAcreateserial',
    '-days',
    DAYS,
    '-sha256',
    '-extfile',
    extFile,
    '-out',
    pair.cert,
  ]);
  return pair;
}

/** Creates (or reuses) every certificate and key the control plane needs under `dir`. */
export function ensurePki(dir: string, apiserverSans: string[]): ControlPlanePki {
  mkdirSync(dir, { recursive: true, mode: 0o700 });
  const ca = { cert: join(dir, 'ca.crt'), key: join(dir, 'ca.key') };
  if (!existsSync(ca.cert)) {
    newKey(ca.key);
    openssl([
      'req',
      '-x509',
      '-new',
      '-key',
      ca.key,
      '-subj',
      '/CN=etcdfn-sandbox-ca',
      '-days',
      DAYS,
      '-sha256',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
      '-out',
      ca.cert,
    ]);
  }
  const server = [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature',
    'extendedKeyUsage=serverAuth',
  ];
  const client = [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature',
    'extendedKeyUsage=clientAuth',
  ];
  const sa = { key: join(dir, 'sa.key'), pub: join(dir, 'sa.pub') };
  if (!existsSync(sa.pub)) {
    newKey(sa.key);
    writeFileSync(sa.pub, execFileSync('openssl', ['pkey', '-in', sa.key, '-pubout']));
  }
  return {
    dir,
    ca,
    apiserver: issue(dir, ca, 'apiserver', '/CN=kube-apiserver', [
      ...server,
      `subjectAltName=${apiserverSans.join(',')}`,
    ]),
    admin: issue(dir, ca, 'admin', '/O=system:masters/CN=kubernetes-admin', client),
    controllerManager: issue(dir, ca, 'controller-manager', '/CN=system:kube-controller-manager', client),
    kubeletClient: issue(
      dir,
      ca,
      'apiserver-kubelet-client',
      '/O=kubeadm:cluster-admins/CN=kube-apiserver-kubelet-client',
      client,
    ),
    kubeletServing: issue(dir, ca, 'kubelet-serving', '/O=system:nodes/CN=system:node:sandbox', [
      ...server,
      'subjectAltName=IP:127.0.0.1,DNS:localhost',
    ]),
    serviceAccount: sa,
  };
}

/** A kubeconfig that authenticates with a client certificate, all data embedded. */
export function clientKubeconfig(
  server: string,
  ca: string,
  user: Pair,
  userName: string,
  namespace = 'default',
): string {
  const b64 = (path: string): string => readFileSync(path).toString('base64');
  return JSON.stringify(
    {
      apiVersion: 'v1',
      kind: 'Config',
      clusters: [{ name: 'sandbox', cluster: { server, 'certificate-authority-data': b64(ca) } }],
      users: [
        {
          name: userName,
          user: { 'client-certificate-data': b64(user.cert), 'client-key-data': b64(user.key) },
        },
      ],
      contexts: [{ name: 'sandbox', context: { cluster: 'sandbox', user: userName, namespace } }],
      'current-context': 'sandbox',
      preferences: {},
    },
    null,
    2,
  );
}
