// The upload against a store that honours `If-None-Match: *` (AWS S3 does; s3rver ignores it, so a
// small proxy in front of s3rver honours it as S3 does: 412 PreconditionFailed when the key exists,
// on a PUT and on the CompleteMultipartUpload of a multipart upload). The proxy also plays the other
// writer in the race the HEAD check cannot close: right after etcdfn's HEAD finds the key free, it
// stores someone else's object there. The upload must end object-exists and leave that object as it
// is, byte for byte.
import assert from 'node:assert/strict';
import { createServer, request, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { after, before, describe, it } from 'node:test';
import { PutObjectCommand } from '@aws-sdk/client-s3';
import { Etcd3 } from 'etcd3';
import { snapshot } from '../../shared/etcd/snapshot.ts';
import { parseAllowList } from '../../shared/s3/endpoint-policy.ts';
import { snapshotTarget } from '../../shared/s3/location.ts';
import { uploadStream } from '../../shared/s3/upload.ts';
import { EtcdTestCluster } from '../support/etcd-process.ts';
import { S3RVER_CREDENTIALS, sha256, startS3rver, type TestS3 } from '../support/s3rver.ts';

const BUCKET = 'backups';
const ALLOW = parseAllowList('http://127.0.0.0/8').entries;
const PRECONDITION_FAILED =
  '<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>PreconditionFailed</Code><Message>At least one of the pre-conditions you specified did not hold</Message><Condition>If-None-Match</Condition></Error>';

interface Proxy {
  endpoint: string;
  /** Keys the proxy answered 412 for. */
  refused: string[];
  /** The next HEAD that finds this key free is followed by someone else's PUT of it. */
  raceOn(key: string, body: Buffer): void;
  close(): Promise<void>;
}

function forward(upstream: URL, req: IncomingMessage, res: ServerResponse, body?: Buffer) {
  const out = request(
    { host: upstream.hostname, port: upstream.port, method: req.method, path: req.url, headers: req.headers },
    up => {
      res.writeHead(up.statusCode ?? 502, up.headers);
      up.pipe(res);
    },
  );
  out.on('error', () => res.destroy());
  if (body) out.end(body);
  else req.pipe(out);
}

async function conditionalProxy(s3: TestS3): Promise<Proxy> {
  const upstream = new URL(s3.endpoint);
  const refused: string[] = [];
  const races = new Map<string, Buffer>();
  const exists = async (key: string) => {
    try {
      await s3.download(BUCKET, key);
      return true;
    } catch {
      return false;
    }
  };
  const server: Server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    const key = decodeURIComponent(url.pathname.split('/').slice(2).join('/'));
    const conditional = req.headers['if-none-match'] === '*';
    const isPut = req.method === 'PUT' && !url.searchParams.has('partNumber');
    const isComplete = req.method === 'POST' && url.searchParams.has('uploadId');
    void (async () => {
      if (req.method === 'HEAD' && races.has(key)) {
        const theirs = races.get(key)!;
        races.delete(key);
        // etcdfn's HEAD sees the key free (forwarded first), then the other writer stores its object.
        const probe = request(
          {
            host: upstream.hostname,
            port: upstream.port,
            method: 'HEAD',
            path: req.url,
            headers: req.headers,
          },
          up => {
            up.resume();
            void s3.client.send(new PutObjectCommand({ Bucket: BUCKET, Key: key, Body: theirs })).then(
              () => {
                res.writeHead(up.statusCode ?? 502, up.headers);
                res.end();
              },
              () => res.destroy(),
            );
          },
        );
        probe.on('error', () => res.destroy());
        probe.end();
        return;
      }
      if (conditional && (isPut || isComplete) && (await exists(key))) {
        req.resume();
        refused.push(key);

        res.writeHead(412, {
          'content-type': 'application/xml',
          'content-length': Buffer.byteLength(PRECONDITION_FAILED),
        });
        res.end(PRECONDITION_FAILED);
        return;
      }
      forward(upstream, req, res);
    })();
  });
  await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    refused,
    raceOn: (key, body) => races.set(key, body),
    close: () => new Promise(resolve => server.close(() => resolve())),
  };
}

describe('upload to a store that honours If-None-Match, racing another writer', { timeout: 120_000 }, () => {
  let etcd: EtcdTestCluster;
  let s3: TestS3;
  let proxy: Proxy;

  before(async () => {
    [etcd, s3] = await Promise.all([EtcdTestCluster.start({ minor: '3.5', size: 1 }), startS3rver([BUCKET])]);
    const writer = new Etcd3({ hosts: etcd.endpoints });
    try {
      // ~6 MiB of values: one 5 MiB part plus a second, so the multipart case has parts.
      await Promise.all(
        Array.from({ length: 100 }, (_, n) =>
          writer
            .put(`race/${n}`)
            .value('x'.repeat(64 * 1024))
            .exec(),
        ),
      );
    } finally {
      writer.close();
    }
    proxy = await conditionalProxy(s3);
  });
  after(async () => {
    await proxy?.close();
    await Promise.all([etcd?.cleanup(), s3?.stop()]);
  });

  for (const [how, partSizeBytes] of [
    ['one PUT', 64 * 1024 * 1024],
    ['a multipart upload', 5 * 1024 * 1024],
  ] as const) {
    it(`${how}: the other writer's object, stored after etcdfn's HEAD, is never overwritten`, async () => {
      const name = how === 'one PUT' ? 'single' : 'multi';
      const target = snapshotTarget(
        { endpoint: proxy.endpoint, bucket: BUCKET, key: 'etcd/', credentialsSecretRef: { name: 'unused' } },
        { namespace: 'ns', cluster: 'demo', name, uid: `${name}-0000-uid` },
      );
      const key = target.key;
      const theirs = Buffer.from(`someone else's object at ${key}`);
      proxy.raceOn(key, theirs);
      const opened = await snapshot(etcd.endpoints[0]);
      assert.equal(opened.kind, 'ok');
      if (opened.kind !== 'ok') return;
      const result = await uploadStream(target, S3RVER_CREDENTIALS, opened.stream, {
        allowList: ALLOW,
        partSizeBytes,
      });
      assert.equal(result.kind, 'object-exists', JSON.stringify(result));
      assert.ok(proxy.refused.includes(key), 'the store refused the conditional write');
      assert.equal(sha256(await s3.download(BUCKET, key)), sha256(theirs), 'their object is intact');
    });
  }
});
