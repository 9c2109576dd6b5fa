// A small in-memory S3 on loopback for unit tests of run-snapshot's I/O (shared/reconcile/snapshot.ts,
// schedule.ts): path-style PUT (refused with 412 under If-None-Match: * when the key exists), HEAD,
// GET (If-Match honoured) and DELETE (If-Match honoured), the owner metadata kept with the object.
// Each request is recorded as "METHOD bucket/key"; `fail` makes the next request of a method answer
// an S3 error, as a real store cannot on cue. The real store's behaviour is s3rver's, in
// test/integration/s3-snapshot.test.ts.
import { createHash } from 'node:crypto';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { OWNER_METADATA } from '../../shared/s3/location.ts';

const META = `x-amz-meta-${OWNER_METADATA}`;

export interface StoredObject {
  body: Buffer;
  etag: string;
  owner?: string;
}

const etagOf = (b: Buffer) => `"${createHash('md5').update(b).digest('hex')}"`;

export class FakeS3 {
  readonly objects = new Map<string, StoredObject>();
  readonly requests: string[] = [];
  private readonly failures = new Map<string, { code: number; xmlCode: string }[]>();
  private server: Server | undefined;
  endpoint = '';

  static async start(): Promise<FakeS3> {
    const s3 = new FakeS3();
    s3.server = createServer((req, res) => s3.answer(req, res));
    await new Promise<void>(resolve => s3.server!.listen(0, '127.0.0.1', resolve));
    s3.endpoint = `http://127.0.0.1:${(s3.server.address() as AddressInfo).port}`;
    return s3;
  }

  async stop(): Promise<void> {
    this.server?.closeAllConnections();
    await new Promise(resolve => this.server?.close(resolve));
  }

  reset(): void {
    this.objects.clear();
    this.requests.length = 0;
    this.failures.clear();
  }

  /** Stores `body` at bucket/key, as if another upload had put it there. */
  put(path: string, body: Buffer, owner?: string): StoredObject {
    const stored = { body, etag: etagOf(body), ...(owner && { owner }) };
    this.objects.set(path, stored);
    return stored;
  }

  /** The next `method` request answers `code` with the S3 error `xmlCode`. */
  fail(method: string, code: number, xmlCode: string): void {
    this.failures.set(method, [...(this.failures.get(method) ?? []), { code, xmlCode }]);
  }

  private answer(req: IncomingMessage, res: ServerResponse): void {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const method = req.method ?? '';
      const path = decodeURIComponent((req.url ?? '').split('?')[0].slice(1));
      this.requests.push(`${method} ${path}`);
      const failure = this.failures.get(method)?.shift();
      if (failure) return xmlError(res, failure.code, failure.xmlCode);
      const have = this.objects.get(path);
      const ifMatch = req.headers['if-match'];
      switch (method) {
        case 'HEAD':
          if (!have) return void res.writeHead(404).end();
          return void res
            .writeHead(200, {
              'content-length': have.body.length,
              etag: have.etag,
              ...(have.owner && { [META]: have.owner }),
            })
            .end();
        case 'GET':
          if (!have) return xmlError(res, 404, 'NoSuchKey');
          if (ifMatch !== undefined && ifMatch !== have.etag) return xmlError(res, 412, 'PreconditionFailed');
          return void res
            .writeHead(200, {
              'content-length': have.body.length,
              etag: have.etag,
              ...(have.owner && { [META]: have.owner }),
            })
            .end(have.body);
        case 'PUT': {
          if (req.headers['if-none-match'] === '*' && have) return xmlError(res, 412, 'PreconditionFailed');
          const stored = this.put(path, Buffer.concat(chunks), req.headers[META] as string | undefined);
          return void res.writeHead(200, { etag: stored.etag }).end();
        }
        case 'DELETE':
          if (ifMatch !== undefined && have && have.etag !== ifMatch)
            return xmlError(res, 412, 'PreconditionFailed');
          this.objects.delete(path);
          return void res.writeHead(204).end();
        default:
          return xmlError(res, 405, 'MethodNotAllowed');
      }
    });
  }
}

function xmlError(res: ServerResponse, code: number, xmlCode: string): void {
  const xml = `<?xml version="1.0"?><Error><Code>${xmlCode}</Code><Message>${xmlCode} here</Message></Error>`;
  res
    .writeHead(code, { 'content-type': 'application/xml', 'content-length': Buffer.byteLength(xml) })
    .end(xml);
}

/** Bytes shaped as etcd's Maintenance snapshot: whole 512-byte sectors, then their SHA-256. */
export function snapshotBytes(sectors = 2, fill = 7): Buffer {
  const body = Buffer.alloc(512 * sectors, fill);
  return Buffer.concat([body, createHash('sha256').update(body).digest()]);
}
