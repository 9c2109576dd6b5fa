// Valid and invalid values for every x-kubernetes-validations rule in crds/. A rule is found by
// (kind, schema path, a piece of its message); crd-rules.test.ts fails when a rule in crds/ has no
// entry here, or an entry matches no rule. `self` is the value at the rule's path, `oldSelf` the
// old one on update; crd-rules.test.ts puts them into whole objects and asks the real API server.

export interface Case {
  self: unknown;
  oldSelf?: unknown;
  /** today's rules refuse oldSelf on create: it exists only as stored under older, looser rules */
  oldStoredUnderOlderRules?: boolean;
}

export interface RuleCases {
  kind: string;
  path: string;
  match: string;
  valid: Case[];
  invalid: Case[];
}

const spec = (extra: Record<string, unknown> = {}) => ({
  replicas: 3,
  version: '3.5.16',
  storage: { size: '1Gi', medium: '' },
  progressDeadlineSeconds: 600,
  ...extra,
});
const memory = (extra: Record<string, unknown> = {}) =>
  spec({ storage: { size: '1Gi', medium: 'Memory' }, ...extra });
const inPlace = (requestID: string, snapshot: string) => ({ requestID, snapshotRef: { name: snapshot } });
const same = (self: unknown): Case => ({ self, oldSelf: self });
const update = (oldSelf: unknown, self: unknown): Case => ({ self, oldSelf });
/** An update from an old value that today's rules refuse (stored while older rules allowed it). */
const olderRules = (c: Case): Case => ({ ...c, oldStoredUnderOlderRules: true });

const ref = (name: string) => ({ name });
const s3 = (extra: Record<string, unknown> = {}) => ({
  endpoint: 'https://s3.eu-west-1.amazonaws.com',
  bucket: 'backups',
  credentialsSecretRef: ref('s3-creds'),
  ...extra,
});
const pvc = (extra: Record<string, unknown> = {}) => ({ claimName: 'snapshots', ...extra });

const tlsA = { client: { serverSecretRef: ref('etcd-server') }, peer: { secretRef: ref('etcd-peer') } };
const tlsB = { client: { serverSecretRef: ref('etcd-server-2') }, peer: { secretRef: ref('etcd-peer') } };
const authA = { enabled: true, rootCredentialsSecretRef: ref('root') };
const authB = { enabled: true, rootCredentialsSecretRef: ref('root-2') };
const restoreS3 = { restore: { source: { s3: s3({ key: 'etcd/snap-1.db' }) } } };
const restorePvc = { restore: { source: { pvc: pvc({ subPath: 'etcd/snap-1.db' }) } } };

