// Before each cluster reconcile: keep the auto TLS certificates issued and fresh (so they exist
// before the first member Pod mounts them), then read every certificate Secret's expiry for status.
import type { V1Secret } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import { tlsSecretNames } from '../tls/secret-names.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { secretValues } from '../k8s/secrets.ts';
import { autoTlsTimingsFromEnv } from '../plan/tls/auto-tls.ts';
import type { CertificateObservation, ObservedCertificateSecret } from '../plan/tls/types.ts';
import type { Context } from '../runtime/context.ts';
import { autoCertificates } from '../tls/auto-certificates.ts';
import { readCertificate } from '../tls/read.ts';
import type { EventContent } from '../builders/k8s-event.ts';
import type { AutoTlsStep } from '../plan/tls/auto-tls.ts';
import { ensureAutoTls } from './auto-tls.ts';
import { ensureCertManagerCertificates } from './cert-manager.ts';
import { recordEvent } from './record-event.ts';

const FUNCTION = 'reconcile-cluster';

const WHY: Record<string, string> = {
  missing: 'first issue',
  unreadable: 'the Secret held no readable certificate',
  'other-ca': 'it was signed by another CA',
  'names-changed': 'its names no longer matched the cluster',
  'renewal-due': 'two thirds of its validity had passed',
};

/** The Event a written step leaves on the cluster (names and reasons only, never key material). */
function issuedEvent(step: AutoTlsStep): EventContent {
  if (step.kind === 'issue')
    return {
      type: 'Normal',
      reason: 'CertificateIssued',
      message: `issued the ${step.certificate.role} certificate into Secret ${step.certificate.secret} (${WHY[step.reason] ?? step.reason})`,
    };
  return {
    type: 'Normal',
    reason: 'CertificateAuthorityCreated',
    message: 'created the cluster CA for auto TLS',
  };
}

/** The certificates as they are once kept: what the plan makes status.certificates from. */
export type KeptCertificates = CertificateObservation;

export async function keepCertificates(ctx: Context, cluster: EtcdCluster): Promise<KeptCertificates> {
  const names = tlsSecretNames(cluster);
  const wanted: Omit<ObservedCertificateSecret, 'facts'>[] = [];
  const auto = new Set(autoCertificates(cluster).map(c => c.secret));
  if (names.clientServer)
    wanted.push({ secret: names.clientServer, role: 'server', issuedByOperator: false });
  if (names.operatorClient)
    wanted.push({ secret: names.operatorClient, role: 'operator-client', issuedByOperator: false });
  if (names.peer) wanted.push({ secret: names.peer, role: 'peer', issuedByOperator: false });
  if (wanted.length === 0) return { observed: [] };

  let problem: KeptCertificates['problem'];
  if (auto.size) {
    const pass = await ensureAutoTls(ctx.kube, cluster, autoTlsTimingsFromEnv(), ctx.now());
    if (pass.last.kind === 'ca-unusable')
      problem = {
        reason: 'CertificateAuthorityUnusable',
        message: `auto TLS cannot issue certificates: ${pass.last.message}`,
      };
    if (pass.last.kind === 'secrets-not-ours')
      problem = {
        reason: 'SecretNotOwned',
        message: `auto TLS cannot issue certificates: ${pass.last.message}`,
      };
    for (const step of pass.written) await recordEvent(ctx, cluster, issuedEvent(step), FUNCTION);
  }
  for (const name of await ensureCertManagerCertificates(ctx.kube, cluster))
    await recordEvent(
      ctx,
      cluster,
      {
        type: 'Normal',
        reason: 'CertificateRequested',
        message: `asked cert-manager for Certificate ${name}`,
      },
      FUNCTION,
    );
  const namespace = cluster.metadata.namespace ?? 'default';
  const observed = await Promise.all(
    wanted.map(async w => {
      const secret = await ctx.kube.find<V1Secret & KubeObject>({
        apiVersion: 'v1',
        kind: 'Secret',
        namespace,
        name: w.secret,
      });
      const pem = secret ? secretValues(secret)['tls.crt'] : undefined;
      const facts = pem ? readCertificate(pem) : undefined;
      return { ...w, issuedByOperator: auto.has(w.secret), ...(facts && { facts }) };
    }),
  );
  return problem ? { observed, problem } : { observed };
}
