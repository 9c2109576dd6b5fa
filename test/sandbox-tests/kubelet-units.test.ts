// The process kubelet's pure parts: $(VAR) expansion, path and address rewriting, image
// resolution, etcd defaults, Pod IP allocation, hosts file rendering and in-place rewriting, and the
// name server's wire format.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, statSync, readFileSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, it } from 'node:test';
import type { EtcdBinaries } from '../support/etcd-binaries.ts';
import { HostsFile, MANAGED_BEGIN, renderHosts } from '../sandbox/hosts.ts';
import { dnsEntries } from '../sandbox/kubelet/dns.ts';
import { answer } from '../sandbox/kubelet/dns-server.ts';
import {
  RCODE_FORMERR,
  RCODE_NOERROR,
  RCODE_NXDOMAIN,
  TYPE_A,
  TYPE_AAAA,
  parseQuery,
} from '../sandbox/kubelet/dns-wire.ts';
import { etcdServerDefaults } from '../sandbox/kubelet/etcd-defaults.ts';
import { expand } from '../sandbox/kubelet/expand.ts';
import { ImagePullError, containerArgv, resolveImage } from '../sandbox/kubelet/images.ts';
import type { ImageConfig } from '../sandbox/kubelet/images.ts';
import { PodIpAllocator } from '../sandbox/kubelet/ipam.ts';
import { knativePrograms } from '../sandbox/kubelet/knative-images.ts';
import { freeSubnets, wantsPodNetwork } from '../sandbox/kubelet/pod-network.ts';
import { probePath } from '../sandbox/kubelet/probes.ts';
import type { Pod } from '../sandbox/kubelet/types.ts';
import { addressRewriter, pathRewriter } from '../sandbox/kubelet/rewrite.ts';

const bins = (minor: '3.4' | '3.5', version: string): EtcdBinaries => ({
  minor,
  version,
  etcd: `/opt/etcd-${minor}/etcd`,
  etcdctl: `/opt/etcd-${minor}/etcdctl`,
  etcdutl: minor === '3.5' ? `/opt/etcd-${minor}/etcdutl` : undefined,
});

const images: ImageConfig = {
  etcd: new Map([
    ['3.4.23', bins('3.4', '3.4.23')],
    ['3.5.16', bins('3.5', '3.5.16')],
    ['3.5.35', bins('3.5', '3.5.35')],
  ]),
  agentImages: ['ghcr.io/etcdfn/etcdfn'],
  agentCommand: ['node', 'agent.ts'],
  hostImages: ['busybox'],
};