const clusterSpecRules: Omit<RuleCases, 'kind' | 'path'>[] = [
  {
    match: 'replicas must be at most 9',
    valid: [
      { self: spec() },
      { self: spec({ replicas: 0 }) },
      { self: spec({ replicas: 9 }) },
      update(spec({ replicas: 3 }), spec({ replicas: 7 })),
    ],
    invalid: [{ self: spec({ replicas: 10 }) }, update(spec({ replicas: 9 }), spec({ replicas: 11 }))],
  },
  {
    match: 'replicas 0 (pause)',
    valid: [
      { self: spec() },
      { self: spec({ replicas: 0 }) },
      { self: memory() },
      { self: memory({ replicas: 1 }) },
    ],
    invalid: [{ self: memory({ replicas: 0 }) }],
  },
  {
    match: 'spec.tls cannot be added',
    valid: [same(spec()), same(spec({ tls: tlsA })), update(spec({ tls: tlsA }), spec({ tls: tlsB }))],
    invalid: [update(spec(), spec({ tls: tlsA })), update(spec({ tls: tlsA }), spec())],
  },
  {
    match: 'spec.tls cannot be changed',
    valid: [same(spec()), same(spec({ tls: tlsA })), update(spec(), spec({ tls: tlsA }))],
    invalid: [
      update(spec({ tls: tlsA }), spec({ tls: tlsB })),
      update(spec({ tls: tlsA }), spec({ tls: { client: tlsA.client } })),
    ],
  },
  {
    match: 'storageClassName cannot be added',
    valid: [
      same(spec()),
      same(spec({ storage: { size: '1Gi', medium: '', storageClassName: 'fast' } })),
      update(
        spec({ storage: { size: '1Gi', medium: '', storageClassName: 'fast' } }),
        spec({ storage: { size: '1Gi', medium: '', storageClassName: 'slow' } }),
      ),
    ],
    invalid: [
      update(spec(), spec({ storage: { size: '1Gi', medium: '', storageClassName: 'fast' } })),
      update(spec({ storage: { size: '1Gi', medium: '', storageClassName: '' } }), spec()),
    ],
  },
  {
    match: 'storageClassName cannot be changed',
    valid: [
      same(spec()),
      same(spec({ storage: { size: '1Gi', medium: '', storageClassName: 'fast' } })),
      update(
        spec({ storage: { size: '1Gi', medium: '', storageClassName: 'fast' } }),
        spec({ storage: { size: '2Gi', medium: '', storageClassName: 'fast' } }),
      ),
    ],
    invalid: [
      update(
        spec({ storage: { size: '1Gi', medium: '', storageClassName: 'fast' } }),
        spec({ storage: { size: '1Gi', medium: '', storageClassName: 'slow' } }),
      ),
      update(
        spec({ storage: { size: '1Gi', medium: '', storageClassName: '' } }),
        spec({ storage: { size: '1Gi', medium: '', storageClassName: 'fast' } }),
      ),
    ],
  },
  {
    match: 'spec.auth cannot be added',
    valid: [same(spec()), same(spec({ auth: authA })), update(spec({ auth: authA }), spec({ auth: authB }))],
    invalid: [update(spec(), spec({ auth: authA })), update(spec({ auth: authA }), spec())],
  },
  {
    match: 'spec.auth cannot be changed',
    valid: [same(spec()), same(spec({ auth: authA })), update(spec(), spec({ auth: authA }))],
    invalid: [
      update(spec({ auth: authA }), spec({ auth: authB })),
      update(spec({ auth: authA }), spec({ auth: { ...authA, enabled: false } })),
    ],
  },
  {
    match: 'needs spec.auth.rootCredentialsSecretRef',
    valid: [
      { self: spec() },
      { self: spec({ auth: authA, tls: tlsA }) },
      { self: spec({ auth: { enabled: false } }) },
    ],
    invalid: [{ self: spec({ auth: { enabled: true }, tls: tlsA }) }],
  },
  {
    match: 'spec.bootstrap cannot be added',
    valid: [
      same(spec()),
      same(spec({ bootstrap: restoreS3 })),
      update(spec({ bootstrap: restoreS3 }), spec({ bootstrap: restorePvc })),
    ],
    invalid: [update(spec(), spec({ bootstrap: restoreS3 })), update(spec({ bootstrap: restoreS3 }), spec())],
  },
  {
    match: 'spec.bootstrap cannot be changed',
    valid: [
      same(spec()),
      same(spec({ bootstrap: restoreS3 })),
      update(spec(), spec({ bootstrap: restoreS3 })),
    ],
    invalid: [
      update(spec({ bootstrap: restoreS3 }), spec({ bootstrap: restorePvc })),
      update(spec({ bootstrap: restoreS3 }), spec({ bootstrap: {} })),
    ],
  },
  {
    match: 'spec.inPlaceRestore cannot be changed under the same requestID',
    valid: [
      same(spec({ inPlaceRestore: inPlace('r1', 'a') })),
      update(spec({ inPlaceRestore: inPlace('r1', 'a') }), spec({ inPlaceRestore: inPlace('r2', 'b') })),
      update(spec(), spec({ inPlaceRestore: inPlace('r1', 'a') })),
      update(spec({ inPlaceRestore: inPlace('r1', 'a') }), spec()),
    ],
    invalid: [
      update(spec({ inPlaceRestore: inPlace('r1', 'a') }), spec({ inPlaceRestore: inPlace('r1', 'b') })),
    ],
  },
  {
    match: 'spec.inPlaceRestore needs a running cluster',
    valid: [
      update(spec(), spec({ inPlaceRestore: inPlace('r1', 'a') })),
      update(
        spec({ inPlaceRestore: inPlace('r1', 'a') }),
        spec({ replicas: 0, inPlaceRestore: inPlace('r1', 'a') }),
      ),
      same(spec({ replicas: 0 })),
    ],
    invalid: [
      update(spec({ replicas: 0 }), spec({ replicas: 0, inPlaceRestore: inPlace('r1', 'a') })),
      update(
        spec({ inPlaceRestore: inPlace('r1', 'a') }),
        spec({ replicas: 0, inPlaceRestore: inPlace('r2', 'a') }),
      ),
      update(spec(), spec({ replicas: 0, inPlaceRestore: inPlace('r1', 'a') })),
    ],
  },
  {
    match: 'spec.inPlaceRestore needs persistent storage',
    valid: [{ self: spec({ inPlaceRestore: inPlace('r1', 'a') }) }, { self: memory() }],
    invalid: [{ self: memory({ inPlaceRestore: inPlace('r1', 'a') }) }],
  },
  {
    match: 'spec.bootstrap.restore needs persistent storage',
    valid: [
      { self: spec({ bootstrap: restoreS3 }) },
      { self: memory() },
      { self: memory({ bootstrap: {} }) },
    ],
    invalid: [{ self: memory({ bootstrap: restoreS3 }) }, { self: memory({ bootstrap: restorePvc }) }],
  },
  {
    match: 'spec.recovery.policy RestoreLatestSnapshot needs persistent storage',
    valid: [
      { self: spec({ recovery: { policy: 'RestoreLatestSnapshot' } }) },
      { self: memory({ recovery: { policy: 'ReportOnly' } }) },
      { self: memory({ recovery: {} }) },
    ],
    invalid: [{ self: memory({ recovery: { policy: 'RestoreLatestSnapshot' } }) }],
  },
  {
    match: 'quotaBackendBytes must not exceed storage.size',
    valid: [
      { self: spec() },
      { self: spec({ options: {} }) },
      { self: spec({ options: { quotaBackendBytes: 0 } }) },
      { self: spec({ options: { quotaBackendBytes: 1073741824 } }) },
      { self: spec({ storage: { size: '10Gi', medium: '' }, options: { quotaBackendBytes: 8589934592 } }) },
      { self: spec({ storage: { size: 2000, medium: '' }, options: { quotaBackendBytes: 2000 } }) },
    ],
    invalid: [
      { self: spec({ options: { quotaBackendBytes: 2147483648 } }) },
      { self: spec({ options: { quotaBackendBytes: 1073741825 } }) },
      { self: spec({ storage: { size: 2000, medium: '' }, options: { quotaBackendBytes: 2001 } }) },
      {
        self: memory({
          storage: { size: '512Mi', medium: 'Memory' },
          options: { quotaBackendBytes: 1073741824 },
        }),
      },
    ],
  },
];

