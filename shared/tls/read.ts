// What a PEM certificate says, read with Node's own X.509 parser: its validity (for rotation and
// status) and its names (to notice a certificate that no longer covers what it must).
import { X509Certificate } from 'node:crypto';

export interface CertificateFacts {
  notBefore: Date;
  notAfter: Date;
  dnsNames: string[];
  ipAddresses: string[];
  /** Whether the CA given alongside signed it; undefined when no CA was given. */
  signedByCa?: boolean;
}

/** The certificate's facts, or undefined when the text is not a certificate. */
export function readCertificate(pem: string, caPem?: string): CertificateFacts | undefined {
  let cert: X509Certificate;
  try {
    cert = new X509Certificate(pem);
  } catch {
    return undefined;
  }
  const facts: CertificateFacts = {
    notBefore: new Date(cert.validFrom),
    notAfter: new Date(cert.validTo),
    ...subjectAltNames(cert.subjectAltName),
  };
  if (caPem !== undefined) facts.signedByCa = signedBy(cert, caPem);
  return facts;
}

function signedBy(cert: X509Certificate, caPem: string): boolean {
  try {
    const ca = new X509Certificate(caPem);
    return cert.checkIssued(ca) && cert.verify(ca.publicKey);
  } catch {
    return false;
  }
}

// Node prints SANs as "DNS:a, DNS:b, IP Address:127.0.0.1".
function subjectAltNames(text: string | undefined): { dnsNames: string[]; ipAddresses: string[] } {
  const dnsNames: string[] = [];
  const ipAddresses: string[] = [];
  for (const part of (text ?? '').split(', ')) {
    if (part.startsWith('DNS:')) dnsNames.push(part.slice(4));
    else if (part.startsWith('IP Address:')) ipAddresses.push(canonicalIp(part.slice(11)));
  }
  return { dnsNames, ipAddresses };
}

// Node prints IPv6 in full (0:0:0:0:0:0:0:1); the URL parser gives the short form (::1).
function canonicalIp(ip: string): string {
  if (!ip.includes(':')) return ip;
  try {
    return new URL(`http://[${ip}]/`).hostname.slice(1, -1);
  } catch {
    return ip;
  }
}
