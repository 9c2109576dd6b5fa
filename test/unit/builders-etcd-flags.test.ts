import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import { describe, it } from 'node:test';
import type { EtcdMember, EtcdMemberSpec } from '../../shared/api/etcd-member.ts';
import {
  defaultQuotaBackendBytes,
  etcdFlags,
  etcdMinor,
  initialClusterState,
} from '../../shared/builders/index.ts';
import type { PodIPFamily } from '../../shared/builders/etcd-listen.ts';
import { etcdBinaries, type EtcdMinor } from '../support/etcd-binaries.ts';
import { etcdMember } from '../support/etcd-objects.ts';

const NS = 'prod';

/** Member demo-abcde joining (not bootstrap), token prod-demo-uid; `memberID` in its status if given. */
function member(spec: Partial<EtcdMemberSpec> = {}, memberID?: string): EtcdMember {
  return etcdMember('demo-abcde', {
    metadata: { namespace: NS, uid: 'member-uid' },
    spec: { clusterToken: 'prod-demo-uid', bootstrap: false, ...spec },
    ...(memberID && { status: { memberID } }),
  });
}

/** The flags as a map; asserts no flag appears twice (etcd would take the last one silently). */
function flagMap(flags: string[]): Map<string, string> {
  const map = new Map<string, string>();
  for (const f of flags) {
    const [key, ...value] = f.split('=');
    assert.ok(key?.startsWith('--'), `not a flag: ${f}`);
    assert.ok(!map.has(key), `duplicate flag ${key}`);
    map.set(key, value.join('='));
  }
  return map;
}

const flagsOf = (m: EtcdMember, clusterFormed = false): Map<string, string> =>
  flagMap(etcdFlags(m, { namespace: NS, clusterFormed }));

describe('etcd flags: identity and URLs', () => {
  it('name, data dir, listen on the Pod IP only, advertise the stable DNS name', () => {
    const f = flagsOf(member());
    assert.equal(f.get('--name'), 'demo-abcde');
    assert.equal(f.get('--data-dir'), '/var/lib/etcd');
    assert.equal(f.get('--listen-peer-urls'), 'http://$(POD_IP):2380');
    assert.equal(f.get('--listen-client-urls'), 'http://$(POD_IP):2379');
    assert.equal(f.get('--advertise-client-urls'), 'http://demo-abcde.demo.prod.svc:2379');
    assert.equal(f.get('--initial-advertise-peer-urls'), 'http://demo-abcde.demo.prod.svc:2380');
    assert.equal(f.get('--initial-cluster'), 'demo-abcde=http://demo-abcde.demo.prod.svc:2380');
    assert.equal(f.get('--initial-cluster-token'), 'prod-demo-uid');
    assert.equal(f.get('--listen-metrics-urls'), 'http://$(POD_IP):2381');
  });

  it('a member that has not been added to etcd yet has no command line (a caller bug)', () => {
    assert.throws(
      () => etcdFlags(member({ initialCluster: '' }), { namespace: NS, clusterFormed: true }),
      /initialCluster/,
    );
  });
});