const versionRules: Omit<RuleCases, 'kind' | 'path'>[] = [
  {
    match: 'must be an etcd release of the 3.4 or 3.5 series',
    valid: [{ self: '3.4.23' }, { self: '3.5.16' }, { self: '3.6.0' }, { self: '3.5.100' }],
    invalid: [
      { self: '3.3.9' },
      { self: '3.7.0' },
      { self: '4.5.0' },
      { self: '3.5' },
      { self: 'v3.5.1' },
      { self: '3.5.1-rc.0' },
      { self: '13.5.1' },
    ],
  },
  {
    match: 'etcd 3.6 is not supported yet',
    valid: [{ self: '3.4.23' }, { self: '3.5.16' }, { self: '3.5.6' }, { self: '3.7.0' }],
    invalid: [{ self: '3.6.0' }, { self: '3.6.4' }, { self: '3.6.16' }],
  },
  {
    match: 'at most one minor release per change',
    valid: [
      update('3.5.16', '3.5.16'),
      update('3.5.16', '3.5.17'),
      update('3.5.16', '3.5.10'),
      update('3.4.23', '3.5.0'),
      update('3.5.16', '3.6.1'),
      olderRules(update('3.2.0', '3.6.1')),
    ],
    invalid: [update('3.4.23', '3.6.0'), update('3.5.0', '3.4.23'), olderRules(update('3.6.1', '3.5.16'))],
  },
];

