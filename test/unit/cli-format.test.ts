// What `kubectl etcdfn status` prints, from objects as the API server returns them.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { age, formatBytes, table } from '../../cli/format.ts';
import type { Cluster, Pod, Snapshot } from '../../cli/context.ts';
import { buildStatusView, renderStatus } from '../../cli/status.ts';
import { describeOutcome, snapshotManifest } from '../../cli/snapshot.ts';
import { dataLocation } from '../../cli/pause.ts';
import { resumeReplicas } from '../../cli/resume.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const NOW = new Date('2026-11-22T10:10:00Z');
const condition = (type: string, status: 'True' | 'False', reason: string, message: string) => ({
  type,
  status,
  reason,
  message,
  lastTransitionTime: '2026-11-22T10:05:00Z',
});

/** demo Running 3/3 (a learner among them), as the API server returns it; `over` replaces status fields. */
const runningCluster = (
  over: Partial<Cluster['status']> = {},
  annotations?: Record<string, string>,
): Cluster =>
  etcdCluster({
    metadata: { uid: undefined, annotations },
    status: {
      phase: 'Running',
      ready: '3/3',
      clusterID: 'cdf818194e3a8c32',
      members: [
        {
          name: 'demo-0',
          id: '8e9e05c52164694d',
          role: 'voter',
          ready: true,
          version: '3.5.16',
          leader: true,
        },
        { name: 'demo-1', id: '91bc3c398fb3c146', role: 'voter', ready: true, version: '3.5.16' },
        { name: 'demo-2', id: 'fd422379fda50e48', role: 'learner', ready: false },
      ],
      conditions: [
        condition('Available', 'True', 'QuorumHealthy', '3 of 3 members ready'),
        condition('Progressing', 'False', 'Reconciled', 'spec reached'),
        condition('Degraded', 'False', 'QuorumHealthy', ''),
      ],
      ...over,
    },
  });

const pod = (name: string, podIP?: string): Pod => ({
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name },
  status: podIP ? { podIP } : {},
});

const snapshot: Snapshot = {
  apiVersion: 'etcdfn.io/v1alpha1',
  kind: 'EtcdSnapshot',
  metadata: { name: 'demo-x7k2p', creationTimestamp: new Date('2026-11-22T10:00:00Z') },
  spec: { clusterRef: { name: 'demo' }, destination: {} },
  status: {
    phase: 'Complete',
    artifact: {
      uri: 's3://b/demo/demo-x7k2p.db',
      sizeBytes: 2621472,
      checksum: `sha256:${'a'.repeat(64)}`,
      revision: 1042,
    },
  },
};

describe('kubectl etcdfn status output', () => {
  it('prints the head line, the conditions and a member table with the leader marked', () => {
    const view = buildStatusView(
      runningCluster(),
      [pod('demo-0', '127.0.1.2'), pod('demo-1', '127.0.1.3'), pod('demo-2')],
      snapshot,
    );
    assert.equal(
      renderStatus(view, NOW),
      [
        'EtcdCluster prod/demo   READY 3/3   PHASE Running   VERSION 3.5.16   CLUSTER ID cdf818194e3a8c32',
        '',
        'CONDITION     STATUS   REASON          AGE   MESSAGE',
        'Available     True     QuorumHealthy   5m    3 of 3 members ready',
        'Progressing   False    Reconciled      5m    spec reached',
        'Degraded      False    QuorumHealthy   5m    -',
        '',
        'MEMBER   ID                 ROLE      LEADER   READY   VERSION   POD IP',
        'demo-0   8e9e05c52164694d   voter     *        yes     3.5.16    127.0.1.2',
        'demo-1   91bc3c398fb3c146   voter              yes     3.5.16    127.0.1.3',
        'demo-2   fd422379fda50e48   learner            no      -         -',
        '',
        'Latest snapshot: demo-x7k2p   Complete   10m ago   2.5 MiB   s3://b/demo/demo-x7k2p.db',
      ].join('\n'),
    );
  });

  it('says so when there are no members, no conditions and no snapshot', () => {
    const text = renderStatus(
      buildStatusView(
        runningCluster({
          members: [],
          conditions: [],
          phase: undefined,
          ready: undefined,
          clusterID: undefined,
        }),
        [],
      ),
      NOW,
    );
    assert.match(text, /READY 0\/3 {3}PHASE - {3}VERSION 3\.5\.16 {3}CLUSTER ID -/);
    assert.match(text, /No conditions yet/);
    assert.match(text, /No members\./);
    assert.match(text, /Latest snapshot: none/);
  });

  it('-o json has the same facts, with nulls for what is unknown', () => {
    const view = JSON.parse(
      JSON.stringify(buildStatusView(runningCluster(), [pod('demo-0', '127.0.1.2')], snapshot)),
    );
    assert.equal(view.ready, '3/3');
    assert.deepEqual(view.members[0], {
      name: 'demo-0',
      id: '8e9e05c52164694d',
      role: 'voter',
      leader: true,
      ready: true,
      version: '3.5.16',
      podIP: '127.0.1.2',
    });
    assert.equal(view.members[2].version, null);
    assert.equal(view.latestSnapshot.sizeBytes, 2621472);
  });

  it('a snapshot that is not complete shows its Ready message', () => {
    const pending: Snapshot = {
      ...snapshot,
      status: {
        phase: 'Pending',
        conditions: [condition('Ready', 'False', 'NoReadyMember', 'no ready member of demo')],
      },
    };
    assert.match(
      renderStatus(buildStatusView(runningCluster(), [], pending), NOW),
      /Latest snapshot: demo-x7k2p {3}Pending {3}10m ago {3}no ready member of demo$/,
    );
  });
});