describe('kubelet units', () => {
  it('expands $(VAR) like Kubernetes', () => {
    const vars: Record<string, string> = { A: 'x', B: 'y' };
    const lookup = (n: string): string | undefined => vars[n];
    assert.equal(expand('$(A)-$(B)', lookup), 'x-y');
    assert.equal(expand('$(MISSING) $$(A) $A $$ $', lookup), '$(MISSING) $(A) $A $ $');
    assert.equal(expand('$(A', lookup), '$(A');
    // A member's IPv6 listen URL: the brackets are the flag's, the address the variable's.
    const v6 = (n: string): string | undefined => ({ POD_IP: 'fd00:10:244::7' })[n];
    assert.equal(
      expand('--listen-metrics-urls=https://[$(POD_IP)]:2381,http://[$(POD_IP)]:2382', v6),
      '--listen-metrics-urls=https://[fd00:10:244::7]:2381,http://[fd00:10:244::7]:2382',
    );
  });

  it('rewrites mount paths (longest first, once) and wildcard/loopback addresses', () => {
    const paths = pathRewriter([
      { containerPath: '/var/lib/etcd', hostPath: '/tmp/pvc' },
      { containerPath: '/var/lib/etcd/wal', hostPath: '/tmp/wal' },
      { containerPath: '/tmp', hostPath: '/nope' },
    ]);
    assert.equal(paths('--data-dir=/var/lib/etcd'), '--data-dir=/tmp/pvc');
    assert.equal(paths('/var/lib/etcd/data'), '/tmp/pvc/data');
    assert.equal(paths('--wal-dir /var/lib/etcd/wal/x'), '--wal-dir /tmp/wal/x');
    assert.equal(paths('ls /var/lib/etcdX; cat "/var/lib/etcd"'), 'ls /var/lib/etcdX; cat "/tmp/pvc"');
    const addr = addressRewriter('127.66.0.2', ['127.0.0.1:6443']);
    assert.equal(
      addr('--listen-client-urls=http://0.0.0.0:2379,http://127.0.0.1:2379'),
      '--listen-client-urls=http://127.66.0.2:2379,http://127.66.0.2:2379',
    );
    assert.equal(addr('http://[::]:2380'), 'http://127.66.0.2:2380');
    assert.equal(addr('--metrics-addr=:2381'), '--metrics-addr=127.66.0.2:2381');
    assert.equal(addr('https://localhost:2379'), 'https://127.66.0.2:2379');
    assert.equal(addr('--server=http://127.0.0.1:6443'), '--server=http://127.0.0.1:6443', 'kept address');
    assert.equal(addr('etcd-0.localhost.example:1'), 'etcd-0.localhost.example:1');
  });

  it('resolves images to the local binaries of exactly their version', () => {
    for (const [image, version] of [
      ['registry.k8s.io/etcd:3.5.16-0', '3.5.16'],
      ['quay.io/coreos/etcd:v3.5.35', '3.5.35'],
      ['gcr.io/etcd-development/etcd:v3.4.23', '3.4.23'],
    ] as const) {
      const r = resolveImage(image, images);
      assert.equal(r.kind, 'etcd');
      assert.equal(r.kind === 'etcd' && r.bins.version, version);
    }
    assert.throws(() => resolveImage('quay.io/coreos/etcd:v3.6.0', images), ImagePullError);
    // A patch that was never released is a registry's missing tag, whatever binaries are local.
    for (const tag of ['v3.5.99', '3.5.36', 'v3.4.38', 'v3.8.0']) {
      assert.throws(
        () => resolveImage(`quay.io/coreos/etcd:${tag}`, images),
        (err: Error) => err instanceof ImagePullError && /not found/.test(err.message),
        tag,
      );
    }
    // Released, but not built here: no image to run.
    assert.throws(
      () => resolveImage('quay.io/coreos/etcd:v3.5.21', images),
      (err: Error) => err instanceof ImagePullError && /no local etcd 3\.5\.21/.test(err.message),
    );
    assert.throws(() => resolveImage('nginx:1.25', images), /cannot run this image/);
    assert.equal(resolveImage('ghcr.io/etcdfn/etcdfn:dev', images).kind, 'agent');
    const etcd = resolveImage('registry.k8s.io/etcd:3.4.23-0', images);
    assert.deepEqual(containerArgv(etcd, [], ['--name=a'], images, '/usr/bin'), [
      '/opt/etcd-3.4/etcd',
      '--name=a',
    ]);
    assert.deepEqual(containerArgv(etcd, ['/usr/local/bin/etcdctl', 'get'], ['k'], images, '/usr/bin'), [
      '/opt/etcd-3.4/etcdctl',
      'get',
      'k',
    ]);
    const agent = resolveImage('ghcr.io/etcdfn/etcdfn:dev', images);
    assert.deepEqual(containerArgv(agent, ['/agent', 'restore'], ['--x'], images, '/usr/bin'), [
      'node',
      'agent.ts',
      'restore',
      '--x',
    ]);
    assert.deepEqual(containerArgv(agent, ['etcdutl', 'version'], [], images, '/usr/bin'), [
      '/opt/etcd-3.5/etcdutl',
      'version',
    ]);
    assert.throws(
      () => containerArgv(etcd, ['etcdutl'], [], images, '/usr/bin'),
      /executable file not found/,
    );
  });

  it('gives an etcd server without listen flags the Pod IP', () => {
    assert.deepEqual(etcdServerDefaults(['--name=m1'], {}, '127.1.1.1'), {
      ETCD_LISTEN_CLIENT_URLS: 'http://127.1.1.1:2379',
      ETCD_ADVERTISE_CLIENT_URLS: 'http://127.1.1.1:2379',
      ETCD_LISTEN_PEER_URLS: 'http://127.1.1.1:2380',
      ETCD_INITIAL_ADVERTISE_PEER_URLS: 'http://127.1.1.1:2380',
      ETCD_INITIAL_CLUSTER: 'm1=http://127.1.1.1:2380',
    });
    const explicit = [
      '--listen-client-urls=http://x:2379',
      '--advertise-client-urls=http://x:2379',
      '--listen-peer-urls',
      'http://x:2380',
    ];
    assert.deepEqual(etcdServerDefaults(explicit, {}, '127.1.1.1'), {});
    assert.deepEqual(etcdServerDefaults(['grpc-proxy', 'start'], {}, '127.1.1.1'), {});
  });

  it('allocates loopback Pod IPs from a base, never 127.0.0.1, reusing released ones', async () => {
    const ipam = new PodIpAllocator('127.0.0.0');
    const a = await ipam.allocate([]);
    const b = await ipam.allocate([]);
    assert.notEqual(a, '127.0.0.1');
    assert.notEqual(a, b);
    ipam.release(a);
    assert.equal(await ipam.allocate([]), a);
  });

  it('renders DNS entries and rewrites the hosts file in place', () => {
    const entries = dnsEntries({
      pods: () => [{ namespace: 'ns', ip: '127.5.0.2', hostname: 'e-0', subdomain: 'e' }],
      endpoints: () => [
        {
          metadata: { name: 'e', namespace: 'ns', uid: 'u' },
          subsets: [{ addresses: [{ ip: '127.5.0.2' }, { ip: '127.5.0.3' }] }],
        },
      ],
      service: () => ({ metadata: { name: 'e', namespace: 'ns', uid: 's' }, spec: { clusterIP: 'None' } }),
    });
    const text = renderHosts('127.0.0.1 localhost\n', entries);
    assert.equal(
      text,
      `127.0.0.1 localhost\n${MANAGED_BEGIN}\n` +
        '127.5.0.2\te-0.e.ns.svc e-0.e.ns.svc.cluster.local e.ns.svc e.ns.svc.cluster.local\n' +
        '127.5.0.3\te.ns.svc e.ns.svc.cluster.local\n',
    );
    const dir = mkdtempSync(join(tmpdir(), 'hosts-'));
    try {
      const path = join(dir, 'hosts');
      const hosts = new HostsFile(path, join(dir, 'missing'));
      const inode = statSync(path).ino;
      assert.equal(hosts.set(entries), true);
      assert.equal(hosts.set(entries), false);
      assert.equal(statSync(path).ino, inode, 'same inode after a rewrite');
      assert.match(readFileSync(path, 'utf8'), /^127\.0\.0\.1\tlocalhost\n/);
      hosts.set([]);
      assert.equal(readFileSync(path, 'utf8').includes('e.ns.svc'), false);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });
});

describe('kubelet units: Knative images and Pod namespaces', () => {
  it("maps Knative's ko:// images to the binaries built, and nothing else", () => {
    const dir = mkdtempSync(join(tmpdir(), 'etcdfn-knative-bins-'));
    try {
      for (const b of ['eventing-controller', 'imc-dispatcher']) writeFileSync(join(dir, b), '');
      const programs = knativePrograms(dir);
      assert.deepEqual([...programs.keys()].sort(), [
        'ko://knative.dev/eventing/cmd/controller',
        'ko://knative.dev/eventing/cmd/in_memory/channel_dispatcher',
      ]);
      const cfg = { ...images, programs };
      const controller = resolveImage('ko://knative.dev/eventing/cmd/controller', cfg);
      assert.equal(controller.kind, 'program');
      assert.deepEqual(containerArgv(controller, [], ['-v'], cfg, '/usr/bin'), [
        join(dir, 'eventing-controller'),
        '-v',
      ]);
      // Not built (or not Knative's): fails like a missing image.
      assert.throws(() => resolveImage('ko://knative.dev/eventing/cmd/webhook', cfg), ImagePullError);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('gives a namespace to annotated Pods and to Pods of Knative images only', () => {
    const pod = (image: string, annotations?: Record<string, string>): Pod => ({
      metadata: { name: 'p', uid: 'u', annotations },
      spec: { containers: [{ name: 'c', image }] },
    });
    assert.equal(wantsPodNetwork(pod('ko://knative.dev/eventing/cmd/broker/ingress')), true);
    assert.equal(wantsPodNetwork(pod('busybox', { 'sandbox.etcdfn.io/network-namespace': 'true' })), true);
    assert.equal(wantsPodNetwork(pod('registry.k8s.io/etcd:3.5.16-0')), false);
    assert.equal(wantsPodNetwork(pod('busybox', { 'sandbox.etcdfn.io/network-namespace': 'false' })), false);
  });

  it('roots an httpGet probe path as the kubelet does (ApiServerSource adapters probe "health")', () => {
    assert.equal(probePath('health'), '/health');
    assert.equal(probePath('/readyz'), '/readyz');
    assert.equal(probePath(undefined), '/');
  });

  it("picks Pod subnets in 198.18.0.0/15 that none of the machine's overlaps", () => {
    const start = (a: string): number => a.split('.').reduce((n, p) => n * 256 + Number(p), 0);
    assert.equal(freeSubnets([]).length, 512);
    const taken = [
      { start: start('198.18.0.0'), bits: 16 },
      { start: start('198.19.7.9'), bits: 32 },
    ];
    const free = freeSubnets(taken);
    assert.equal(free.length, 255);
    assert.ok(free.every(s => s.startsWith('198.19.') && s !== '198.19.7'));
    assert.deepEqual(freeSubnets([{ start: start('198.0.0.0'), bits: 8 }]), []);
  });
});

describe('sandbox name server: wire format', () => {
  // A query as resolvers send it: id, RD set, one question, and an EDNS0 OPT record we ignore.
  const query = (name: string, type: number, id = 0x1234): Buffer => {
    const labels = name.split('.').map(l => Buffer.concat([Buffer.from([l.length]), Buffer.from(l)]));
    const header = Buffer.from([id >> 8, id & 255, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 1]);
    const question = Buffer.concat([...labels, Buffer.from([0, type >> 8, type & 255, 0, 1])]);
    const opt = Buffer.from([0, 0, 41, 0x04, 0xd0, 0, 0, 0, 0, 0, 0]);
    return Buffer.concat([header, question, opt]);
  };
  const table: Record<string, string[]> = { 'a.b.ns.svc': ['127.100.0.1', '127.100.0.2'] };
  const lookup = (name: string): string[] => table[name] ?? [];

  it('answers A with every address, authoritative, echoing id, RD and the question', () => {
    const reply = answer(query('A.b.NS.svc', TYPE_A), lookup)!;
    assert.equal(reply.readUInt16BE(0), 0x1234);
    const flags = reply.readUInt16BE(2);
    assert.equal(flags & 0x8000, 0x8000, 'QR');
    assert.equal(flags & 0x0400, 0x0400, 'AA');
    assert.equal(flags & 0x0100, 0x0100, 'RD echoed');
    assert.equal(flags & 0xf, 0, 'NOERROR');
    assert.deepEqual([reply.readUInt16BE(4), reply.readUInt16BE(6)], [1, 2]);
    const q = parseQuery(query('A.b.NS.svc', TYPE_A))!;
    assert.equal(q.name, 'a.b.ns.svc');
    const answers = reply.subarray(12 + q.raw.length);
    assert.equal(answers.length, 32);
    assert.deepEqual([...answers.subarray(12, 16)], [127, 100, 0, 1]);
    assert.deepEqual([...answers.subarray(28, 32)], [127, 100, 0, 2]);
  });

  it('answers AAAA of a known name with no records, and an unknown name with NXDOMAIN', () => {
    const aaaa = answer(query('a.b.ns.svc', TYPE_AAAA), lookup)!;
    assert.deepEqual([aaaa.readUInt16BE(2) & 0xf, aaaa.readUInt16BE(6)], [RCODE_NOERROR, 0]);
    const missing = answer(query('x.b.ns.svc', TYPE_A), lookup)!;
    assert.deepEqual([missing.readUInt16BE(2) & 0xf, missing.readUInt16BE(6)], [RCODE_NXDOMAIN, 0]);
  });

  it('answers a message it cannot read with FORMERR, and a response with nothing', () => {
    const broken = answer(Buffer.from([0xab, 0xcd, 0x01, 0x00, 0, 1, 0, 0, 0, 0, 0, 0, 5, 0x61]), lookup)!;
    assert.deepEqual([broken.readUInt16BE(0), broken.readUInt16BE(2) & 0xf], [0xabcd, RCODE_FORMERR]);
    const response = query('a.b.ns.svc', TYPE_A);
    response.writeUInt16BE(0x8100, 2);
    assert.equal(answer(response, lookup)!.readUInt16BE(2) & 0xf, RCODE_FORMERR);
    assert.equal(answer(Buffer.from([1]), lookup), undefined);
  });
});