const storageRules: Omit<RuleCases, 'kind' | 'path'>[] = [
  {
    match: 'storage.size must be greater than zero',
    valid: [{ self: '1Gi' }, { self: 1 }, { self: '100m' }, { self: '1e9' }],
    invalid: [{ self: '0' }, { self: 0 }, { self: '0Gi' }, { self: '-1Gi' }],
  },
  {
    match: 'storage.size cannot be decreased',
    valid: [
      update('1Gi', '2Gi'),
      update('1Gi', '1024Mi'),
      update(1073741824, '1Gi'),
      update('1G', '1Gi'),
      same(5),
    ],
    invalid: [update('2Gi', '1Gi'), update('1Gi', '1000Mi'), update('1Gi', 1073741823), update('1Gi', '1G')],
  },
];
const mediumRules: Omit<RuleCases, 'kind' | 'path'>[] = [
  {
    match: 'storage.medium cannot be changed',
    valid: [same(''), same('Memory')],
    invalid: [update('', 'Memory'), update('Memory', '')],
  },
];

const restoreRules: Omit<RuleCases, 'kind' | 'path'>[] = [
  {
    match: 'restore.source.s3.key must name the exact snapshot object',
    valid: [restoreS3.restore, restorePvc.restore].map(self => ({ self })),
    invalid: [{ self: { source: { s3: s3() } } }, { self: { source: { s3: s3({ key: '' }) } } }],
  },
  {
    match: 'restore.source.pvc.subPath must be the path of the snapshot file',
    valid: [restoreS3.restore, restorePvc.restore].map(self => ({ self })),
    invalid: [{ self: { source: { pvc: pvc() } } }, { self: { source: { pvc: pvc({ subPath: '' }) } } }],
  },
];

const locationRule: Omit<RuleCases, 'kind' | 'path'> = {
  match: 'exactly one of s3 or pvc',
  valid: [{ self: { s3: s3() } }, { self: { pvc: pvc() } }],
  invalid: [{ self: {} }, { self: { s3: s3(), pvc: pvc() } }],
};
const s3Rule: Omit<RuleCases, 'kind' | 'path'> = {
  match: 's3.endpoint must be a URL',
  valid: [
    { self: s3() },
    { self: s3({ endpoint: 'http://minio.minio.svc:9000' }) },
    { self: s3({ endpoint: 'https://10.0.0.5:9000/' }) },
  ],
  invalid: [
    { self: s3({ endpoint: 's3.amazonaws.com' }) },
    { self: s3({ endpoint: 'https://' }) },
    { self: s3({ endpoint: 'ftp://files.example.com' }) },
  ],
};
const pvcRule: Omit<RuleCases, 'kind' | 'path'> = {
  match: 'pvc.subPath must be a relative path',
  valid: [
    { self: pvc() },
    { self: pvc({ subPath: 'etcd' }) },
    { self: pvc({ subPath: 'backups/etcd/snap.db' }) },
    { self: pvc({ subPath: 'a..b' }) },
  ],
  invalid: [
    { self: pvc({ subPath: '/etc' }) },
    { self: pvc({ subPath: '..' }) },
    { self: pvc({ subPath: '../other' }) },
    { self: pvc({ subPath: 'a/../../b' }) },
  ],
};

