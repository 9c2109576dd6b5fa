// A stand-in for cert-manager in the sandbox: signs each Certificate into its Secret the way
// cert-manager lays it out (kubernetes.io/tls with tls.crt, tls.key, ca.crt and the
// cert-manager.io/* annotations), sets Ready, notAfter and renewalTime (notAfter - renewBefore, or
// 2/3 of the duration as cert-manager's default), and signs again when renewalTime passes, the spec
// changes, or a renewal is asked for the way `cmctl renew` does (an Issuing=True condition).
// A CA Issuer or ClusterIssuer object (spec.ca.secretName; a ClusterIssuer's Secret in the
// cert-manager namespace) signs with the CA in that Secret. An issuer with no such object gets its
// own CA, kept in memory for the sandbox's life (so tests without Issuer objects still get signed).
import { createHash } from 'node:crypto';
import { CustomObjectsApi, type KubeConfig, type V1Secret } from '@kubernetes/client-node';
import type { CertManagerCertificate } from '../../shared/builders/cert-manager-certificate.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { createCa, issueLeaf, type KeyPairPem, type LeafUsage } from '../../shared/tls/issue.ts';

type Certificate = CertManagerCertificate &
  KubeObject & {
    spec: { duration?: string; renewBefore?: string };
    status?: { conditions?: { type: string; status: string; reason?: string }[] };
  };
type Secret = V1Secret & KubeObject;

const SPEC_HASH = 'sandbox.etcdfn.io/spec-hash';
const DEFAULT_DURATION_MS = 90 * 24 * 3600 * 1000;
/** cert-manager's default --cluster-resource-namespace: where a ClusterIssuer's CA Secret lives. */
const CLUSTER_RESOURCE_NAMESPACE = 'cert-manager';

/** A Go duration as cert-manager writes them ("2160h", "90m", "1h30m", "45s"). */
export function parseDuration(text: string | undefined): number | undefined {
  if (!text) return undefined;
  const parts = [...text.matchAll(/(\d+(?:\.\d+)?)(h|m|s)/g)];
  if (!parts.length || parts.map(p => p[0]).join('') !== text) return undefined;
  const unit = { h: 3600_000, m: 60_000, s: 1000 } as const;
  return parts.reduce((sum, p) => sum + Number(p[1]) * unit[p[2] as 'h' | 'm' | 's'], 0);
}

export class SandboxCertManager {
  private readonly cas = new Map<string, Promise<KeyPairPem>>();

  private readonly kube: KubeObjects;
  // KubeObjects writes status for etcdfn.io kinds only; cert-manager's go through the custom objects API.
  private readonly custom: CustomObjectsApi;
  private readonly now: () => Date;

  constructor(kc: KubeConfig, now: () => Date = () => new Date()) {
    this.kube = new KubeObjects(kc);
    this.custom = kc.makeApiClient(CustomObjectsApi);
    this.now = now;
  }

  /** The CA a CA Issuer/ClusterIssuer object names in spec.ca.secretName, when there is one. */
  private async issuerCa(
    issuer: { kind?: string; name: string },
    namespace: string,
  ): Promise<KeyPairPem | undefined> {
    const cluster = issuer.kind === 'ClusterIssuer';
    let object: { spec?: { ca?: { secretName?: string } } };
    try {
      object = (
        cluster
          ? await this.custom.getClusterCustomObject({
              group: 'cert-manager.io',
              version: 'v1',
              plural: 'clusterissuers',
              name: issuer.name,
            })
          : await this.custom.getNamespacedCustomObject({
              group: 'cert-manager.io',
              version: 'v1',
              namespace,
              plural: 'issuers',
              name: issuer.name,
            })
      ) as typeof object;
    } catch {
      return undefined;
    }
    const secretName = object.spec?.ca?.secretName;
    if (!secretName) return undefined;
    const secret = await this.kube.find<Secret>({
      apiVersion: 'v1',
      kind: 'Secret',
      namespace: cluster ? CLUSTER_RESOURCE_NAMESPACE : namespace,
      name: secretName,
    });
    const pem = (key: string): string => Buffer.from(secret?.data?.[key] ?? '', 'base64').toString();
    if (!pem('tls.crt') || !pem('tls.key')) return undefined;
    return { cert: pem('tls.crt'), key: pem('tls.key') };
  }

  /** The CA an issuer signs with (same for the sandbox's life, so trust survives renewals). */
  caFor(issuer: { kind?: string; name: string }): Promise<KeyPairPem> {
    const key = `${issuer.kind ?? 'Issuer'}/${issuer.name}`;
    let ca = this.cas.get(key);
    if (!ca) {
      const now = this.now();
      ca = createCa(
        `sandbox cert-manager ${key}`,
        new Date(now.getTime() - 60_000),
        new Date(now.getTime() + 10 * DEFAULT_DURATION_MS),
      );
      this.cas.set(key, ca);
    }
    return ca;
  }

