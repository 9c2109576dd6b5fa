// The auto TLS provider's next step, from what the cluster's Secrets hold: create the CA, issue
// (or re-issue) one leaf, or nothing. Pure: the adapter (shared/reconcile/auto-tls.ts) reads the
// Secrets, asks this, does the one step and asks again.
import type { AutoCertificate } from '../../tls/auto-certificates.ts';
import type { CertificateFacts } from '../../tls/read.ts';

const DAY_MS = 24 * 60 * 60 * 1000;

export interface AutoTlsTimings {
  /** How long a leaf is valid; it is renewed once 2/3 of that has passed. */
  leafLifetimeMs: number;
  /** How long the CA is valid. It is not rotated: leaves keep chaining to it for its whole life. */
  caLifetimeMs: number;
}

export const LEAF_LIFETIME_ENV = 'ETCDFN_AUTO_TLS_LEAF_LIFETIME_SECONDS';

export function autoTlsTimingsFromEnv(env: NodeJS.ProcessEnv = process.env): AutoTlsTimings {
  const seconds = Number(env[LEAF_LIFETIME_ENV]);
  return {
    leafLifetimeMs: Number.isFinite(seconds) && seconds > 0 ? seconds * 1000 : 90 * DAY_MS,
    caLifetimeMs: 10 * 365 * DAY_MS,
  };
}

/** A Secret as the plan sees it: absent, present but not a certificate, or its certificate's facts. */
export type ObservedCertificate =
  { kind: 'missing' } | { kind: 'unreadable' } | { kind: 'read'; facts: CertificateFacts };

export interface AutoTlsObserved {
  now: Date;
  /**
   * The CA and leaf Secrets that exist but are not controlled by this EtcdCluster (a user's, or a
   * previous cluster's of the same name not yet garbage-collected): never used, never replaced.
   */
  foreign?: string[];
  ca: ObservedCertificate;
  /** Each desired leaf's Secret, read with the CA's certificate (facts.signedByCa is set). */
  leaves: { certificate: AutoCertificate; observed: ObservedCertificate }[];
}

export type IssueReason = 'missing' | 'unreadable' | 'other-ca' | 'names-changed' | 'renewal-due';

export type AutoTlsStep =
  | { kind: 'create-ca' }
  /** The CA Secret holds no usable CA; replacing it would orphan every leaf, so a person decides. */
  | { kind: 'ca-unusable'; message: string }
  /** Secrets of the auto TLS names that etcdfn did not create for this cluster: left alone, a person decides. */
  | { kind: 'secrets-not-ours'; secrets: string[]; message: string }
  | { kind: 'issue'; certificate: AutoCertificate; reason: IssueReason; caNotAfter: Date }
  | { kind: 'none'; nextRenewal?: Date };

/** When a certificate is due for renewal: 2/3 of the way through its validity. */
export function renewalTime(facts: Pick<CertificateFacts, 'notBefore' | 'notAfter'>): Date {
  const start = facts.notBefore.getTime();
  return new Date(start + Math.floor(((facts.notAfter.getTime() - start) * 2) / 3));
}

const sameSet = (a: string[], b: string[]): boolean =>
  a.length === b.length && [...a].sort().every((v, i) => v === [...b].sort()[i]);

function leafReason(
  certificate: AutoCertificate,
  observed: ObservedCertificate,
  now: Date,
): IssueReason | undefined {
  if (observed.kind !== 'read') return observed.kind;
  const { facts } = observed;
  if (facts.signedByCa === false) return 'other-ca';
  if (!sameSet(facts.dnsNames, certificate.dnsNames) || !sameSet(facts.ipAddresses, certificate.ipAddresses))
    return 'names-changed';
  if (renewalTime(facts) <= now) return 'renewal-due';
  return undefined;
}

export function planAutoTls(o: AutoTlsObserved): AutoTlsStep {
  if (o.leaves.length === 0) return { kind: 'none' };
  const foreign = [...(o.foreign ?? [])].sort();
  if (foreign.length > 0) {
    const list = foreign.join(', ');
    const one = foreign.length === 1;
    return {
      kind: 'secrets-not-ours',
      secrets: foreign,
      message: `Secret${one ? '' : 's'} ${list} ${one ? 'exists' : 'exist'} but ${one ? 'was' : 'were'} not created by etcdfn for this EtcdCluster (no controller reference to it), and auto TLS never uses or replaces a Secret it did not create: delete or rename ${one ? 'it' : 'them'} (etcdfn then issues its own), or set spec.tls to your own Secrets instead of auto`,
    };
  }
  if (o.ca.kind === 'missing') return { kind: 'create-ca' };
  if (o.ca.kind === 'unreadable' || o.ca.facts.notAfter <= o.now) {
    return {
      kind: 'ca-unusable',
      message:
        o.ca.kind === 'unreadable'
          ? 'the CA Secret holds no readable certificate and key; restore it from a backup, or delete it to have a new CA issued (every member restarts with new certificates)'
          : 'the CA has expired; delete its Secret to have a new CA issued (every member restarts with new certificates)',
    };
  }
  for (const { certificate, observed } of o.leaves) {
    const reason = leafReason(certificate, observed, o.now);
    if (reason) return { kind: 'issue', certificate, reason, caNotAfter: o.ca.facts.notAfter };
  }
  const renewals = o.leaves.flatMap(l => (l.observed.kind === 'read' ? [renewalTime(l.observed.facts)] : []));
  const next = renewals.sort((a, b) => a.getTime() - b.getTime())[0];
  return next ? { kind: 'none', nextRenewal: next } : { kind: 'none' };
}
