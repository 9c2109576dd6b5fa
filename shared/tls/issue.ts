// Making certificates for the auto TLS provider: a CA kept in a Secret and leaves signed by it.
// The encoding is @peculiar/x509's (a maintained X.509 library on WebCrypto), never ours; keys are
// ECDSA P-256, which etcd 3.4 and 3.5 (Go crypto/tls) and Node's TLS both accept.
import { webcrypto } from 'node:crypto';
// @peculiar/x509 resolves its algorithms through tsyringe, which needs the Reflect metadata API.
import 'reflect-metadata';
import * as x509 from '@peculiar/x509';

const ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;
const SIGNING = { name: 'ECDSA', hash: 'SHA-256' } as const;

/** A certificate and its private key, PEM encoded (the values of tls.crt and tls.key). */
export interface KeyPairPem {
  cert: string;
  key: string;
}

/** Which ends of a TLS connection the certificate may stand for (extended key usage). */
export type LeafUsage = 'server' | 'client';

export interface LeafRequest {
  commonName: string;
  dnsNames: string[];
  ipAddresses: string[];
  usages: LeafUsage[];
  notBefore: Date;
  notAfter: Date;
}

async function keyPair(): Promise<webcrypto.CryptoKeyPair> {
  return await webcrypto.subtle.generateKey(ALGORITHM, true, ['sign', 'verify']);
}

async function privateKeyPem(key: CryptoKey): Promise<string> {
  const der = await webcrypto.subtle.exportKey('pkcs8', key);
  return x509.PemConverter.encode(der, 'PRIVATE KEY');
}

// Random 16-byte serials with the top bit clear (RFC 5280: positive, at most 20 octets).
function serialNumber(): string {
  const bytes = webcrypto.getRandomValues(new Uint8Array(16));
  bytes[0] = (bytes[0] ?? 0) & 0x7f;
  return Buffer.from(bytes).toString('hex');
}

/** A self-signed CA that may sign leaves only (path length 0). */
export async function createCa(commonName: string, notBefore: Date, notAfter: Date): Promise<KeyPairPem> {
  const keys = await keyPair();
  const cert = await x509.X509CertificateGenerator.createSelfSigned(
    {
      serialNumber: serialNumber(),
      name: `CN=${commonName}`,
      notBefore,
      notAfter,
      keys,
      signingAlgorithm: SIGNING,
      extensions: [
        new x509.BasicConstraintsExtension(true, 0, true),
        new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
        await x509.SubjectKeyIdentifierExtension.create(keys.publicKey, false, webcrypto),
      ],
    },
    webcrypto,
  );
  return { cert: cert.toString('pem'), key: await privateKeyPem(keys.privateKey) };
}

/** A leaf signed by the CA, with the names and usages asked for. */
export async function issueLeaf(ca: KeyPairPem, request: LeafRequest): Promise<KeyPairPem> {
  const caCert = new x509.X509Certificate(ca.cert);
  const caKey = await webcrypto.subtle.importKey(
    'pkcs8',
    x509.PemConverter.decodeFirst(ca.key),
    ALGORITHM,
    false,
    ['sign'],
  );
  const keys = await keyPair();
  const names: x509.JsonGeneralNames = [
    ...request.dnsNames.map(value => ({ type: 'dns' as const, value })),
    ...request.ipAddresses.map(value => ({ type: 'ip' as const, value })),
  ];
  const usages = request.usages.map(u =>
    u === 'server' ? x509.ExtendedKeyUsage.serverAuth : x509.ExtendedKeyUsage.clientAuth,
  );
  const cert = await x509.X509CertificateGenerator.create(
    {
      serialNumber: serialNumber(),
      subject: `CN=${request.commonName}`,
      // The CA's subject as encoded, not re-encoded from text: Go finds a parent by the raw bytes, and
      // a CA made elsewhere (openssl writes UTF8String) must match the issuer byte for byte.
      issuer: caCert.subjectName,
      notBefore: request.notBefore,
      notAfter: request.notAfter,
      publicKey: keys.publicKey,
      signingKey: caKey,
      signingAlgorithm: SIGNING,
      extensions: [
        new x509.BasicConstraintsExtension(false, undefined, true),
        new x509.KeyUsagesExtension(
          x509.KeyUsageFlags.digitalSignature | x509.KeyUsageFlags.keyEncipherment,
          true,
        ),
        new x509.ExtendedKeyUsageExtension(usages, false),
        ...(names.length ? [new x509.SubjectAlternativeNameExtension(names, false)] : []),
        await x509.AuthorityKeyIdentifierExtension.create(caCert, false, webcrypto),
      ],
    },
    webcrypto,
  );
  return { cert: cert.toString('pem'), key: await privateKeyPem(keys.privateKey) };
}