  /** Signs every Certificate that needs it; returns the names signed. */
  async reconcileAll(): Promise<string[]> {
    const signed: string[] = [];
    for (const cert of await this.kube.list<Certificate>('cert-manager.io/v1', 'Certificate', '')) {
      if (await this.reconcile(cert)) signed.push(`${cert.metadata.namespace}/${cert.metadata.name}`);
    }
    return signed;
  }

  private async reconcile(cert: Certificate): Promise<boolean> {
    const namespace = cert.metadata.namespace ?? 'default';
    const hash = createHash('sha256').update(JSON.stringify(cert.spec)).digest('hex').slice(0, 16);
    const ref = { apiVersion: 'v1', kind: 'Secret', namespace, name: cert.spec.secretName };
    const secret = await this.kube.find<Secret>(ref);
    const renewal = Date.parse(cert.status?.renewalTime ?? '');
    const now = this.now();
    // `cmctl renew` asks for a renewal by setting Issuing=True (reason ManuallyTriggered).
    const asked = cert.status?.conditions?.some(c => c.type === 'Issuing' && c.status === 'True');
    const due =
      !secret || secret.metadata.annotations?.[SPEC_HASH] !== hash || !(renewal > now.getTime()) || asked;
    if (!due) return false;

    const ca =
      (await this.issuerCa(cert.spec.issuerRef, namespace)) ?? (await this.caFor(cert.spec.issuerRef));
    const durationMs = parseDuration(cert.spec.duration) ?? DEFAULT_DURATION_MS;
    const notBefore = new Date(now.getTime() - 60_000);
    const notAfter = new Date(now.getTime() + durationMs);
    const usages: LeafUsage[] = [];
    if (cert.spec.usages.includes('server auth')) usages.push('server');
    if (cert.spec.usages.includes('client auth')) usages.push('client');
    const pair = await issueLeaf(ca, {
      commonName: cert.spec.commonName,
      dnsNames: cert.spec.dnsNames ?? [],
      ipAddresses: cert.spec.ipAddresses ?? [],
      usages,
      notBefore,
      notAfter,
    });
    const b64 = (s: string): string => Buffer.from(s).toString('base64');
    const body: Secret = {
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/tls',
      metadata: {
        name: cert.spec.secretName,
        namespace,
        annotations: {
          'cert-manager.io/certificate-name': cert.metadata.name ?? '',
          'cert-manager.io/issuer-name': cert.spec.issuerRef.name,
          'cert-manager.io/issuer-kind': cert.spec.issuerRef.kind,
          'cert-manager.io/issuer-group': 'cert-manager.io',
          'cert-manager.io/common-name': cert.spec.commonName,
          'cert-manager.io/alt-names': (cert.spec.dnsNames ?? []).join(','),
          'cert-manager.io/ip-sans': (cert.spec.ipAddresses ?? []).join(','),
          [SPEC_HASH]: hash,
        },
      },
      data: { 'tls.crt': b64(pair.cert), 'tls.key': b64(pair.key), 'ca.crt': b64(ca.cert) },
    };
    const written = secret
      ? await this.kube.replace<Secret>({
          ...body,
          metadata: { ...secret.metadata, annotations: body.metadata.annotations },
        })
      : await this.kube.create<Secret>(body);
    if (written.kind !== 'written' && written.kind !== 'created') return false;

    const renewBefore = parseDuration(cert.spec.renewBefore);
    const renewalTime =
      renewBefore !== undefined && renewBefore < durationMs
        ? new Date(notAfter.getTime() - renewBefore)
        : new Date(notBefore.getTime() + ((notAfter.getTime() - notBefore.getTime()) * 2) / 3);
    const iso = (d: Date): string => d.toISOString().replace(/\.\d{3}Z$/, 'Z');
    await this.custom.replaceNamespacedCustomObjectStatus({
      group: 'cert-manager.io',
      version: 'v1',
      namespace,
      plural: 'certificates',
      name: cert.metadata.name ?? '',
      body: {
        ...cert,
        status: {
          conditions: [{ type: 'Ready', status: 'True' }],
          notBefore: iso(notBefore),
          notAfter: iso(notAfter),
          renewalTime: iso(renewalTime),
          revision: ((cert.status as { revision?: number } | undefined)?.revision ?? 0) + 1,
        },
      },
    });
    return true;
  }

  /** Signs on a fixed cadence until stopped (the sandbox's loop; tests call reconcileAll). */
  start(intervalMs = 500): () => void {
    let running = true;
    let busy = false;
    const timer = setInterval(() => {
      if (!running || busy) return;
      busy = true;
      this.reconcileAll()
        .catch(() => undefined)
        .finally(() => (busy = false));
    }, intervalMs);
    return () => {
      running = false;
      clearInterval(timer);
    };
  }
}