const restoreSourceRule: Omit<RuleCases, 'kind' | 'path'> = {
  match: 'exactly one of s3, pvc or snapshotRef',
  valid: [{ self: { s3: s3() } }, { self: { pvc: pvc() } }, { self: { snapshotRef: ref('nightly') } }],
  invalid: [
    { self: {} },
    { self: { sha256: 'a'.repeat(64) } },
    { self: { s3: s3(), pvc: pvc() } },
    { self: { s3: s3(), snapshotRef: ref('nightly') } },
    { self: { pvc: pvc(), snapshotRef: ref('nightly') } },
  ],
};
const sha256Rule: Omit<RuleCases, 'kind' | 'path'> = {
  match: 'source.sha256 must be 64 hexadecimal digits',
  valid: [{ self: 'ab'.repeat(32) }, { self: `sha256:${'AB'.repeat(32)}` }],
  invalid: [
    { self: '' },
    { self: 'ab'.repeat(31) },
    { self: `md5:${'ab'.repeat(32)}` },
    { self: 'z'.repeat(64) },
  ],
};

function restoreSourceRules(kind: string, path: string, withRef: boolean): RuleCases[] {
  return [
    withRef ? { kind, path, ...restoreSourceRule } : { kind, path, ...locationRule },
    { kind, path: `${path}.s3`, ...s3Rule },
    { kind, path: `${path}.pvc`, ...pvcRule },
    { kind, path: `${path}.sha256`, ...sha256Rule },
  ];
}

function locationRules(kind: string, path: string): RuleCases[] {
  return [
    { kind, path, ...locationRule },
    { kind, path: `${path}.s3`, ...s3Rule },
    { kind, path: `${path}.pvc`, ...pvcRule },
  ];
}

/** EtcdSnapshot to a PVC: the file is kept when the EtcdSnapshot goes (no Delete for PVCs). */
const pvcRetainRule: Omit<RuleCases, 'kind' | 'path'> = {
  match: 'deletionPolicy Delete is supported for destination.s3 only',
  valid: [
    { self: { clusterRef: ref('main'), destination: { pvc: pvc() } } },
    {
      self: {
        clusterRef: ref('main'),
        destination: { pvc: pvc({ subPath: 'etcd' }) },
        deletionPolicy: 'Retain',
      },
    },
    { self: { clusterRef: ref('main'), destination: { s3: s3() }, deletionPolicy: 'Delete' } },
  ],
  invalid: [{ self: { clusterRef: ref('main'), destination: { pvc: pvc() }, deletionPolicy: 'Delete' } }],
};

function at(kind: string, path: string, rules: Omit<RuleCases, 'kind' | 'path'>[]): RuleCases[] {
  return rules.map(r => ({ kind, path, ...r }));
}

const snapshotSpec = (extra: Record<string, unknown> = {}) => ({
  clusterRef: ref('main'),
  destination: { s3: s3({ key: 'etcd/' }) },
  ...extra,
});