describe('etcd flags: --initial-cluster-state', () => {
  // Only a seed that has never been seen by etcd, in a cluster that never formed, starts a new one.
  const cases: { bootstrap: boolean; memberID?: string; clusterFormed: boolean; want: 'new' | 'existing' }[] =
    [
      { bootstrap: true, clusterFormed: false, want: 'new' },
      { bootstrap: true, memberID: '8e9e05c52164694d', clusterFormed: false, want: 'existing' },
      { bootstrap: true, clusterFormed: true, want: 'existing' },
      { bootstrap: true, memberID: '8e9e05c52164694d', clusterFormed: true, want: 'existing' },
      { bootstrap: false, clusterFormed: false, want: 'existing' },
      { bootstrap: false, clusterFormed: true, want: 'existing' },
      { bootstrap: false, memberID: '1', clusterFormed: true, want: 'existing' },
    ];
  for (const c of cases) {
    it(`seed=${c.bootstrap} memberID=${c.memberID ?? '-'} clusterFormed=${c.clusterFormed} → ${c.want}`, () => {
      const m = member({ bootstrap: c.bootstrap });
      const opts = {
        namespace: NS,
        clusterFormed: c.clusterFormed,
        ...(c.memberID && { memberID: c.memberID }),
      };
      assert.equal(flagMap(etcdFlags(m, opts)).get('--initial-cluster-state'), c.want);
    });
  }

  // A static bootstrap's initial member (the whole list in --initial-cluster) that has not run is
  // `new` however late its Pod is built: two late ones started `existing` hang in etcd asking each
  // other for their version. Once it has run, the empty-data guard decides (self only, existing).
  const ALL = [0, 1, 2, 3, 4].map(n => `demo-${n}=http://demo-${n}.demo.prod.svc:2380`).join(',');
  const initial = (status: EtcdMember['status'] = {}): EtcdMember => ({
    ...member({ bootstrap: true, initialCluster: ALL }),
    metadata: { name: 'demo-3', namespace: NS, uid: 'member-uid' },
    status,
  });
  const staticRows: { name: string; status: EtcdMember['status']; clusterFormed: boolean; want: string[] }[] =
    [
      { name: 'before the cluster formed', status: {}, clusterFormed: false, want: [ALL, 'new'] },
      { name: 'after the cluster formed', status: {}, clusterFormed: true, want: [ALL, 'new'] },
      {
        name: 'after the cluster formed, its ID listed by etcd (not started)',
        status: { memberID: '8e9e05c52164694d', isVoter: true },
        clusterFormed: true,
        want: [ALL, 'new'],
      },
      {
        name: 'once it has run: the guard',
        status: { memberID: '8e9e05c52164694d', isVoter: true, hasData: true },
        clusterFormed: true,
        want: ['demo-3=http://demo-3.demo.prod.svc:2380', 'existing'],
      },
      {
        name: 'has run, ID not recorded (no guard possible): existing',
        status: { hasData: true },
        clusterFormed: true,
        want: [ALL, 'existing'],
      },
    ];
  for (const r of staticRows) {
    it(`static initial member ${r.name} → ${r.want[1]}`, () => {
      const f = flagsOf(initial(r.status), r.clusterFormed);
      assert.deepEqual([f.get('--initial-cluster'), f.get('--initial-cluster-state')], r.want);
    });
  }

  it('a member ID recorded in the member status counts even when the caller does not pass it', () => {
    const seed = member({ bootstrap: true }, '8e9e05c52164694d');
    assert.equal(initialClusterState(seed, { namespace: NS, clusterFormed: false }), 'existing');
  });
});

describe('etcd flags per minor release', () => {
  const gates = '--feature-gates=InitialCorruptCheck=true,CompactHashCheck=true';
  const table: { version: string; has: string[]; lacks: string[] }[] = [
    {
      version: '3.4.23',
      has: ['--logger=zap', '--experimental-initial-corrupt-check=true', '--snapshot-count=100000'],
      lacks: ['--feature-gates', '--enable-v2', '--unsafe-no-fsync'],
    },
    {
      version: '3.5.35',
      has: ['--experimental-initial-corrupt-check=true', '--snapshot-count=100000'],
      lacks: ['--logger', '--feature-gates', '--enable-v2', '--unsafe-no-fsync'],
    },
    {
      version: '3.6.16',
      has: [gates, '--snapshot-count=10000'],
      lacks: ['--experimental-initial-corrupt-check', '--logger', '--enable-v2', '--unsafe-no-fsync'],
    },
    {
      version: '3.7.3',
      has: [gates, '--snapshot-count=10000'],
      lacks: ['--experimental-initial-corrupt-check', '--logger', '--enable-v2', '--unsafe-no-fsync'],
    },
  ];
  for (const row of table) {
    it(`${row.version}: ${row.has.join(' ')}`, () => {
      const flags = etcdFlags(member({ version: row.version }), { namespace: NS, clusterFormed: true });
      flagMap(flags);
      for (const want of row.has) assert.ok(flags.includes(want), `${row.version} should have ${want}`);
      for (const not of row.lacks) {
        assert.ok(
          !flags.some(f => f === not || f.startsWith(`${not}=`)),
          `${row.version} must not have ${not}`,
        );
      }
      assert.ok(!flags.some(f => f.startsWith('--experimental-') && row.version >= '3.6'), row.version);
    });
  }

  it("a snapshotCount in the spec wins over the minor's default", () => {
    for (const version of ['3.5.35', '3.6.16', '3.7.3']) {
      const f = flagMap(
        etcdFlags(member({ version, options: { snapshotCount: 5000 } }), {
          namespace: NS,
          clusterFormed: true,
        }),
      );
      assert.equal(f.get('--snapshot-count'), '5000', version);
    }
  });

  it('versions outside 3.4–3.7 are refused with a message naming the supported ones', () => {
    for (const v of ['3.3.27', '3.8.0', '4.0.0', '3.5', 'v3.5.16', '']) {
      assert.throws(() => etcdMinor(v), /use a 3\.4, 3\.5, 3\.6, 3\.7 release/, v);
    }
    assert.equal(etcdMinor('3.5.10'), '3.5');
    assert.equal(etcdMinor('3.6.16'), '3.6');
    assert.equal(etcdMinor('3.7.3'), '3.7');
  });

  // Every flag must exist in the real binary (etcd refuses to start on an unknown flag) and must not
  // be one that release calls deprecated; every feature gate must be one it lists.
  for (const minor of ['3.4', '3.5', '3.6', '3.7'] as EtcdMinor[]) {
    let help = '';
    try {
      const bins = etcdBinaries(minor);
      // etcd prints its help on stderr (3.4) or stdout: read both.
      const out = spawnSync(bins.etcd, ['--help'], { encoding: 'utf8', timeout: 10_000 });
      help = `${out.stdout}${out.stderr}`;
    } catch {
      help = '';
    }
    it(
      `every flag for ${minor} is one the real etcd ${minor} knows and does not call deprecated`,
      { skip: !help && 'etcd binary not installed' },
      () => {
        const m = member({
          version: `${minor}.0`,
          options: { autoCompactionMode: 'periodic', autoCompactionRetention: '1h', snapshotCount: 10000 },
          tls: { clientServerSecretRef: { name: 's' }, clientMTLS: true, peerSecretRef: { name: 'p' } },
        });
        const flags = flagMap(etcdFlags(m, { namespace: NS, clusterFormed: false }));
        for (const key of flags.keys()) {
          const entry = new RegExp(`\\s${key}\\s[^\\n]*\\n([^\\n]*)`).exec(help);
          assert.ok(entry, `etcd ${minor} does not know ${key}`);
          assert.doesNotMatch(entry[1] ?? '', /Deprecated in v/, `etcd ${minor} deprecates ${key}`);
        }
        for (const gate of (flags.get('--feature-gates') ?? '').split(',').filter(Boolean)) {
          const name = gate.split('=')[0];
          assert.match(
            help,
            new RegExp(`\\s${name}=true\\|false`),
            `etcd ${minor} has no feature gate ${name}`,
          );
        }
      },
    );
  }
});

