// etcd auth on the sandbox with real etcd 3.5.16 (plaintext client traffic): a 3-member cluster
// with spec.auth becomes Available with status.authEnabled; etcd refuses a client without
// credentials and accepts root with the Secret's password; a new password put in the Secret is
// rotated into etcd (the old one is then refused) and the operator keeps working with it: 3 → 4.
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { healingSandbox, NS } from '../support/healing-sandbox.ts';
import { waitFor } from '../support/wait.ts';

const SECRET = 'au-root';

describe('etcd auth (etcd 3.5.16)', { timeout: 900_000 }, () => {
  const { start, stop, kube, cluster, clusterRef, endpoints, mark, converged, create, describeWorld } =
    healingSandbox(21, {
      chaos: false,
    });
  before(start);
  after(stop);

  async function put(name: string, auth?: { username: string; password: string }): Promise<string> {
    const client = new Etcd3({ hosts: await endpoints(name), dialTimeout: 2000, auth });
    try {
      await client.put('probe').value('x').exec();
      return 'ok';
    } catch (err) {
      return (err as Error).message;
    } finally {
      client.close();
    }
  }
  const root = (password: string) => ({ username: 'root', password });

  it('turns auth on, rotates the root password from the Secret and keeps scaling', async () => {
    const name = 'au';
    const secret = (password: string) => ({
      apiVersion: 'v1',
      kind: 'Secret',
      type: 'kubernetes.io/basic-auth',
      metadata: { name: SECRET, namespace: NS },
      stringData: { username: 'root', password },
    });
    assert.equal((await kube().create(secret('first-pass-1'))).kind, 'created');
    await create(name, 3, { auth: { enabled: true, rootCredentialsSecretRef: { name: SECRET } } });
    await converged(name, 3);
    const slow = { timeoutMs: 120_000, intervalMs: 1000 };
    await waitFor(
      'status.authEnabled',
      async () => (await cluster(name)).status?.authEnabled === true,
      slow,
      describeWorld(name),
    );
    assert.notEqual(await put(name), 'ok', 'a client without credentials is refused');
    assert.equal(await put(name, root('first-pass-1')), 'ok', "the Secret's password works");

    const patched = await kube().mergePatch(
      { apiVersion: 'v1', kind: 'Secret', namespace: NS, name: SECRET },
      { stringData: { password: 'second-pass-2' } },
    );
    assert.equal(patched.kind, 'written');
    await waitFor(
      'the new password works',
      async () => (await put(name, root('second-pass-2'))) === 'ok',
      slow,
      describeWorld(name),
    );
    assert.notEqual(await put(name, root('first-pass-1')), 'ok', 'the old password is refused');

    const scaling = await mark(name);
    await kube().mergePatch(clusterRef(name), { spec: { replicas: 4 } });
    const scaled = await converged(name, 4, scaling);
    assert.equal(scaled.ids.size, 4);
    assert.equal(await put(name, root('second-pass-2')), 'ok');
  });
});
