// The restore's fetch step (shared/restore/fetch.ts) on its own, fast: run-once (the marker of a
// complete restore means live data, never restored over), a half-done attempt thrown away, and every
// check before etcd's restore writes a byte (room, SHA-256, etcd's integrity hash, the etcd minor, a
// short read). Snapshots are synthetic: bytes carrying the meta keys the version scan looks for, with
// the SHA-256 trailer `snapshot save` appends, so the checks see exactly what they see in a real one
// (test/integration/restore-agent.test.ts runs real etcd snapshots through fetch, restore and
// commit). The S3 source is a scripted store on loopback, so it can answer short, refuse, or break
// off mid-body on cue, which s3rver cannot.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import {
  existsSync,
  mkdirSync,
  mkdtempSync,
  readdirSync,
  readFileSync,
  rmSync,
  statfsSync,
  truncateSync,
  writeFileSync,
} from 'node:fs';
import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { emptySnapshot } from '../../shared/restore/empty-snapshot.ts';
import {
  fetchSnapshot,
  s3Failure,
  sourceErrorText,
  type FetchRequest,
  type FetchSource,
} from '../../shared/restore/fetch.ts';
import { RestoreFailure, restorePaths } from '../../shared/restore/layout.ts';

process.env.AWS_SDK_JS_NODE_VERSION_SUPPORT_WARNING_DISABLED ??= 'true';

const sha256 = (b: Buffer) => createHash('sha256').update(b).digest('hex');

/** A file `snapshot save` could have written: 512-byte pages, then the SHA-256 of them. */
function snapshotBytes(meta: string, pages = 400): Buffer {
  const body = Buffer.alloc(pages * 512, 0x5a);
  body.write(meta, 70_000, 'latin1');
  return Buffer.concat([body, createHash('sha256').update(body).digest()]);
}
const SNAP_34 = snapshotBytes('');
const SNAP_35 = snapshotBytes('confState{"voters":[1]}');
const SNAP_36 = snapshotBytes('storageVersion3.6.0');

let root = '';
before(() => {
  root = mkdtempSync(join(tmpdir(), 'etcdfn-fetch-'));
});
after(() => rmSync(root, { recursive: true, force: true }));

let n = 0;
/** A fresh data directory and a file source holding `bytes`. */
function setup(bytes: Buffer = SNAP_35) {
  const d = join(root, `case-${n++}`);
  const mount = join(d, 'mount');
  mkdirSync(join(d, 'data'), { recursive: true });
  mkdirSync(mount);
  writeFileSync(join(mount, 'snap.db'), bytes);
  const source: FetchSource = {
    kind: 'file',
    mount,
    path: join(mount, 'snap.db'),
    display: 'pvc://b/snap.db',
  };
  const paths = restorePaths(join(d, 'data'));
  const request = (extra: Partial<FetchRequest> = {}): FetchRequest => ({
    paths,
    source,
    etcdVersion: '3.5.16',
    ...extra,
  });
  return { paths, source, request, mount };
}

async function refusal(req: FetchRequest): Promise<RestoreFailure> {
  try {
    await fetchSnapshot(req);
  } catch (err) {
    assert.ok(err instanceof RestoreFailure, String(err));
    // Whatever was refused, nothing is left for etcd's restore to restore from.
    assert.equal(existsSync(req.paths.snapshotFile), false, 'no snapshot file after a refusal');
    assert.equal(existsSync(req.paths.marker), false);
    return err;
  }
  throw new Error('the fetch did not refuse');
}

