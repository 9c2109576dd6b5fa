// Pods in network namespaces of their own (test/sandbox/kubelet/pod-network.ts): two Pods that both
// listen on the wildcard address at :8080 (as every Knative program does) run side by side, are
// reached at their Pod IPs, reach each other by DNS name and the API server with their own
// service-account token, have no route off their /24, and leave no link behind when they and the
// sandbox stop. Needs root (network namespaces, a bridge) and iproute2.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { after, before, describe, it } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import type { Sandbox } from '../sandbox/kubelet/harness.ts';
import { startSandbox } from '../sandbox/kubelet/harness.ts';
import { POD_NETWORK_ANNOTATION } from '../sandbox/kubelet/index.ts';
import { isReady, waitFor, waitForPod, waitForPodGone } from '../sandbox/kubelet/wait.ts';

const NS = 'default';

// Serves / (who am I), /peer (GET $PEER:8080/ through DNS), /service (GET the ClusterIP Service
// web-svc, port 80 → 8080), /api (a SelfSubjectReview through the
// kubeconfig the kubelet wrote) and /routes (this namespace's IPv4 routing table).
const SERVER = `
const http = require('node:http'), https = require('node:https'), fs = require('node:fs');
const me = process.env.HOSTNAME;
function get(url) {
  return new Promise((resolve, reject) => {
    http.get(url, res => { let b = ''; res.on('data', d => (b += d)); res.on('end', () => resolve(b)); }).on('error', reject);
  });
}
function review() {
  const kc = fs.readFileSync(process.env.KUBECONFIG, 'utf8');
  const field = name => new RegExp(name + ': (.*)').exec(kc)[1].trim();
  const server = new URL(field('server'));
  return new Promise((resolve, reject) => {
    const req = https.request({
      host: server.hostname, port: server.port, method: 'POST', servername: field('tls-server-name'),
      path: '/apis/authentication.k8s.io/v1/selfsubjectreviews',
      ca: fs.readFileSync(field('certificate-authority')),
      headers: { authorization: 'Bearer ' + fs.readFileSync(field('tokenFile'), 'utf8'), 'content-type': 'application/json' },
    }, res => { let b = ''; res.on('data', d => (b += d)); res.on('end', () => resolve(b)); });
    req.on('error', reject);
    req.end(JSON.stringify({ apiVersion: 'authentication.k8s.io/v1', kind: 'SelfSubjectReview' }));
  });
}
http.createServer(async (req, res) => {
  try {
    if (req.url === '/peer') return res.end(await get('http://' + process.env.PEER + ':8080/'));
    if (req.url === '/service') return res.end(await get('http://web-svc.default.svc.cluster.local/'));
    if (req.url === '/api') return res.end(await review());
    if (req.url === '/routes') return res.end(fs.readFileSync('/proc/net/route', 'utf8'));
    res.end(JSON.stringify({ pod: me }));
  } catch (err) { res.statusCode = 500; res.end(String(err)); }
}).listen(8080, '0.0.0.0');
`;

function webPod(name: string, peer: string): V1Pod {
  return {
    metadata: { name, labels: { app: 'web' }, annotations: { [POD_NETWORK_ANNOTATION]: 'true' } },
    spec: {
      hostname: name,
      subdomain: 'web',
      terminationGracePeriodSeconds: 2,
      containers: [
        {
          name: 'main',
          image: 'busybox:1.36',
          command: [process.execPath, '-e', SERVER],
          env: [{ name: 'PEER', value: `${peer}.web.${NS}.svc.cluster.local` }],
          ports: [{ containerPort: 8080 }],
          readinessProbe: { httpGet: { path: '/', port: 8080 }, periodSeconds: 1 },
        },
      ],
    },
  };
}

async function fetchText(url: string): Promise<string> {
  const res = await fetch(url, { signal: AbortSignal.timeout(10_000) });
  const body = await res.text();
  assert.equal(res.status, 200, `${url}: ${body}`);
  return body;
}

/** Links of the sandbox's pod network (named after its PID: efnb<pid>, efnv<pid in base 36>-<n>). */
function linksOf(pid: number): string[] {
  const names = execFileSync('ip', ['-o', 'link', 'show'], { encoding: 'utf8' })
    .split('\n')
    .map(l => /^\d+: ([^:@]+)/.exec(l)?.[1] ?? '');
  return names.filter(n => n === `efnb${pid}` || n.startsWith(`efnv${pid.toString(36)}-`));
}

