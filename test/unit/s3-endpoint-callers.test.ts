// Issue 29, security 1: the S3 endpoint policy holds for every caller, the restore's fetch step
// included, and for an endpoint written as an IP address (Node connects to one without the DNS
// lookup the client's guard hooks into). Nothing here connects anywhere: every socket connection in
// this process is refused and recorded, and each row asserts none was even attempted.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import net from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fetchSnapshot } from '../../shared/restore/fetch.ts';
import { RestoreFailure } from '../../shared/restore/layout.ts';
import { createS3Client, EndpointRefusedError } from '../../shared/s3/client.ts';
import { parseAllowList } from '../../shared/s3/endpoint-policy.ts';

// The cluster's own ranges, as the operator's configuration (and now the init container) sets them;
// read by the client on first use.
process.env.ETCDFN_S3_DENIED_RANGES = '10.96.0.0/12';
delete process.env.ETCDFN_S3_ALLOWED_ENDPOINTS;

const attempts: unknown[] = [];
const proto = net.Socket.prototype;
const original = Object.getOwnPropertyDescriptor(proto, 'connect');
before(() => {
  Object.defineProperty(proto, 'connect', {
    configurable: true,
    writable: true,
    value(...args: unknown[]) {
      attempts.push(args[0]);
      throw new Error('this test never connects anywhere');
    },
  });
});
after(() => {
  if (original) Object.defineProperty(proto, 'connect', original);
});

const credentials = { accessKeyId: 'AKIDEXAMPLE', secretAccessKey: 'secret' };

describe('the restore fetch applies the endpoint policy before contacting anything', () => {
  let dir: string;
  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'etcdfn-fetch-policy-'));
  });
  after(async () => rm(dir, { recursive: true, force: true }));

  const rows: [string, string, RegExp][] = [
    ['the metadata service, plain http', 'http://169.254.169.254/', /link-local address/],
    ['the metadata service, https', 'https://169.254.169.254', /link-local address/],
    ['AWS IPv6 metadata', 'https://[fd00:ec2::254]', /cloud metadata address/],
    ['NAT64 form of the metadata service', 'https://[64:ff9b::a9fe:a9fe]', /link-local address/],
    ['plain http, not allow-listed', 'http://10.0.0.5:9000', /uses plain http/],
    ["inside the cluster's denied ranges", 'https://10.96.0.10', /inside the cluster's own address range/],
  ];
  for (const [name, endpoint, why] of rows) {
    it(`${name}: ${endpoint} → EndpointRefused, nothing contacted`, async () => {
      attempts.length = 0;
      const failure = await fetchSnapshot({
        paths: {
          dataDir: join(dir, 'data'),
          workDir: join(dir, 'work'),
          snapshotFile: join(dir, 'work', 'snapshot.db'),
          skipFile: join(dir, 'work', 'skip'),
          marker: join(dir, 'data', 'restored'),
        },
        source: { kind: 's3', endpoint, bucket: 'b', key: 'k', credentials, secretName: 's3' },
        etcdVersion: '3.5.16',
        freeBytes: async () => 1e12,
      }).then(
        () => undefined,
        (err: unknown) => err,
      );
      assert.deepEqual(attempts, [], 'no connection attempted');
      assert.ok(failure instanceof RestoreFailure, String(failure));
      assert.equal(failure.reason, 'EndpointRefused');
      assert.match(failure.message, why);
      assert.match(failure.message, /source\.s3\.endpoint/);
    });
  }
});

describe('createS3Client refuses an endpoint the policy refuses, whoever calls it', () => {
  const target = (endpoint: string) => ({
    endpoint,
    bucket: 'b',
    key: 'k',
    region: 'us-east-1',
    forcePathStyle: true,
    secretName: 's3',
    uri: 's3://b/k',
    ownerUid: '',
  });
  const rows: [string, string, string, string][] = [
    ['link-local literal', 'http://169.254.169.254', '', 'EndpointLinkLocal'],
    ['link-local even allow-listed', 'http://169.254.169.254', 'http://169.254.0.0/16', 'EndpointLinkLocal'],
    ['Azure WireServer', 'https://168.63.129.16', '', 'EndpointMetadata'],
    ['wildcard address', 'https://0.0.0.0:9000', '', 'EndpointUnspecified'],
    ['IPv6 wildcard', 'https://[::]:9000', '', 'EndpointUnspecified'],
    ['loopback plain http, not allow-listed', 'http://127.0.0.1:9000', '', 'EndpointInsecure'],
    ["in the cluster's denied ranges", 'https://10.96.0.10', '', 'EndpointClusterInternal'],
  ];
  for (const [name, endpoint, allow, reason] of rows) {
    it(`${name}: ${endpoint} → ${reason}`, async () => {
      const made = await createS3Client(target(endpoint), credentials, parseAllowList(allow).entries).then(
        client => {
          client.destroy();
          return undefined;
        },
        (err: unknown) => err,
      );
      assert.ok(made instanceof EndpointRefusedError, `expected a refusal, got ${String(made)}`);
      assert.equal(made.code, reason);
    });
  }

  it('an allow-listed loopback store (the sandbox) still gets a client', async () => {
    const client = await createS3Client(
      target('http://127.0.0.1:41234'),
      credentials,
      parseAllowList('http://127.0.0.0/8').entries,
    );
    client.destroy();
  });
});