describe('restore fetch: run once', () => {
  it('with the marker of a complete restore, the live data stays and the restore gets an empty snapshot', async () => {
    const { paths, request, mount } = setup();
    writeFileSync(paths.marker, '');
    mkdirSync(join(paths.dataDir, 'member', 'snap'), { recursive: true });
    writeFileSync(join(paths.dataDir, 'member', 'snap', 'db'), 'live data');
    mkdirSync(paths.workDir, { recursive: true });
    writeFileSync(join(paths.workDir, 'leftover'), 'from the first restore');
    rmSync(join(mount, 'snap.db')); // the source is gone by now: it must not even be looked at
    assert.deepEqual(await fetchSnapshot(request()), { kind: 'already-restored' });
    assert.equal(readFileSync(join(paths.dataDir, 'member', 'snap', 'db'), 'utf8'), 'live data');
    assert.deepEqual(readFileSync(paths.snapshotFile), emptySnapshot());
    assert.match(readFileSync(paths.skipFile, 'utf8'), /restored before; nothing is restored again/);
    assert.deepEqual(readdirSync(paths.workDir).sort(), ['skip', 'snapshot.db']);
  });

  it('after the commit (the work directory gone), a restarted Pod gets the empty snapshot too', async () => {
    const { paths, request } = setup();
    writeFileSync(paths.marker, '');
    assert.equal(existsSync(paths.workDir), false);
    assert.deepEqual(await fetchSnapshot(request()), { kind: 'already-restored' });
    assert.deepEqual(readFileSync(paths.snapshotFile), emptySnapshot());
  });

  it('without the marker, a half-done attempt is thrown away whole and the snapshot fetched again', async () => {
    const { paths, request } = setup();
    mkdirSync(join(paths.dataDir, 'member', 'wal'), { recursive: true });
    writeFileSync(join(paths.dataDir, 'member', 'wal', 'x.wal'), 'half restored');
    writeFileSync(join(paths.dataDir, 'keep-me'), 'not the restore’s');
    mkdirSync(join(paths.workDir, 'data'), { recursive: true });
    writeFileSync(`${paths.snapshotFile}.partial`, 'partial');
    writeFileSync(paths.skipFile, 'stale');
    const fetched = await fetchSnapshot(request());
    assert.deepEqual(fetched, {
      kind: 'fetched',
      sizeBytes: SNAP_35.length,
      sha256: sha256(SNAP_35),
      snapshotMinor: '3.5',
    });
    assert.equal(existsSync(join(paths.dataDir, 'member')), false);
    assert.equal(readFileSync(join(paths.dataDir, 'keep-me'), 'utf8'), 'not the restore’s');
    assert.deepEqual(readdirSync(paths.workDir), ['snapshot.db']);
    assert.deepEqual(readFileSync(paths.snapshotFile), SNAP_35);
  });
});