describe('etcd flags: options', () => {
  it('compaction and snapshot count pass through', () => {
    const f = flagsOf(
      member({
        options: { autoCompactionMode: 'revision', autoCompactionRetention: '10000', snapshotCount: 5000 },
      }),
    );
    assert.equal(f.get('--auto-compaction-mode'), 'revision');
    assert.equal(f.get('--auto-compaction-retention'), '10000');
    assert.equal(f.get('--snapshot-count'), '5000');
  });

  it("unset options add no compaction flags, and the snapshot count of the member's minor", () => {
    const f = flagsOf(member());
    assert.equal(f.has('--auto-compaction-mode'), false);
    assert.equal(f.has('--auto-compaction-retention'), false);
    assert.equal(f.get('--snapshot-count'), '100000'); // the fixture runs 3.5.16
  });

  // The quota alarm must fire before the volume is full: half the volume, at most etcd's 2 GiB.
  const quota: { storage: EtcdMemberSpec['storage']; quota?: number; want: bigint }[] = [
    { storage: { size: '1Gi' }, want: 512n * 1024n ** 2n },
    { storage: {}, want: 512n * 1024n ** 2n },
    { storage: { size: '3Gi' }, want: 1536n * 1024n ** 2n },
    { storage: { size: '4Gi' }, want: 2n * 1024n ** 3n },
    { storage: { size: '100Gi' }, want: 2n * 1024n ** 3n },
    { storage: { size: '256Mi', medium: 'Memory' }, want: 128n * 1024n ** 2n },
    { storage: { size: 1000 }, want: 500n },
    { storage: { size: '1Gi' }, quota: 900 * 1024 ** 2, want: 900n * 1024n ** 2n },
    { storage: { size: '1Gi' }, quota: 0, want: 512n * 1024n ** 2n },
  ];
  for (const q of quota) {
    it(`quota for storage ${JSON.stringify(q.storage)}${q.quota !== undefined ? ` with ${q.quota}` : ''} is ${q.want}`, () => {
      const m = member({
        storage: q.storage,
        ...(q.quota !== undefined && { options: { quotaBackendBytes: q.quota } }),
      });
      assert.equal(flagsOf(m).get('--quota-backend-bytes'), String(q.want));
      if (q.quota === undefined) assert.equal(defaultQuotaBackendBytes(m), q.want);
    });
  }
});

