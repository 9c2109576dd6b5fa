// Where the PingSources the functions make send their events: the Broker's published address (its
// URL with the cluster's own domain and scheme, its CA, its OIDC audience), carried into every
// PingSource (a schedule's, a snapshot's and a cluster's wake-ups); a change of any part is written.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { EtcdSnapshotSchedule } from '../../shared/api/etcd-snapshot-schedule.ts';
import type { KubeObject } from '../../shared/k8s/objects.ts';
import { sameSink } from '../../shared/builders/ping-source.ts';
import { desiredPingSource, pingSourceStep } from '../../shared/plan/schedule/ping.ts';
import { desiredClusterWake } from '../../shared/plan/wake/cluster-wake.ts';
import { brokerIngress, sinkOfBroker, type Broker } from '../../shared/reconcile/ping-sink.ts';
import { settingsFromEnv } from '../../shared/runtime/context.ts';
import { etcdCluster } from '../support/etcd-objects.ts';

const AUDIENCE = 'eventing.knative.dev/broker/ops/etcdfn';
const broker = (address?: NonNullable<Broker['status']>['address']): Broker => ({
  apiVersion: 'eventing.knative.dev/v1',
  kind: 'Broker',
  metadata: { name: 'etcdfn', namespace: 'ops' },
  ...(address && { status: { address } }),
});
const schedule: EtcdSnapshotSchedule & KubeObject = {
  apiVersion: 'etcdfn.io/v1alpha1',
  kind: 'EtcdSnapshotSchedule',
  metadata: { name: 'nightly', namespace: 'team-a', uid: 'uid-1' },
  spec: {
    clusterRef: { name: 'demo' },
    schedule: '0 3 * * *',
    destination: { s3: { endpoint: 'https://s3.example', bucket: 'b', credentialsSecretRef: { name: 's' } } },
  },
};

describe("the Broker's address as the PingSources' sink", () => {
  it('takes URL, audience and CA from the status (strict transport encryption, OIDC, another domain)', () => {
    const sink = sinkOfBroker(
      broker({
        url: 'https://broker-ingress.knative-eventing.svc.corp.internal/ops/etcdfn',
        audience: AUDIENCE,
        CACerts: 'PEM',
      }),
      'ops',
    );
    assert.deepEqual(sink, {
      uri: 'https://broker-ingress.knative-eventing.svc.corp.internal/ops/etcdfn',
      audience: AUDIENCE,
      CACerts: 'PEM',
    });
    assert.deepEqual(desiredPingSource(schedule, sink)!.spec.sink, sink);
    const wake = desiredClusterWake(
      etcdCluster({ metadata: { namespace: 'team-a', uid: 'u' }, spec: { replicas: undefined } }),
      true,
      sink,
    )!;
    assert.equal(wake.spec.sink.audience, AUDIENCE);
  });

  it('without an address yet (or no Broker): the ingress by Service name, no cluster domain written in', () => {
    for (const b of [undefined, broker(), broker({})]) {
      const sink = sinkOfBroker(b, 'ops');
      assert.deepEqual(sink, brokerIngress('ops'));
      assert.doesNotMatch(sink.uri, /cluster\.local/);
      assert.equal(sink.audience, undefined);
    }
  });

  it('sets no sink of its own unless $ETCDFN_SCHEDULE_SINK says so (then with its audience)', () => {
    assert.equal(settingsFromEnv({}).scheduleSink, undefined);
    assert.deepEqual(
      settingsFromEnv({ ETCDFN_SCHEDULE_SINK: 'https://b.example/x', ETCDFN_SCHEDULE_SINK_AUDIENCE: 'aud' })
        .scheduleSink,
      { uri: 'https://b.example/x', audience: 'aud' },
    );
  });

  it('an existing PingSource without the audience (OIDC turned on later) is updated', () => {
    const plain = desiredPingSource(schedule, { uri: 'http://x/ops/etcdfn' })!;
    const withAudience = desiredPingSource(schedule, { uri: 'http://x/ops/etcdfn', audience: AUDIENCE })!;
    assert.equal(pingSourceStep(schedule, withAudience, structuredClone(plain)).kind, 'update');
    assert.equal(pingSourceStep(schedule, withAudience, structuredClone(withAudience)).kind, 'none');
    assert.equal(sameSink({ uri: 'a', CACerts: 'x' }, { uri: 'a' }), false);
  });
});