describe('restore fetch: the checks before the restore', () => {
  it('the recorded SHA-256 must match, in either case; another one is ChecksumMismatch naming both', async () => {
    const ok = setup();
    const upper = sha256(SNAP_35).toUpperCase();
    assert.equal((await fetchSnapshot(ok.request({ sha256: upper }))).kind, 'fetched');
    const bad = setup();
    const other = `${'AB'.repeat(32)}`;
    const f = await refusal(bad.request({ sha256: other }));
    assert.equal(f.reason, 'ChecksumMismatch');
    assert.equal(
      f.message,
      `pvc://b/snap.db has SHA-256 ${sha256(SNAP_35)}, not the expected ${other.toLowerCase()}: the file is not the ` +
        'snapshot that was recorded (replaced or damaged); point the restore at an intact snapshot or fix source.sha256',
    );
    assert.equal(
      existsSync(`${bad.paths.snapshotFile}.partial`),
      true,
      'the partial file is overwritten next time',
    );
  });

  it('room for twice the snapshot: exactly twice is enough, a byte less is InsufficientSpace', async () => {
    const size = SNAP_35.length;
    const asked: string[] = [];
    const enough = setup();
    const free = (bytes: number) => (dir: string) => (asked.push(dir), Promise.resolve(bytes));
    assert.equal((await fetchSnapshot(enough.request({ freeBytes: free(2 * size) }))).kind, 'fetched');
    assert.deepEqual(asked, [enough.paths.dataDir]);
    const short = setup();
    const f = await refusal(short.request({ freeBytes: free(2 * size - 1) }));
    assert.equal(f.reason, 'InsufficientSpace');
    assert.equal(
      f.message,
      `the snapshot pvc://b/snap.db is ${size} bytes and the data volume has ${2 * size - 1} bytes free; ` +
        'a restore needs twice the snapshot (the file and the restored database): raise spec.storage.size and recreate the cluster',
    );
  });

  it('the real free space of the data volume is asked when no one passes their own', async () => {
    const { request } = setup();
    assert.equal((await fetchSnapshot(request())).kind, 'fetched');
    // A (sparse) snapshot larger than half of what this volume really has free is refused.
    const big = setup();
    const { bavail, bsize } = statfsSync(big.paths.dataDir);
    const size = Math.floor((bavail * bsize) / 2) + 1024 * 1024;
    truncateSync(join(big.mount, 'snap.db'), size);
    const f = await refusal(big.request());
    assert.equal(f.reason, 'InsufficientSpace');
    assert.match(
      f.message,
      new RegExp(`^the snapshot pvc://b/snap\\.db is ${size} bytes and the data volume has \\d+ bytes free`),
    );
  });

  it('a volume that fails mid-read (EIO) is SnapshotTruncated, retried, with the error', async () => {
    // /proc/self/mem is a regular file of size 0 whose read fails with EIO, as a damaged disk's does.
    const { request } = setup();
    const f = await refusal(
      request({
        source: { kind: 'file', mount: '/proc/self', path: '/proc/self/mem', display: 'pvc://b/mem' },
      }),
    );
    assert.equal(f.reason, 'SnapshotTruncated');
    assert.equal(
      f.message,
      'reading pvc://b/mem failed after 0 bytes: EIO: i/o error, read; the restore is retried',
    );
  });

  const corrupt: [string, Buffer][] = [
    ['one flipped byte in the data', Buffer.from(SNAP_35).fill(0x00, 100, 101)],
    ['one flipped byte in the appended hash', Buffer.from(SNAP_35).fill(0x00, SNAP_35.length - 1)],
    ['cut short by a page', SNAP_35.subarray(0, SNAP_35.length - 512)],
    ['cut short by a byte', SNAP_35.subarray(0, SNAP_35.length - 1)],
    ['no appended hash at all', SNAP_35.subarray(0, SNAP_35.length - 32)],
    ['shorter than a hash', Buffer.from('not etcd')],
    [
      'its own hash appended, but not to whole pages',
      Buffer.concat([Buffer.from('not pages'), createHash('sha256').update('not pages').digest()]),
    ],
  ];
  for (const [name, bytes] of corrupt) {
    it(`${name}: SnapshotCorrupt (the check etcdutl makes), before the restore sees it`, async () => {
      const f = await refusal(setup(bytes).request());
      assert.equal(f.reason, 'SnapshotCorrupt');
      assert.equal(
        f.message,
        "pvc://b/snap.db fails etcd's own integrity check (the SHA-256 that snapshot save appends does not " +
          'match the content, or there is none): the file is damaged, truncated or not an etcd snapshot; restore from another snapshot',
      );
    });
  }

  it('the intact file with its own recorded checksum passes every check', async () => {
    const { request } = setup(SNAP_34);
    assert.deepEqual(await fetchSnapshot(request({ sha256: sha256(SNAP_34) })), {
      kind: 'fetched',
      sizeBytes: SNAP_34.length,
      sha256: sha256(SNAP_34),
      snapshotMinor: '3.4',
    });
  });

  const minors: [string, Buffer, string, string | undefined][] = [
    ['3.4', SNAP_34, '3.4.23', undefined],
    ['3.4', SNAP_34, '3.5.16', undefined],
    ['3.5', SNAP_35, '3.5.0', undefined],
    ['3.5', SNAP_35, '3.4.23', 'etcd 3.5 and this cluster runs etcd 3.4.23'],
    ['3.6', SNAP_36, '3.6.1', undefined],
    ['3.6', SNAP_36, '3.7.3', undefined],
    ['3.6', SNAP_36, '4.0.0', undefined],
    ['3.6', SNAP_36, '3.5.16', 'etcd 3.6 and this cluster runs etcd 3.5.16'],
  ];
  for (const [minor, bytes, version, refused] of minors) {
    it(`a ${minor} snapshot into etcd ${version}: ${refused ? 'SnapshotTooNew' : 'fetched'}`, async () => {
      const req = setup(bytes).request({ etcdVersion: version });
      if (!refused) {
        const got = await fetchSnapshot(req);
        assert.equal(got.kind === 'fetched' && got.snapshotMinor, minor);
        return;
      }
      const f = await refusal(req);
      assert.equal(f.reason, 'SnapshotTooNew');
      assert.equal(
        f.message,
        `pvc://b/snap.db was written by ${refused}, which cannot read it; create the cluster with spec.version ${minor}.x or newer`,
      );
    });
  }

  it('a source path that is a directory is SnapshotNotFound', async () => {
    const { request, mount } = setup();
    mkdirSync(join(mount, 'dir.db'));
    const f = await refusal(
      request({ source: { kind: 'file', mount, path: join(mount, 'dir.db'), display: 'pvc://b/dir.db' } }),
    );
    assert.equal(f.reason, 'SnapshotNotFound');
    assert.equal(
      f.message,
      'pvc://b/dir.db does not exist on the volume; check source.pvc.claimName and source.pvc.subPath',
    );
  });
});