describe('etcd flags: TLS', () => {
  it('plaintext members use http everywhere and no certificate flags', () => {
    const flags = etcdFlags(member(), { namespace: NS, clusterFormed: true });
    assert.ok(!flags.some(f => f.includes('https') || f.includes('cert') || f.includes('/etc/etcd/tls')));
  });

  it('server TLS without client certificates', () => {
    const f = flagsOf(member({ tls: { clientServerSecretRef: { name: 's' }, clientMTLS: false } }));
    assert.equal(f.get('--listen-client-urls'), 'https://$(POD_IP):2379');
    assert.equal(f.get('--advertise-client-urls'), 'https://demo-abcde.demo.prod.svc:2379');
    assert.equal(f.get('--cert-file'), '/etc/etcd/tls/client/tls.crt');
    assert.equal(f.get('--key-file'), '/etc/etcd/tls/client/tls.key');
    assert.equal(f.has('--client-cert-auth'), false);
    assert.equal(f.has('--trusted-ca-file'), false);
    assert.equal(f.get('--listen-peer-urls'), 'http://$(POD_IP):2380');
    // Clients use TLS without certificates: so does the probe, and so can metrics.
    assert.equal(f.get('--listen-metrics-urls'), 'https://$(POD_IP):2381');
  });

  it('mutual client TLS requires client certificates signed by the CA', () => {
    const f = flagsOf(member({ tls: { clientServerSecretRef: { name: 's' }, clientMTLS: true } }));
    assert.equal(f.get('--client-cert-auth'), 'true');
    assert.equal(f.get('--trusted-ca-file'), '/etc/etcd/tls/client/ca.crt');
    // Metrics over TLS with the client port's rules (a client certificate); the kubelet's probe
    // cannot present one, so it reads /health from a plain listener of its own on port 2382.
    assert.equal(f.get('--listen-metrics-urls'), 'https://$(POD_IP):2381,http://$(POD_IP):2382');
    assert.equal(f.has('--client-cert-allowed-hostname'), false, 'no pin unless the spec carries one');
  });

  it('a pinned member accepts only certificates that name its cluster (cert-manager, a possibly shared issuer)', () => {
    const f = flagsOf(
      member({
        tls: {
          clientServerSecretRef: { name: 's' },
          clientMTLS: true,
          clientAllowedHostname: 'demo-client.prod.svc',
          peerSecretRef: { name: 'p' },
          peerAllowedHostname: 'member.demo.prod.svc',
        },
      }),
    );
    assert.equal(f.get('--client-cert-allowed-hostname'), 'demo-client.prod.svc');
    assert.equal(f.get('--peer-cert-allowed-hostname'), 'member.demo.prod.svc');
    // The same flag spelling for every minor etcdfn runs (etcd --help of 3.4.23, 3.5.35, 3.6.16, 3.7.3).
    for (const version of ['3.4.23', '3.5.16']) {
      const pinned = flagsOf(
        member({
          version,
          tls: { peerSecretRef: { name: 'p' }, peerAllowedHostname: 'member.demo.prod.svc' },
        }),
      );
      assert.equal(pinned.get('--peer-cert-allowed-hostname'), 'member.demo.prod.svc', version);
    }
    // A client pin without client certificates means nothing: not passed.
    const noMtls = flagsOf(
      member({
        tls: { clientServerSecretRef: { name: 's' }, clientAllowedHostname: 'demo-client.prod.svc' },
      }),
    );
    assert.equal(noMtls.has('--client-cert-allowed-hostname'), false);
  });

  it('nothing listens on a wildcard address', () => {
    for (const tls of [
      undefined,
      { clientServerSecretRef: { name: 's' }, clientMTLS: true, peerSecretRef: { name: 'p' } },
    ]) {
      const flags = etcdFlags(member(tls ? { tls } : {}), { namespace: NS, clusterFormed: true });
      const listen = flags.filter(f => f.startsWith('--listen-'));
      assert.equal(listen.length, 3, listen.join(' '));
      for (const flag of listen) {
        const [name, urls = ''] = flag.split('=');
        assert.match(name ?? '', /^--listen-(client|peer|metrics)-urls$/);
        for (const url of urls.split(','))
          assert.match(url, /^https?:\/\/\$\(POD_IP\):23(79|80|81|82)$/, flag);
      }
    }
  });

  it('peer TLS is always mutual', () => {
    const f = flagsOf(member({ tls: { peerSecretRef: { name: 'p' } } }));
    assert.equal(f.get('--listen-peer-urls'), 'https://$(POD_IP):2380');
    assert.equal(f.get('--initial-advertise-peer-urls'), 'https://demo-abcde.demo.prod.svc:2380');
    assert.equal(f.get('--peer-cert-file'), '/etc/etcd/tls/peer/tls.crt');
    assert.equal(f.get('--peer-key-file'), '/etc/etcd/tls/peer/tls.key');
    assert.equal(f.get('--peer-trusted-ca-file'), '/etc/etcd/tls/peer/ca.crt');
    assert.equal(f.get('--peer-client-cert-auth'), 'true');
    assert.equal(f.get('--listen-client-urls'), 'http://$(POD_IP):2379');
  });
});

