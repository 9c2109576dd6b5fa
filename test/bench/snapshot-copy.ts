// One snapshot copy in a process of its own, so its peak RSS is the copy's: the code run-snapshot
// runs (S3: stream from etcd → multipart upload → read back and verify) or the code the PVC Job's
// agent runs (stream from etcd → file → read back and verify). Prints one JSON line:
// { bytes, seconds, maxRssMiB }. Arguments: s3 <etcd url> <s3 endpoint> <bucket> <key> | pvc <etcd url> <dir>.
import { randomUUID } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { snapshot } from '../../shared/etcd/snapshot.ts';
import { parseAllowList } from '../../shared/s3/endpoint-policy.ts';
import { uploadStream } from '../../shared/s3/upload.ts';
import { readBack } from '../../shared/snapshot-file/verify.ts';
import { saveSnapshotFile } from '../../shared/snapshot-file/save.ts';

// s3rver's fixed keys (test/support/s3rver.ts, not imported: it would load s3rver into this process).
const S3RVER_CREDENTIALS = { accessKeyId: 'S3RVER', secretAccessKey: 'S3RVER' };
const [mode, etcdUrl, ...rest] = process.argv.slice(2);
const started = performance.now();
let bytes: number;
if (mode === 'pvc') {
  const [dir] = rest;
  // The Job's volume is mounted before the agent runs: the mount exists (saveSnapshotFile resolves
  // the path inside it and refuses one outside).
  await mkdir(dir ?? '', { recursive: true });
  const saved = await saveSnapshotFile({
    mount: dir ?? '',
    dir: dir ?? '',
    file: 'bench.db',
    recordedPath: 'bench.db',
    ownerUid: randomUUID(),
    sources: [{ member: 'm0', endpoint: etcdUrl ?? '' }],
  });
  bytes = saved.sizeBytes;
} else {
  const [endpoint = '', bucket = '', key = ''] = rest;
  const allowList = parseAllowList(endpoint).entries;
  const target = {
    endpoint,
    bucket,
    key,
    region: 'us-east-1',
    forcePathStyle: true,
    secretName: 'bench',
    uri: `s3://${bucket}/${key}`,
    ownerUid: randomUUID(),
  };
  const opened = await snapshot(etcdUrl ?? '');
  if (opened.kind !== 'ok') throw new Error(opened.message);
  const up = await uploadStream(target, S3RVER_CREDENTIALS, opened.stream, { allowList });
  if (up.kind !== 'uploaded') throw new Error(`${up.kind}: ${'message' in up ? up.message : ''}`);
  const read = await readBack(target, S3RVER_CREDENTIALS, up.etag, { allowList });
  if (read.kind !== 'read' || read.sha256 !== up.sha256 || read.integrity !== 'ok') {
    throw new Error(`read back: ${JSON.stringify(read)}`);
  }
  bytes = up.sizeBytes;
}
const seconds = (performance.now() - started) / 1000;
// ru_maxrss: the peak resident set of this process, in KiB on Linux.
const maxRssMiB = process.resourceUsage().maxRSS / 1024;
console.log(JSON.stringify({ bytes, seconds, maxRssMiB }));
process.exit(0);
