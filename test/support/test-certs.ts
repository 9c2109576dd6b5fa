// Certificates for tests, made with the openssl command line: a CA, server certificates with the
// SANs a test names, and client certificates. Files are written to `dir`; the contents are returned.
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';

export interface CertFiles {
  cert: string;
  key: string;
}

export class TestCA {
  readonly cert: string;
  readonly key: string;
  private serial = 1;

  private readonly dir: string;
  readonly name: string;

  constructor(dir: string, name = 'ca') {
    this.dir = dir;
    this.name = name;
    this.key = join(dir, `${name}.key`);
    this.cert = join(dir, `${name}.crt`);
    openssl([
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      this.key,
      '-out',
      this.cert,
      '-days',
      '2',
      '-subj',
      `/CN=${name}`,
    ]);
  }

  /** A leaf certificate signed by this CA; `sans` like ['DNS:x.svc', 'IP:127.0.0.1']. */
  issue(file: string, cn: string, sans: string[], usage: 'server' | 'client' | 'both' = 'both'): CertFiles {
    const key = join(this.dir, `${file}.key`);
    const csr = join(this.dir, `${file}.csr`);
    const cert = join(this.dir, `${file}.crt`);
    const ext = join(this.dir, `${file}.ext`);
    const eku = { server: 'serverAuth', client: 'clientAuth', both: 'serverAuth,clientAuth' }[usage];
    writeFileSync(
      ext,
      [`extendedKeyUsage=${eku}`, ...(sans.length ? [`subjectAltName=${sans.join(',')}`] : [])].join('\n'),
    );
    openssl([
      'req',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      key,
      '-out',
      csr,
      '-subj',
      `/CN=${cn}`,
    ]);
    openssl([
      'x509',
      '-req',
      '-in',
      csr,
      '-CA',
      this.cert,
      '-CAkey',
      this.key,
      '-out',
      cert,
      '-days',
      '1',
      '-set_serial',
      String(1000 + this.serial++),
      '-extfile',
      ext,
    ]);
    return { cert, key };
  }

  pem(): Buffer {
    return readFileSync(this.cert);
  }
}

function openssl(args: string[]): void {
  execFileSync('openssl', args, { stdio: ['ignore', 'ignore', 'pipe'] });
}