describe('etcd flags: the Pod IP in listen URLs, IPv4 and IPv6', () => {
  const MTLS = { clientServerSecretRef: { name: 's' }, clientMTLS: true, peerSecretRef: { name: 'p' } };
  const SERVER_TLS = { clientServerSecretRef: { name: 's' } };
  const cases: {
    family: PodIPFamily | undefined;
    tls?: EtcdMemberSpec['tls'];
    client: string;
    peer: string;
    metrics: string;
  }[] = [
    {
      family: undefined,
      client: 'http://$(POD_IP):2379',
      peer: 'http://$(POD_IP):2380',
      metrics: 'http://$(POD_IP):2381',
    },
    {
      family: 'IPv4',
      tls: SERVER_TLS,
      client: 'https://$(POD_IP):2379',
      peer: 'http://$(POD_IP):2380',
      metrics: 'https://$(POD_IP):2381',
    },
    {
      family: 'IPv4',
      tls: MTLS,
      client: 'https://$(POD_IP):2379',
      peer: 'https://$(POD_IP):2380',
      metrics: 'https://$(POD_IP):2381,http://$(POD_IP):2382',
    },
    {
      family: 'IPv6',
      client: 'http://[$(POD_IP)]:2379',
      peer: 'http://[$(POD_IP)]:2380',
      metrics: 'http://[$(POD_IP)]:2381',
    },
    {
      family: 'IPv6',
      tls: SERVER_TLS,
      client: 'https://[$(POD_IP)]:2379',
      peer: 'http://[$(POD_IP)]:2380',
      metrics: 'https://[$(POD_IP)]:2381',
    },
    {
      family: 'IPv6',
      tls: MTLS,
      client: 'https://[$(POD_IP)]:2379',
      peer: 'https://[$(POD_IP)]:2380',
      metrics: 'https://[$(POD_IP)]:2381,http://[$(POD_IP)]:2382',
    },
  ];
  for (const c of cases) {
    const mode = !c.tls ? 'plaintext' : c.tls.clientMTLS ? 'client mTLS' : 'server TLS';
    it(`${c.family ?? 'unset (IPv4)'}, ${mode}`, () => {
      const f = flagMap(
        etcdFlags(member(c.tls ? { tls: c.tls } : {}), {
          namespace: NS,
          clusterFormed: true,
          ...(c.family && { podIPFamily: c.family }),
        }),
      );
      assert.equal(f.get('--listen-client-urls'), c.client);
      assert.equal(f.get('--listen-peer-urls'), c.peer);
      assert.equal(f.get('--listen-metrics-urls'), c.metrics);
      // Advertised URLs are DNS names, whatever the family.
      assert.match(f.get('--advertise-client-urls') ?? '', /^https?:\/\/demo-abcde\.demo\.prod\.svc:2379$/);
      assert.match(
        f.get('--initial-advertise-peer-urls') ?? '',
        /^https?:\/\/demo-abcde\.demo\.prod\.svc:2380$/,
      );
    });
  }

  it('each URL, once the kubelet expands $(POD_IP), is a URL whose host:port etcd can bind', () => {
    for (const [family, ip] of [
      ['IPv4', '10.244.1.7'],
      ['IPv6', 'fd00:10:244::7'],
    ] as const) {
      const flags = etcdFlags(member({ tls: MTLS }), {
        namespace: NS,
        clusterFormed: true,
        podIPFamily: family,
      });
      for (const flag of flags.filter(f => f.startsWith('--listen-'))) {
        for (const raw of flag.slice(flag.indexOf('=') + 1).split(',')) {
          const url = new URL(raw.replaceAll('$(POD_IP)', ip));
          // Go's net.SplitHostPort wants brackets around an IPv6 host; WHATWG URL keeps them.
          assert.equal(url.hostname, family === 'IPv6' ? `[${ip}]` : ip, raw);
          assert.match(url.port, /^238[0-2]$|^2379$/, raw);
        }
      }
    }
  });
});
