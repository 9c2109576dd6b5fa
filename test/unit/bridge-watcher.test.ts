// The watcher's list/watch protocol against a scripted fake API server: the label selector is pushed
// down, a closed watch resumes from the last resourceVersion, a 410 Gone leads to a new list, and a
// list produces events only with replayInitialList (then as an informer-style diff).
import assert from 'node:assert/strict';
import { createServer, type ServerResponse } from 'node:http';
import { after, before, describe, it } from 'node:test';
import { KubeConfig } from '@kubernetes/client-node';
import { pino } from 'pino';
import type { WatchedObject } from '../../standalone/bridge/format.ts';
import { ResourceWatcher } from '../../standalone/bridge/watcher.ts';

type Line = { type: string; object: unknown };
/** What one watch connection does: send these lines, then close the stream or keep it open. */
type Script = { lines: Line[]; then: 'close' | 'hold' };

const pod = (name: string, rv: string) => ({ metadata: { name, namespace: 'default', resourceVersion: rv } });

describe('ResourceWatcher', () => {
  const requests: { kind: 'list' | 'watch'; query: URLSearchParams }[] = [];
  let lists: { rv: string; items: unknown[] }[] = [];
  let watches: Script[] = [];
  const open = new Set<ServerResponse>();
  const server = createServer((req, res) => {
    const url = new URL(req.url ?? '/', 'http://x');
    if (url.pathname === '/api/v1') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'APIResourceList',
          groupVersion: 'v1',
          resources: [
            { name: 'pods', kind: 'Pod', namespaced: true, singularName: 'pod', verbs: ['list', 'watch'] },
          ],
        }),
      );
      return;
    }
    if (url.pathname !== '/api/v1/pods') return void res.writeHead(404).end();
    const watch = url.searchParams.get('watch') === 'true';
    requests.push({ kind: watch ? 'watch' : 'list', query: url.searchParams });
    if (!watch) {
      const list = lists.shift() ?? { rv: '999', items: [] };
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          kind: 'PodList',
          apiVersion: 'v1',
          metadata: { resourceVersion: list.rv },
          items: list.items,
        }),
      );
      return;
    }
    const script = watches.shift() ?? { lines: [], then: 'hold' };
    res.writeHead(200, { 'content-type': 'application/json' });
    res.flushHeaders();
    for (const line of script.lines) res.write(`${JSON.stringify(line)}\n`);
    if (script.then === 'close') res.end();
    else {
      open.add(res);
      res.on('close', () => open.delete(res));
    }
  });
  let kubeConfig: KubeConfig;

  before(async () => {
    await new Promise<void>(resolve => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    const port = typeof address === 'object' && address ? address.port : 0;
    kubeConfig = new KubeConfig();
    kubeConfig.loadFromOptions({
      clusters: [{ name: 'c', server: `http://127.0.0.1:${port}`, skipTLSVerify: true }],
      users: [{ name: 'u' }],
      contexts: [{ name: 'x', cluster: 'c', user: 'u' }],
      currentContext: 'x',
    });
  });
  after(async () => {
    open.forEach(res => res.end());
    server.closeAllConnections();
    await new Promise(resolve => server.close(resolve));
  });

  async function run(replayInitialList: boolean, until: (events: string[]) => boolean) {
    const events: string[] = [];
    const watcher = new ResourceWatcher({
      kubeConfig,
      target: { apiVersion: 'v1', kind: 'Pod', labelSelector: 'etcdfn.io/cluster' },
      replayInitialList,
      retryDelayMs: 10,
      log: pino({ level: 'silent' }),
      onEvent: (verb, object: WatchedObject) => events.push(`${verb} ${object.metadata.name} ${object.kind}`),
    });
    await watcher.start();
    // A generous bound on the wait (the assertions are on the events seen, never on time).
    const deadline = Date.now() + 30_000;
    while (!until(events) && Date.now() < deadline) await new Promise(resolve => setTimeout(resolve, 10));
    await watcher.stop();
    return { events, watcher };
  }

  it('resumes from the last resourceVersion and lists again after 410 Gone; lists are silent', async () => {
    requests.length = 0;
    lists = [
      { rv: '10', items: [pod('a', '9')] },
      { rv: '20', items: [pod('a', '9'), pod('b', '15')] },
    ];
    watches = [
      {
        lines: [
          { type: 'ADDED', object: pod('b', '11') },
          { type: 'MODIFIED', object: pod('b', '12') },
        ],
        then: 'close',
      },
      { lines: [{ type: 'BOOKMARK', object: pod('', '13') }], then: 'close' },
      {
        lines: [
          { type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old' } },
        ],
        then: 'hold',
      },
      { lines: [{ type: 'DELETED', object: pod('b', '21') }], then: 'hold' },
    ];
    const { events, watcher } = await run(false, e => e.length >= 3);
    assert.deepEqual(events, ['add b Pod', 'update b Pod', 'delete b Pod']);
    assert.deepEqual(
      requests.map(r => `${r.kind}:${r.query.get('resourceVersion') ?? ''}`),
      ['list:', 'watch:10', 'watch:12', 'watch:13', 'list:', 'watch:20'],
    );
    assert.ok(
      requests.every(r => r.query.get('labelSelector') === 'etcdfn.io/cluster'),
      'selector pushed down',
    );
    assert.equal(requests[1]?.query.get('allowWatchBookmarks'), 'true');
    assert.equal(watcher.lastResourceVersion, '21');
  });

  it('replayInitialList: the first list replays adds, a re-list is diffed like an informer', async () => {
    requests.length = 0;
    lists = [
      { rv: '10', items: [pod('a', '5'), pod('b', '6')] },
      { rv: '30', items: [pod('a', '25'), pod('c', '28')] },
    ];
    watches = [
      { lines: [{ type: 'ERROR', object: { kind: 'Status', code: 410 } }], then: 'hold' },
      { lines: [], then: 'hold' },
    ];
    const { events } = await run(true, e => e.length >= 5);
    assert.deepEqual(events, ['add a Pod', 'add b Pod', 'update a Pod', 'add c Pod', 'delete b Pod']);
  });

  it('start() fails loudly when the API server refuses the list', async () => {
    const watcher = new ResourceWatcher({
      kubeConfig,
      target: { apiVersion: 'v1', kind: 'Secret' },
      log: pino({ level: 'silent' }),
      onEvent: () => {},
    });
    await assert.rejects(watcher.start(), /Secret/);
    await watcher.stop();
  });
});
