// callEndpoint and etcd's "revision of auth store is old": the call was refused without being
// applied, because the auth store changed after the login (or the member that took the call had
// not applied the change yet). etcd's Go client logs in again and retries once; so does the
// adapter, with a new client, and only when it logs in at all.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Etcd3 } from 'etcd3';
import { callEndpoint } from '../../shared/etcd/connection.ts';

const OLD = new Error('3 INVALID_ARGUMENT: etcdserver: revision of auth store is old');
const root = { auth: { username: 'root', password: 'pw' } };
// Nothing listens here; no call below reaches the network (the client connects lazily).
const ENDPOINT = 'http://127.0.0.1:9';

/** A call that throws `errors` in turn, then answers 'done'; records the clients it was given. */
function scripted(errors: Error[]) {
  const clients: Etcd3[] = [];
  const call = (client: Etcd3) => {
    clients.push(client);
    const err = errors.shift();
    return err ? Promise.reject(err) : Promise.resolve('done');
  };
  return { call, clients };
}

describe('callEndpoint: an old auth revision', () => {
  it('is retried once with a new client (a new login), and the retry’s answer is the result', async () => {
    const { call, clients } = scripted([OLD]);
    const result = await callEndpoint(ENDPOINT, root, call);
    assert.deepEqual(result, { kind: 'ok', value: 'done', endpoint: ENDPOINT });
    assert.equal(clients.length, 2);
    assert.notEqual(clients[0], clients[1], 'the retry logs in again on a client of its own');
  });

  it('twice in a row is returned as the failure it is, after one retry', async () => {
    const { call, clients } = scripted([OLD, OLD]);
    const result = await callEndpoint(ENDPOINT, root, call);
    assert.equal(result.kind, 'error');
    assert.match(result.message, /revision of auth store is old/);
    assert.equal(clients.length, 2);
  });

  it('without credentials is not retried (nothing to log in again with)', async () => {
    const { call, clients } = scripted([OLD]);
    const result = await callEndpoint(ENDPOINT, {}, call);
    assert.equal(result.kind, 'error');
    assert.equal(clients.length, 1);
  });

  it('other refusals are not retried', async () => {
    const { call, clients } = scripted([
      new Error('etcdserver: authentication failed, invalid user ID or password'),
    ]);
    const result = await callEndpoint(ENDPOINT, root, call);
    assert.equal(result.kind, 'auth-failed');
    assert.equal(clients.length, 1);
  });
});