/** A scripted S3 store: HEAD and GET of one path-style key, each answered as `script` says. */
interface Script {
  head: (res: ServerResponse) => void;
  get: (res: ServerResponse) => void;
}
describe('restore fetch from S3 (a scripted store)', { timeout: 60_000 }, () => {
  let server: Server;
  let endpoint = '';
  let script: Script;
  const seen: { method: string; url: string; authorization: string }[] = [];
  const saved = process.env.ETCDFN_S3_ALLOWED_ENDPOINTS;

  before(async () => {
    process.env.ETCDFN_S3_ALLOWED_ENDPOINTS = 'http://127.0.0.0/8';
    server = createServer((req: IncomingMessage, res: ServerResponse) => {
      seen.push({
        method: req.method ?? '',
        url: req.url ?? '',
        authorization: req.headers.authorization ?? '',
      });
      req.resume();
      if (req.method === 'HEAD') script.head(res);
      else script.get(res);
    });
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    endpoint = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  after(async () => {
    if (saved === undefined) delete process.env.ETCDFN_S3_ALLOWED_ENDPOINTS;
    else process.env.ETCDFN_S3_ALLOWED_ENDPOINTS = saved;
    server.closeAllConnections();
    await new Promise(resolve => server.close(resolve));
  });

  const credentials = { accessKeyId: 'AKIDFETCHTEST', secretAccessKey: 'fetch-test-secret' };
  const s3 = (extra: Partial<Extract<FetchSource, { kind: 's3' }>> = {}): FetchSource => ({
    kind: 's3',
    endpoint,
    bucket: 'snaps',
    key: 'etcd/snap.db',
    credentials,
    secretName: 'creds',
    ...extra,
  });
  const serve = (bytes: Buffer, announced = bytes.length): Script => ({
    head: res => {
      res.writeHead(200, { 'content-length': announced, etag: '"x"' }).end();
    },
    get: res => {
      res.writeHead(200, { 'content-length': bytes.length, etag: '"x"' }).end(bytes);
    },
  });
  const status = (code: number, xmlCode: string): Script => {
    const answer = (res: ServerResponse, body: boolean) => {
      const xml = `<?xml version="1.0"?><Error><Code>${xmlCode}</Code><Message>no</Message></Error>`;
      res.writeHead(code, { 'content-type': 'application/xml' }).end(body ? xml : undefined);
    };
    return { head: res => answer(res, false), get: res => answer(res, true) };
  };

  it('fetches the object by path, signed for the default region, with the size the store announced', async () => {
    const { request, paths } = setup();
    script = serve(SNAP_35);
    seen.length = 0;
    const got = await fetchSnapshot(request({ source: s3(), sha256: sha256(SNAP_35) }));
    assert.deepEqual(got, {
      kind: 'fetched',
      sizeBytes: SNAP_35.length,
      sha256: sha256(SNAP_35),
      snapshotMinor: '3.5',
    });
    assert.deepEqual(readFileSync(paths.snapshotFile), SNAP_35);
    assert.deepEqual(
      seen.map(s => `${s.method} ${s.url.split('?')[0]}`),
      ['HEAD /snaps/etcd/snap.db', 'GET /snaps/etcd/snap.db'],
    );
    assert.ok(
      seen.every(s => s.authorization.includes('/us-east-1/s3/')),
      JSON.stringify(seen),
    );
  });

  it('a store whose HEAD gives no length: the GET’s length is the size', async () => {
    const { request } = setup();
    script = {
      head: res => {
        res.writeHead(200, { etag: '"x"' }).end();
      },
      get: serve(SNAP_35).get,
    };
    const got = await fetchSnapshot(request({ source: s3() }));
    assert.equal(got.kind === 'fetched' && got.sizeBytes, SNAP_35.length);
  });

  it('leaves no connection to the store open once the snapshot is read', async () => {
    const { request } = setup();
    script = serve(SNAP_35);
    await fetchSnapshot(request({ source: s3() }));
    const open = () => new Promise<number>(resolve => server.getConnections((_e, count) => resolve(count)));
    for (let i = 0; i < 50 && (await open()) > 0; i++) await new Promise(r => setTimeout(r, 20));
    assert.equal(await open(), 0);
  });

  it('an endpoint the policy refuses is EndpointRefused, in the words of a restore source', async () => {
    const { request } = setup();
    seen.length = 0;
    const f = await refusal(request({ source: s3({ endpoint: 'https://169.254.169.254' }) }));
    assert.equal(f.reason, 'EndpointRefused');
    assert.match(
      f.message,
      /^source\.s3\.endpoint https:\/\/169\.254\.169\.254 is a link-local address.*; nothing was contacted$/,
    );
    assert.deepEqual(seen, []);
  });

  it('a region given is the region signed for', async () => {
    const { request } = setup();
    script = serve(SNAP_35);
    seen.length = 0;
    await fetchSnapshot(request({ source: s3({ region: 'eu-west-3' }) }));
    assert.ok(
      seen.length > 0 && seen.every(s => s.authorization.includes('/eu-west-3/s3/')),
      JSON.stringify(seen),
    );
  });

  it('an object replaced between HEAD and GET (fewer bytes than announced) is SnapshotTruncated', async () => {
    const { request } = setup();
    script = serve(SNAP_35, SNAP_35.length + 512);
    const f = await refusal(request({ source: s3() }));
    assert.equal(f.reason, 'SnapshotTruncated');
    assert.equal(
      f.message,
      `s3://snaps/etcd/snap.db announced ${SNAP_35.length + 512} bytes but ${SNAP_35.length} arrived; the restore is retried`,
    );
  });

  it('a body that breaks off mid-way is StoreUnreachable, saying how far it got, with no key in it', async () => {
    const { request } = setup();
    script = {
      head: serve(SNAP_35).head,
      get: res => {
        res.writeHead(200, { 'content-length': SNAP_35.length });
        res.write(SNAP_35.subarray(0, 4096), () => setTimeout(() => res.socket?.destroy(), 20));
      },
    };
    const f = await refusal(request({ source: s3() }));
    assert.equal(f.reason, 'StoreUnreachable');
    assert.match(
      f.message,
      /^reading s3:\/\/snaps\/etcd\/snap\.db failed after 4096 bytes: .+; the restore is retried$/,
    );
    assert.ok(
      !f.message.includes(credentials.secretAccessKey) && !f.message.includes(credentials.accessKeyId),
    );
  });

  const refusals: [string, Script, string, string][] = [
    [
      'no such key (404)',
      status(404, 'NoSuchKey'),
      'SnapshotNotFound',
      `s3://snaps/etcd/snap.db does not exist at ENDPOINT (HTTP 404); check source.s3.bucket and source.s3.key (the exact object key)`,
    ],
    [
      'access denied (403)',
      status(403, 'AccessDenied'),
      'AccessDenied',
      'ENDPOINT refused to read s3://snaps/etcd/snap.db (HTTP 403); check the keys in Secret creds and that they may read the bucket',
    ],
    [
      'bad signature (401)',
      status(401, 'Unauthorized'),
      'AccessDenied',
      'ENDPOINT refused to read s3://snaps/etcd/snap.db (HTTP 401); check the keys in Secret creds and that they may read the bucket',
    ],
  ];
  for (const [name, answer, reason, message] of refusals) {
    it(`${name}: ${reason}`, async () => {
      const { request } = setup();
      script = answer;
      const f = await refusal(request({ source: s3() }));
      assert.equal(f.reason, reason);
      assert.equal(f.message, message.replaceAll('ENDPOINT', endpoint));
    });
  }

  it('a store failing (500) is StoreUnreachable, retried, naming the endpoint', async () => {
    const { request } = setup();
    script = status(500, 'InternalError');
    const f = await refusal(request({ source: s3() }));
    assert.equal(f.reason, 'StoreUnreachable');
    assert.match(
      f.message,
      new RegExp(
        `^cannot read s3://snaps/etcd/snap\\.db from ${endpoint}: .*500.*; the restore is retried; check source\\.s3\\.endpoint and the network$`,
      ),
    );
  });

  it('no credentials (the optional Secret is missing): CredentialsMissing, nothing contacted', async () => {
    const { request } = setup();
    seen.length = 0;
    const f = await refusal(request({ source: s3({ credentials: undefined }) }));
    assert.equal(f.reason, 'CredentialsMissing');
    assert.equal(
      f.message,
      'the Secret creds is missing or lacks AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY; create it in the cluster namespace with both keys',
    );
    assert.deepEqual(seen, []);
  });
});

describe('restore fetch: what an S3 failure is called', () => {
  const source: Extract<FetchSource, { kind: 's3' }> = {
    kind: 's3',
    endpoint: 'https://s3.example.com',
    bucket: 'snaps',
    key: 'k',
    credentials: { accessKeyId: 'AKIDSHORT', secretAccessKey: 'short-secret' },
    secretName: 'creds',
  };
  // The SDK names a missing object or bucket; a store may send the name without the status, or the
  // status without a name the SDK knows.
  const rows: [string, unknown, string][] = [
    ['HTTP 404, unnamed', { name: 'Unknown', $metadata: { httpStatusCode: 404 } }, 'SnapshotNotFound'],
    ['NotFound, no status', { name: 'NotFound', $metadata: {} }, 'SnapshotNotFound'],
    ['NoSuchKey, no status', { name: 'NoSuchKey', $metadata: {} }, 'SnapshotNotFound'],
    ['NoSuchBucket, no status', { name: 'NoSuchBucket', $metadata: {} }, 'SnapshotNotFound'],
    [
      'another name, HTTP 400',
      { name: 'InvalidRequest', $metadata: { httpStatusCode: 400 } },
      'StoreUnreachable',
    ],
    [
      'a plain error (no S3 answer at all)',
      new Error('the store answered without a body'),
      'StoreUnreachable',
    ],
    ['nothing at all', undefined, 'StoreUnreachable'],
  ];
  for (const [name, err, reason] of rows) {
    it(`${name}: ${reason}`, () => {
      assert.equal(s3Failure(err, 's3://snaps/k', source).reason, reason);
    });
  }

  it('the Secret’s keys never appear in the text, however short', () => {
    const err = new Error('signature mismatch for AKIDSHORT using short-secret');
    const text = sourceErrorText(err, source);
    assert.ok(!text.includes('short-secret') && !text.includes('AKIDSHORT'), text);
  });
});