describe('kubectl etcdfn snapshot', () => {
  it('creates an EtcdSnapshot named after the cluster, with only the options given', () => {
    const m = snapshotManifest('demo', 'prod', {
      s3Endpoint: 'http://s3',
      bucket: 'b',
      secret: 's',
      timeout: 1,
    });
    assert.deepEqual(m.metadata, { generateName: 'demo-', namespace: 'prod' });
    assert.deepEqual(m.spec.destination, {
      s3: { endpoint: 'http://s3', bucket: 'b', credentialsSecretRef: { name: 's' } },
    });
  });

  it('--wait prints the artifact when Complete, the reason and message when Failed', () => {
    const done = describeOutcome(snapshot);
    assert.equal(done.ok, true);
    assert.deepEqual(done.lines, [
      'demo-x7k2p Complete',
      '  uri:      s3://b/demo/demo-x7k2p.db',
      '  size:     2.5 MiB (2621472 bytes)',
      `  checksum: sha256:${'a'.repeat(64)}`,
      '  revision: 1042',
    ]);
    const failed = describeOutcome({
      ...snapshot,
      status: {
        phase: 'Failed',
        conditions: [condition('Ready', 'False', 'UploadRefused', 'NoSuchBucket: b')],
      },
    });
    assert.deepEqual(failed, { ok: false, lines: ['demo-x7k2p Failed (UploadRefused): NoSuchBucket: b'] });
  });
});

describe('kubectl etcdfn pause and resume', () => {
  it('pause reports where the data is from the Available condition of a paused cluster', () => {
    const paused = runningCluster({
      conditions: [
        condition(
          'Available',
          'False',
          'Paused',
          'paused; the data is kept on PersistentVolumeClaim data-demo-0',
        ),
      ],
    });
    assert.match(dataLocation(paused) ?? '', /data-demo-0/);
    assert.equal(dataLocation(runningCluster()), undefined);
  });

  it('resume goes back to the recorded replicas, or --replicas, and refuses to guess', () => {
    assert.equal(
      resumeReplicas(runningCluster({}, { 'etcdfn.io/replicas-before-pause': '5' }), undefined),
      5,
    );
    assert.equal(resumeReplicas(runningCluster({}, { 'etcdfn.io/replicas-before-pause': '5' }), 3), 3);
    assert.throws(
      () => resumeReplicas(runningCluster(), undefined),
      /no etcdfn\.io\/replicas-before-pause annotation .*pass --replicas N/,
    );
    assert.throws(() => resumeReplicas(runningCluster(), 0), /--replicas must be a whole number ≥ 1/);
  });
});

describe('format helpers', () => {
  it('sizes, ages and tables read like kubectl', () => {
    assert.equal(formatBytes(512), '512 B');
    assert.equal(formatBytes(20480), '20 KiB');
    assert.equal(formatBytes(undefined), '-');
    assert.equal(age('2026-11-22T10:09:15Z', NOW), '45s');
    assert.equal(age('2026-11-21T10:10:00Z', NOW), '24h');
    assert.equal(age('2026-11-12T10:10:00Z', NOW), '10d');
    assert.equal(table(['A', 'BB'], [['xyz', '1']]), 'A     BB\nxyz   1');
  });
});