export const RULE_CASES: RuleCases[] = [
  // EtcdCluster
  ...at('EtcdCluster', '.spec', clusterSpecRules),
  ...at('EtcdCluster', '.spec.version', versionRules),
  ...at('EtcdCluster', '.spec.storage.size', storageRules),
  ...at('EtcdCluster', '.spec.storage.medium', mediumRules),
  {
    kind: 'EtcdCluster',
    path: '.spec.maintenance.defrag.threshold',
    match: 'unusedFraction is a share of the database',
    valid: ['0.5', '0.3', '.25', '0', '1', '50%', '7.5%', '0%'].map(f => ({
      self: { unusedFraction: f, minUnusedBytes: '100Mi' },
    })),
    invalid: ['1.5', '2', '50', '100%', '-0.1', 'half', '0.5%%', ''].map(f => ({
      self: { unusedFraction: f, minUnusedBytes: '100Mi' },
    })),
  },
  {
    kind: 'EtcdCluster',
    path: '.spec.maintenance.defrag.threshold',
    match: 'minUnusedBytes is a whole number of bytes',
    valid: [0, 1048576, '100Mi', '1Gi', '0', '512k'].map(b => ({
      self: { unusedFraction: '0.5', minUnusedBytes: b },
    })),
    invalid: [-1, '-1Mi', 'lots', '0.5', '100m'].map(b => ({
      self: { unusedFraction: '0.5', minUnusedBytes: b },
    })),
  },
  {
    kind: 'EtcdCluster',
    path: '.spec.maintenance.defrag.schedule',
    match: 'maintenance.defrag.schedule must be five cron fields',
    valid: ['* * * * *', '0 3 * * 0', '0 2 * * SUN', '@weekly', '@every 24h', '@every 1h30m'].map(self => ({
      self,
    })),
    invalid: ['', '* * * *', '@reboot', '@every 30s', 'TZ=UTC 0 3 * * *', 'weekly', ' 0 3 * * *'].map(
      self => ({
        self,
      }),
    ),
  },
  {
    kind: 'EtcdCluster',
    path: '.spec.maintenance.defrag.timeZone',
    match: 'maintenance.defrag.timeZone must be an IANA time zone',
    valid: ['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Etc/GMT+2'].map(self => ({ self })),
    invalid: ['', 'Europe/', '+02:00', 'UTC 1'].map(self => ({ self })),
  },
  {
    kind: 'EtcdCluster',
    path: '.spec.tls.client',
    match: 'needs exactly one certificate source',
    valid: [
      { self: { serverSecretRef: ref('srv') } },
      { self: { serverSecretRef: ref('srv'), operatorClientSecretRef: ref('op') } },
      { self: { certManager: { serverIssuerRef: ref('ca') } } },
      { self: { auto: {} } },
    ],
    invalid: [
      { self: {} },
      { self: { operatorClientSecretRef: ref('op') } },
      { self: { serverSecretRef: ref('srv'), certManager: { serverIssuerRef: ref('ca') } } },
      { self: { certManager: { serverIssuerRef: ref('ca') }, auto: {} } },
      { self: { serverSecretRef: ref('srv'), certManager: { serverIssuerRef: ref('ca') }, auto: {} } },
    ],
  },
  {
    kind: 'EtcdCluster',
    path: '.spec.tls.client',
    match: 'operatorClientSecretRef only goes with serverSecretRef',
    valid: [
      { self: { serverSecretRef: ref('srv'), operatorClientSecretRef: ref('op') } },
      { self: { certManager: { serverIssuerRef: ref('ca'), operatorClientIssuerRef: ref('ca') } } },
      { self: { auto: {} } },
    ],
    invalid: [
      { self: { certManager: { serverIssuerRef: ref('ca') }, operatorClientSecretRef: ref('op') } },
      { self: { auto: {}, operatorClientSecretRef: ref('op') } },
    ],
  },
  {
    kind: 'EtcdCluster',
    path: '.spec.tls.peer',
    match: 'needs exactly one certificate source',
    valid: [
      { self: { secretRef: ref('peer') } },
      { self: { certManager: { issuerRef: ref('ca') } } },
      { self: { auto: {} } },
    ],
    invalid: [
      { self: {} },
      { self: { secretRef: ref('peer'), auto: {} } },
      { self: { secretRef: ref('peer'), certManager: { issuerRef: ref('ca') } } },
    ],
  },
  // Every TLS source and auth work end to end (test/e2e/tls-*.test.ts, test/e2e/auth.test.ts).
  ...at('EtcdCluster', '.spec.bootstrap.restore', restoreRules),
  ...restoreSourceRules('EtcdCluster', '.spec.bootstrap.restore.source', true),
  ...(['labels', 'annotations'] as const).map(map => ({
    kind: 'EtcdCluster',
    path: `.spec.additionalMetadata.${map}`,
    match: 'must not use keys starting with etcdfn.io/',
    valid: [
      { self: {} },
      { self: { team: 'platform', 'example.com/owner': 'db', 'sub.etcdfn.io/x': 'y', etcdfn: 'z' } },
    ],
    invalid: [
      { self: { team: 'platform', 'etcdfn.io/cluster': 'other' } },
      { self: { 'etcdfn.io/anything': '' } },
    ],
  })),
  {
    kind: 'EtcdCluster',
    path: '.spec.options',
    match: 'autoCompactionMode does nothing without',
    valid: [
      { self: {} },
      { self: { autoCompactionRetention: '1h' } },
      { self: { autoCompactionMode: 'periodic', autoCompactionRetention: '1h' } },
      { self: { autoCompactionMode: 'revision', autoCompactionRetention: '10000' } },
    ],
    invalid: [{ self: { autoCompactionMode: 'periodic' } }, { self: { autoCompactionMode: 'revision' } }],
  },
  {
    kind: 'EtcdCluster',
    path: '.spec.options',
    match: 'is a number of revisions',
    valid: [
      { self: {} },
      { self: { autoCompactionMode: 'revision', autoCompactionRetention: '10000' } },
      { self: { autoCompactionMode: 'periodic', autoCompactionRetention: '1h' } },
      { self: { autoCompactionMode: 'revision' } },
      { self: { autoCompactionRetention: '5m' } },
    ],
    invalid: [
      { self: { autoCompactionMode: 'revision', autoCompactionRetention: '1h' } },
      { self: { autoCompactionMode: 'revision', autoCompactionRetention: '1.5' } },
    ],
  },

  // EtcdMember
  {
    kind: 'EtcdMember',
    path: '.spec.clusterName',
    match: 'spec.clusterName cannot change',
    valid: [same('main')],
    invalid: [update('main', 'other')],
  },
  {
    kind: 'EtcdMember',
    path: '.spec.clusterToken',
    match: 'spec.clusterToken cannot change',
    valid: [same('default-main-1234')],
    invalid: [update('default-main-1234', 'default-main-5678')],
  },
  ...at('EtcdMember', '.spec.storage.size', storageRules),
  ...at('EtcdMember', '.spec.storage.medium', mediumRules),
  ...at('EtcdMember', '.spec.restore', restoreRules),
  ...restoreSourceRules('EtcdMember', '.spec.restore.source', false),

  // EtcdSnapshot
  {
    kind: 'EtcdSnapshot',
    path: '.spec',
    match: 'spec cannot change after creation',
    valid: [same(snapshotSpec())],
    invalid: [
      update(snapshotSpec(), snapshotSpec({ clusterRef: ref('other') })),
      update(snapshotSpec(), snapshotSpec({ destination: { pvc: pvc() } })),
    ],
  },
  ...locationRules('EtcdSnapshot', '.spec.destination'),
  { kind: 'EtcdSnapshot', path: '.spec', ...pvcRetainRule },

  // EtcdSnapshotSchedule
  {
    kind: 'EtcdSnapshotSchedule',
    path: '.spec.schedule',
    match: 'schedule must be five cron fields',
    valid: [
      '0 3 * * *',
      '*/15 * * * *',
      '0 0 1,15 * MON-FRI',
      '30 2 * JAN,JUL SUN',
      '0 0 L * ?',
      '0  3 * * *',
      '@daily',
      '@hourly',
      '@annually',
      '@every 6h',
      '@every 90m',
      '@every 1h30m',
    ].map(self => ({ self })),
    invalid: [
      '',
      '* * * *',
      '* * * * * *',
      '@reboot',
      '@every 30s',
      '@every',
      'TZ=UTC 0 3 * * *',
      'every day',
      '0 3 * * * ',
      ' 0 3 * * *',
      'x 3 * * *',
    ].map(self => ({ self })),
  },
  {
    kind: 'EtcdSnapshotSchedule',
    path: '.spec.timeZone',
    match: 'timeZone must be an IANA time zone name',
    valid: ['UTC', 'Europe/Berlin', 'America/Argentina/Buenos_Aires', 'Etc/GMT+5'].map(self => ({ self })),
    invalid: ['', '/UTC', 'Europe//Berlin', 'UTC ', '+01:00'].map(self => ({ self })),
  },
  ...locationRules('EtcdSnapshotSchedule', '.spec.destination'),
];
