// Where a snapshot goes in S3 (shared/s3/location.ts): the object key recorded before the upload and
// the one written are the same, the credentials a Secret must hold, and the URL style per endpoint.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  ACCESS_KEY_ID,
  CREDENTIAL_KEYS,
  DEFAULT_REGION,
  OWNER_METADATA,
  SECRET_ACCESS_KEY,
  credentialsIn,
  isAwsEndpoint,
  ownerOf,
  s3Uri,
  snapshotObjectKey,
  snapshotTarget,
  usePathStyle,
} from '../../shared/s3/location.ts';

const OWNER = { namespace: 'team-a', cluster: 'main', name: 'nightly', uid: '0123456789abcdef' };

describe('the S3 location of a snapshot', () => {
  it('the credentials Secret holds both keys, non-empty, or there are no credentials', () => {
    assert.equal(ACCESS_KEY_ID, 'AWS_ACCESS_KEY_ID');
    assert.equal(SECRET_ACCESS_KEY, 'AWS_SECRET_ACCESS_KEY');
    assert.deepEqual(CREDENTIAL_KEYS, ['AWS_ACCESS_KEY_ID', 'AWS_SECRET_ACCESS_KEY']);
    assert.deepEqual(
      credentialsIn({ AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 's3cret', other: 'x' }),
      {
        accessKeyId: 'AKID',
        secretAccessKey: 's3cret',
      },
    );
    assert.equal(credentialsIn({ AWS_ACCESS_KEY_ID: 'AKID' }), undefined);
    assert.equal(credentialsIn({ AWS_SECRET_ACCESS_KEY: 's3cret' }), undefined);
    assert.equal(credentialsIn({ AWS_ACCESS_KEY_ID: '', AWS_SECRET_ACCESS_KEY: 's3cret' }), undefined);
    assert.equal(credentialsIn({ AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: '' }), undefined);
    assert.equal(credentialsIn({}), undefined);
  });

  it('the key: the prefix as given, namespace, cluster, name and the first 8 characters of the UID', () => {
    assert.equal(snapshotObjectKey(undefined, OWNER), 'team-a/main/nightly-01234567.db');
    assert.equal(snapshotObjectKey('backups/', OWNER), 'backups/team-a/main/nightly-01234567.db');
    assert.equal(snapshotObjectKey('etcd-', OWNER), 'etcd-team-a/main/nightly-01234567.db');
    assert.equal(s3Uri('b', 'k/x.db'), 's3://b/k/x.db');
    assert.equal(OWNER_METADATA, 'etcdfn-snapshot-uid');
  });

  it("AWS's own endpoints are amazonaws.com and its subdomains, nothing that only ends alike", () => {
    assert.equal(isAwsEndpoint('https://amazonaws.com'), true);
    assert.equal(isAwsEndpoint('https://s3.eu-west-1.amazonaws.com'), true);
    assert.equal(isAwsEndpoint('https://notamazonaws.com'), false);
    assert.equal(isAwsEndpoint('https://amazonaws.com.example.org'), false);
    assert.equal(isAwsEndpoint('http://minio:9000'), false);
    assert.equal(isAwsEndpoint('not a url'), false);
    assert.equal(usePathStyle({ endpoint: 'not a url' }), true);
    assert.equal(usePathStyle({ endpoint: 'https://amazonaws.com' }), false);
  });

  it('the target: every field from the destination and the owner; no region is us-east-1', () => {
    const location = {
      endpoint: 'http://minio:9000',
      bucket: 'backups',
      key: 'etcd/',
      credentialsSecretRef: { name: 's3-creds' },
    };
    assert.equal(DEFAULT_REGION, 'us-east-1');
    assert.deepEqual(snapshotTarget(location, OWNER), {
      endpoint: 'http://minio:9000',
      bucket: 'backups',
      key: 'etcd/team-a/main/nightly-01234567.db',
      region: 'us-east-1',
      forcePathStyle: true,
      secretName: 's3-creds',
      uri: 's3://backups/etcd/team-a/main/nightly-01234567.db',
      ownerUid: '0123456789abcdef',
    });
    assert.equal(snapshotTarget({ ...location, region: '' }, OWNER).region, 'us-east-1');
    assert.equal(snapshotTarget({ ...location, region: 'eu-west-1' }, OWNER).region, 'eu-west-1');
    const aws = snapshotTarget({ ...location, endpoint: 'https://s3.amazonaws.com' }, OWNER);
    assert.equal(aws.forcePathStyle, false);
  });

  it('the owner: from the EtcdSnapshot, empty where its metadata says nothing', () => {
    const snapshot = {
      metadata: { namespace: 'team-a', name: 'nightly', uid: '0123456789abcdef' },
      spec: { clusterRef: { name: 'main' } },
    };
    assert.deepEqual(ownerOf(snapshot), OWNER);
    assert.deepEqual(ownerOf({ metadata: {}, spec: { clusterRef: { name: 'main' } } }), {
      namespace: '',
      cluster: 'main',
      name: '',
      uid: '',
    });
  });
});
