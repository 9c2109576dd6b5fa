// The root credentials Secrets (shared/builders/root-credentials.ts): generated ones are
// basic-auth, owned by the cluster, read back to the same password; bad ones are named without
// their content.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { V1Secret } from '@kubernetes/client-node';
import {
  buildAppliedRootSecret,
  buildGeneratedRootSecret,
  generatePassword,
  readRootCredentials,
} from '../../shared/builders/root-credentials.ts';
import { appliedRootSecretName } from '../../shared/names.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const cluster = etcdCluster({
  metadata: { name: 'db', namespace: 'ns', uid: 'u-1' },
  spec: { replicas: undefined, auth: { enabled: true, rootCredentialsSecretRef: { name: 'db-root' } } },
});

describe('root credentials Secrets', () => {
  it('generates a basic-auth Secret under the spec’s name, owned by the cluster, that reads back', () => {
    const password = generatePassword();
    const secret = buildGeneratedRootSecret(cluster, password);
    assert.equal(secret.type, 'kubernetes.io/basic-auth');
    assert.equal(secret.metadata?.name, 'db-root');
    assert.equal(secret.metadata?.namespace, 'ns');
    assert.deepEqual(
      secret.metadata?.ownerReferences?.map(r => [r.kind, r.name, r.uid, r.controller]),
      [['EtcdCluster', 'db', 'u-1', true]],
    );
    assert.deepEqual(readRootCredentials(secret), { kind: 'ok', password });
    assert.equal(Buffer.from(secret.data!.username, 'base64').toString(), 'root');
  });

  it('generates a different strong password every time', () => {
    const a = generatePassword();
    const b = generatePassword();
    assert.notEqual(a, b);
    assert.ok(a.length >= 40 && /^[A-Za-z0-9_-]+$/.test(a), a.length.toString());
  });

  it('keeps the applied copy under its own name', () => {
    const secret = buildAppliedRootSecret(cluster, 'p');
    assert.equal(secret.metadata?.name, appliedRootSecretName('db'));
    assert.equal(secret.metadata?.name, 'db-etcd-root-applied');
  });

  const bad = (s: Partial<V1Secret>): V1Secret => ({ metadata: { name: 'db-root' }, ...s });
  const cases: [string, V1Secret | undefined, string][] = [
    ['absent', undefined, 'missing'],
    ['Opaque', bad({ type: 'Opaque', data: { password: 'c2VjcmV0' } }), 'not kubernetes.io/basic-auth'],
    [
      'another user',
      bad({ type: 'kubernetes.io/basic-auth', data: { username: 'YWRtaW4=', password: 'c2VjcmV0' } }),
      'username "admin"',
    ],
    ['no password', bad({ type: 'kubernetes.io/basic-auth', data: {} }), 'no password key'],
    ['empty password', bad({ type: 'kubernetes.io/basic-auth', data: { password: '' } }), 'no password key'],
  ];
  for (const [name, secret, words] of cases) {
    it(`tells what is wrong with a Secret: ${name}`, () => {
      const read = readRootCredentials(secret);
      const text = read.kind === 'invalid' ? read.problem : read.kind;
      assert.ok(text.includes(words), text);
      assert.ok(!text.includes('secret"') && !text.includes('c2VjcmV0'), 'no content in the message');
    });
  }

  it('accepts a basic-auth Secret without a username (root is implied)', () => {
    const read = readRootCredentials(
      bad({ type: 'kubernetes.io/basic-auth', data: { password: 'c2VjcmV0' } }),
    );
    assert.deepEqual(read, { kind: 'ok', password: 'secret' });
  });
});