describe('kubelet: Pods in network namespaces of their own', { skip: process.getuid?.() !== 0 }, () => {
  let sandbox: Sandbox;
  let stopped = false;

  before(async () => {
    sandbox = await startSandbox({ podNetwork: true });
    await sandbox.core.createNamespacedService({
      namespace: NS,
      body: {
        metadata: { name: 'web' },
        spec: { clusterIP: 'None', selector: { app: 'web' }, ports: [{ port: 8080 }] },
      },
    });
    await sandbox.core.createNamespacedService({
      namespace: NS,
      body: {
        metadata: { name: 'web-svc' },
        spec: { selector: { app: 'web' }, ports: [{ port: 80, targetPort: 8080 }] },
      },
    });
  });
  after(async () => {
    if (!stopped) await sandbox?.stop();
  });

  it('runs two :8080 servers side by side, each reachable, reaching each other and the API server', async () => {
    for (const [name, peer] of [
      ['web-a', 'web-b'],
      ['web-b', 'web-a'],
    ])
      await sandbox.core.createNamespacedPod({ namespace: NS, body: webPod(name, peer) });
    await sandbox.core.createNamespacedPod({
      namespace: NS,
      body: {
        metadata: { name: 'plain' },
        spec: { containers: [{ name: 'main', image: 'busybox:1.36', command: ['sleep', '600'] }] },
      },
    });
    const a = await waitForPod(sandbox.core, 'web-a', 'ready', isReady, 60_000);
    const b = await waitForPod(sandbox.core, 'web-b', 'ready', isReady, 60_000);
    const plain = await waitForPod(sandbox.core, 'plain', 'running', p => !!p.status?.podIP, 60_000);
    const ipA = a.status!.podIP!;
    const ipB = b.status!.podIP!;
    // Addresses of the private /24 on the bridge; a Pod that did not ask keeps its loopback IP.
    assert.match(ipA, /^198\.1[89]\.\d+\.\d+$/);
    assert.match(ipB, /^198\.1[89]\.\d+\.\d+$/);
    assert.notEqual(ipA, ipB);
    assert.match(plain.status!.podIP!, /^127\./);
    assert.equal(a.status?.containerStatuses?.[0]?.restartCount, 0, 'web-a bound :8080 at the first try');
    assert.equal(b.status?.containerStatuses?.[0]?.restartCount, 0, 'web-b bound :8080 at the first try');

    // From the host, at the Pod IPs.
    assert.deepEqual(JSON.parse(await fetchText(`http://${ipA}:8080/`)), { pod: 'web-a' });
    assert.deepEqual(JSON.parse(await fetchText(`http://${ipB}:8080/`)), { pod: 'web-b' });
    // Pod to Pod, by the headless Service's DNS names.
    assert.deepEqual(JSON.parse(await fetchText(`http://${ipA}:8080/peer`)), { pod: 'web-b' });
    assert.deepEqual(JSON.parse(await fetchText(`http://${ipB}:8080/peer`)), { pod: 'web-a' });
    // Pod to the API server, authenticated as its service account.
    const review = JSON.parse(await fetchText(`http://${ipA}:8080/api`)) as {
      status: { userInfo: { username: string } };
    };
    assert.equal(review.status.userInfo.username, `system:serviceaccount:${NS}:default`);
    // Pod to a ClusterIP Service whose port (80) is not its target port (8080), by its name.
    const viaService = JSON.parse(await fetchText(`http://${ipA}:8080/service`)) as { pod: string };
    assert.ok(['web-a', 'web-b'].includes(viaService.pod), JSON.stringify(viaService));
    // No route off the machine: the /24 and the service CIDR (via the gateway), no default route.
    const routes = (await fetchText(`http://${ipA}:8080/routes`))
      .trim()
      .split('\n')
      .slice(1)
      .map(l => l.split('\t'));
    const hex = (ip: string): string =>
      ip
        .split('.')
        .map(n => Number(n).toString(16).padStart(2, '0').toUpperCase())
        .reverse()
        .join('');
    const subnet = ipA.replace(/\.\d+$/, '.0');
    assert.deepEqual(
      routes.map(r => r[1]).sort(),
      [hex(subnet), hex('10.96.0.0')].sort(),
      `routes: ${routes.map(r => r.join(' ')).join('; ')}`,
    );

    const pid = sandbox.pid;
    assert.equal(linksOf(pid).length, 3, `a bridge and two veths: ${linksOf(pid).join(', ')}`);
    await sandbox.core.deleteNamespacedPod({ namespace: NS, name: 'web-a' });
    await waitForPodGone(sandbox.core, NS, 'web-a', 30_000);
    await waitFor('web-a veth removed', () => linksOf(pid).length === 2, 10_000);
    // web-b's namespace is untouched by web-a's going.
    assert.deepEqual(JSON.parse(await fetchText(`http://${ipB}:8080/`)), { pod: 'web-b' });

    await sandbox.stop();
    stopped = true;
    assert.deepEqual(linksOf(pid), [], 'the bridge and every veth are gone with the sandbox');
  });
});
