// EtcdSnapshotSchedules on the sandbox: a real 1-member etcd 3.5.16 cluster, the real functions, the
// event bridge, and s3rver on loopback. The resync tick is set to an hour, so it never fires during
// the test: a schedule's run comes from its own PingSource (shared/plan/schedule/ping.ts), which
// run-snapshot creates, owned by the schedule, and the bridge ticks. One real run: the schedule
// names a minute in a non-UTC time zone, and the test holds the clock of the functions and of the
// schedules' PingSources (test/sandbox/clock.ts) minutes before it, checks the status that announces
// it, then moves the clock just past it and waits for the run.
// Retention: a schedule that owns Complete snapshots beyond keepLast (made by the test, status
// written through the status subresource, objects put in the store) deletes the oldest ones and
// their objects.
import assert from 'node:assert/strict';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { HeadObjectCommand, PutObjectCommand } from '@aws-sdk/client-s3';
import type { EtcdSnapshot, EtcdSnapshotStatus } from '../../shared/api/etcd-snapshot.ts';
import type { EtcdSnapshotSchedule } from '../../shared/api/etcd-snapshot-schedule.ts';
import { API_VERSION } from '../../shared/api/group.ts';
import { KubeObjects, type KubeObject } from '../../shared/k8s/objects.ts';
import { runSnapshotName } from '../../shared/plan/schedule/run.ts';
import { pingSourceName, PING_SOURCE_API_VERSION, type PingSource } from '../../shared/plan/schedule/ping.ts';
import { OWNER_METADATA } from '../../shared/s3/location.ts';
import { s3rverSecret, sha256, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';
import { beforeCreation, converged } from '../support/converge.ts';
import { waitFor } from '../support/wait.ts';

const NS = 'default';
const CLUSTER = 'scheddemo';
const BUCKET = 'etcd-backups';
const SECRET = 'backup-s3';
const ZONE = 'Asia/Kolkata'; // UTC+05:30, no DST: the cron's hour and minute are not UTC's
type Snapshot = EtcdSnapshot & KubeObject;
type Schedule = EtcdSnapshotSchedule & KubeObject;

/** A whole minute a few minutes ahead (the clock offsets stay small), and its cron in ZONE. */
function scheduledMinute(): { time: Date; cron: string } {
  const time = new Date(Math.floor(Date.now() / 60_000) * 60_000 + 3 * 60_000);
  const parts = new Intl.DateTimeFormat('en-GB', {
    timeZone: ZONE,
    hour: 'numeric',
    minute: 'numeric',
    hourCycle: 'h23',
  }).formatToParts(time);
  const field = (type: string) => Number(parts.find(p => p.type === type)?.value);
  return { time, cron: `${field('minute')} ${field('hour')} * * *` };
}

describe('EtcdSnapshotSchedule (etcd 3.5.16 on the sandbox)', { timeout: 300_000 }, () => {
  let sandbox: FullSandbox;
  let s3: TestS3;
  let kube: KubeObjects;
  let run: { time: Date; cron: string };
  const clockDir = mkdtempSync(join(tmpdir(), 'etcdfn-clock-'));
  const clockFile = join(clockDir, 'offset-ms');
  /** Sets the functions' clock to `at` (it runs on from there). */
  const setClock = (at: number) => writeFileSync(clockFile, String(at - Date.now()));

  before(async () => {
    run = scheduledMinute();
    setClock(run.time.getTime() - 5 * 60_000);
    s3 = await startS3rver([BUCKET]);
    sandbox = await startFullSandbox({ tickSeconds: 3600, env: { SANDBOX_CLOCK_FILE: clockFile } });
    kube = new KubeObjects(sandbox.kc);
  });
  after(async () => {
    await sandbox?.stop();
    await s3?.stop();
    rmSync(clockDir, { recursive: true, force: true });
  });

  const ref = (kind: string, name: string) => ({ apiVersion: API_VERSION, kind, namespace: NS, name });
  const pingRef = (schedule: string) => ({
    apiVersion: PING_SOURCE_API_VERSION,
    kind: 'PingSource',
    namespace: NS,
    name: pingSourceName(schedule),
  });
  async function get<T extends KubeObject>(kind: string, name: string): Promise<T | undefined> {
    const read = await kube.get<T>(ref(kind, name));
    return read.kind === 'found' ? read.object : undefined;
  }
  const destination = (key: string) => ({
    s3: { endpoint: s3.endpoint, bucket: BUCKET, key, credentialsSecretRef: { name: SECRET } },
  });
  async function objectExists(key: string): Promise<boolean> {
    try {
      await s3.client.send(new HeadObjectCommand({ Bucket: BUCKET, Key: key }));
      return true;
    } catch (err) {
      if ((err as { $metadata?: { httpStatusCode?: number } }).$metadata?.httpStatusCode === 404)
        return false;
      throw err;
    }
  }
  const world = (names: string[]) => async () => {
    const parts = await Promise.all(
      names.map(
        async n => `${n}: ${JSON.stringify((await get<Schedule>('EtcdSnapshotSchedule', n))?.status)}`,
      ),
    );
    const snaps = await kube.list<Snapshot>(API_VERSION, 'EtcdSnapshot', NS);
    parts.push(`snapshots: ${snaps.map(s => `${s.metadata.name}=${s.status?.phase}`).join(', ')}`);
    return `${parts.join('\n')}\n${sandbox.output().slice(-3000)}`;
  };

  it('a 1-member cluster, the credentials Secret, and a schedule due at a set minute in Asia/Kolkata', async () => {
    const secret = await kube.create(s3rverSecret(SECRET, NS));
    assert.equal(secret.kind, 'created');
    const cluster = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: CLUSTER, namespace: NS },
      spec: { replicas: 1, version: '3.5.16' },
    });
    assert.equal(cluster.kind, 'created');
    const schedule = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshotSchedule',
      metadata: { name: 'daily', namespace: NS },
      spec: {
        clusterRef: { name: CLUSTER },
        schedule: run.cron,
        timeZone: ZONE,
        retention: { keepLast: 3 },
        destination: destination('scheduled/'),
      },
    });
    assert.equal(schedule.kind, 'created', JSON.stringify(schedule));
    // Before the minute (the functions' clock is five minutes short of it): not run yet, and status
    // says when it will.
    const waiting = await waitFor(
      'the schedule’s first status',
      async () => {
        const read = await get<Schedule>('EtcdSnapshotSchedule', 'daily');
        return read?.status?.nextScheduleTime ? read : false;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
      world(['daily']),
    );
    assert.equal(waiting.status?.nextScheduleTime, run.time.toISOString().replace('.000', ''));
    assert.equal(waiting.status?.lastScheduleTime, undefined);
    // Its own timing: a PingSource owned by the schedule, with its cron and time zone.
    const ping = await waitFor(
      'the schedule’s PingSource',
      async () => {
        const read = await kube.get<PingSource>(pingRef('daily'));
        return read.kind === 'found' ? read.object : false;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
      world(['daily']),
    );
    assert.equal(ping.spec.schedule, run.cron);
    assert.equal(ping.spec.timezone, ZONE);
    assert.deepEqual(
      ping.metadata.ownerReferences?.map(o => [o.kind, o.name, o.uid, o.controller]),
      [['EtcdSnapshotSchedule', 'daily', waiting.metadata.uid, true]],
    );
    const snapshots = await kube.list<Snapshot>(API_VERSION, 'EtcdSnapshot', NS);
    assert.equal(snapshots.length, 0, 'nothing ran before the minute');
  });

  it('retention: of the Complete snapshots a schedule owns, the oldest beyond keepLast go, with their objects', async () => {
    const created = await kube.create<Schedule>({
      apiVersion: API_VERSION,
      kind: 'EtcdSnapshotSchedule',
      metadata: { name: 'retained', namespace: NS },
      spec: {
        // No such cluster: retention works all the same, and status says what is missing.
        clusterRef: { name: 'elsewhere' },
        schedule: '0 0 1 1 *',
        retention: { keepLast: 2 },
        destination: destination('retained/'),
      },
    });
    assert.ok(created.kind === 'created');
    const owner = created.object;
    const runs = [
      '2026-01-01T00:00:00Z',
      '2026-01-02T00:00:00Z',
      '2026-01-03T00:00:00Z',
      '2026-01-04T00:00:00Z',
    ];
    const failedRun = '2026-01-02T12:00:00Z';
    const names = runs.map(r => runSnapshotName('retained', new Date(r)));
    const failedName = runSnapshotName('retained', new Date(failedRun));
    const keys = new Map<string, string>();
    for (const [i, name] of [...names, failedName].entries()) {
      const when = i < runs.length ? runs[i] : failedRun;
      const made = await kube.create({
        apiVersion: API_VERSION,
        kind: 'EtcdSnapshot',
        metadata: {
          name,
          namespace: NS,
          labels: { 'etcdfn.io/cluster': 'elsewhere', 'etcdfn.io/schedule': 'retained' },
          annotations: { 'etcdfn.io/scheduled-time': when },
          ownerReferences: [
            {
              apiVersion: API_VERSION,
              kind: 'EtcdSnapshotSchedule',
              name: 'retained',
              uid: owner.metadata.uid!,
              controller: true,
            },
          ],
        },
        spec: { clusterRef: { name: 'elsewhere' }, destination: destination('retained/') },
      });
      assert.equal(made.kind, 'created');
      const complete = i < runs.length;
      const uid = made.kind === 'created' ? ((made.object as Snapshot).metadata.uid ?? '') : '';
      const key = `retained/${NS}/elsewhere/${name}-${uid.slice(0, 8)}.db`;
      keys.set(name, key);
      let etag = '';
      if (complete) {
        // As run-snapshot writes them: owned by the snapshot (object metadata), ETag recorded.
        const put = await s3.client.send(
          new PutObjectCommand({
            Bucket: BUCKET,
            Key: key,
            Body: Buffer.from(`snapshot ${name}`),
            Metadata: { [OWNER_METADATA]: uid },
          }),
        );
        etag = put.ETag ?? '';
      }
      const status: EtcdSnapshotStatus = complete
        ? {
            phase: 'Complete',
            startTime: when,
            completionTime: when,
            artifact: { uri: `s3://${BUCKET}/${key}`, sizeBytes: 26, revision: 1, etag },
            conditions: [
              {
                type: 'Verified',
                status: 'True',
                reason: 'ReadBackVerified',
                message: 'written by the test',
                lastTransitionTime: when,
              },
            ],
          }
        : { phase: 'Failed', completionTime: when };
      // run-snapshot sees the new snapshot too (it waits for the missing cluster): write until it lands.
      await waitFor(`status of ${name} written`, async () => {
        const current = await get<Snapshot>('EtcdSnapshot', name);
        if (!current) return false;
        const written = await kube.replaceStatus<Snapshot>({ ...current, status });
        return written.kind === 'written';
      });
    }

    const gone = [names[0], names[1], failedName];
    const kept = [names[2], names[3]];
    await waitFor(
      'the two oldest Complete snapshots and the Failed one before a success deleted',
      async () => {
        const left = (await kube.list<Snapshot>(API_VERSION, 'EtcdSnapshot', NS))
          .map(s => s.metadata.name)
          .filter(n => n?.startsWith('retained-'))
          .sort();
        return left.join() === kept.join();
      },
      { timeoutMs: 30_000, intervalMs: 250 },
      world(['retained']),
    );
    for (const name of gone.slice(0, 2)) assert.equal(await objectExists(keys.get(name)!), false, name);
    for (const name of kept) assert.equal(await objectExists(keys.get(name)!), true, name);

    const schedule = await get<Schedule>('EtcdSnapshotSchedule', 'retained');
    const conditions = schedule?.status?.conditions ?? [];
    const retention = conditions.find(c => c.type === 'Retention');
    assert.equal(retention?.status, 'True', JSON.stringify(conditions));
    const ready = conditions.find(c => c.type === 'Ready');
    assert.equal(ready?.status, 'False');
    assert.equal(ready?.reason, 'ClusterNotFound');
    assert.match(ready?.message ?? '', /EtcdCluster elsewhere not found in namespace default/);
    assert.equal(schedule?.status?.lastSuccessfulTime, runs[3]);
    // Each prune's Event is written after its deletion, possibly by another run: wait for it.
    const prunedMessages = async () =>
      (
        await kube.list<
          KubeObject & { reason?: string; message?: string; involvedObject?: { name?: string } }
        >('v1', 'Event', NS)
      )
        .filter(e => e.involvedObject?.name === 'retained' && e.reason === 'SnapshotPruned')
        .map(e => e.message ?? '');
    await waitFor(
      'the SnapshotPruned Event naming the oldest object',
      async () => (await prunedMessages()).some(m => m.includes(`s3://${BUCKET}/${keys.get(names[0])}`)),
      { timeoutMs: 30_000 },
      async () => JSON.stringify(await prunedMessages()),
    );
  });

  it('the run at that minute creates one owned, labelled EtcdSnapshot that is Complete in S3, and status records it', async () => {
    const cluster = await converged(
      { kube, namespace: NS, name: CLUSTER },
      { replicas: 1, since: beforeCreation(), timeoutMs: 120_000, describe: world(['daily']) },
    );
    assert.ok(cluster);
    // Still before the minute, no run has been made; the clock now moves just past it.
    const before = (await kube.list<Snapshot>(API_VERSION, 'EtcdSnapshot', NS)).filter(
      s => s.metadata.labels?.['etcdfn.io/schedule'] === 'daily',
    );
    assert.deepEqual(before, [], 'no run before the minute');
    setClock(run.time.getTime() + 1_000);
    const name = runSnapshotName('daily', run.time);
    const done = await waitFor(
      `EtcdSnapshot ${name} Complete`,
      async () => {
        const s = await get<Snapshot>('EtcdSnapshot', name);
        return s?.status?.phase === 'Complete' || s?.status?.phase === 'Failed' ? s : false;
      },
      { timeoutMs: 150_000, intervalMs: 500 },
      world(['daily']),
    );
    assert.equal(done.status?.phase, 'Complete', JSON.stringify(done.status));
    const schedule = await get<Schedule>('EtcdSnapshotSchedule', 'daily');
    assert.ok(schedule);
    assert.deepEqual(
      done.metadata.ownerReferences?.map(o => [o.kind, o.name, o.uid, o.controller]),
      [['EtcdSnapshotSchedule', 'daily', schedule.metadata.uid, true]],
    );
    assert.equal(done.metadata.labels?.['etcdfn.io/cluster'], CLUSTER);
    assert.equal(done.metadata.labels?.['etcdfn.io/schedule'], 'daily');
    const artifact = done.status?.artifact;
    const key = `scheduled/${NS}/${CLUSTER}/${name}-${(done.metadata.uid ?? '').slice(0, 8)}.db`;
    assert.equal(artifact?.uri, `s3://${BUCKET}/${key}`);
    assert.equal(done.status?.conditions?.find(c => c.type === 'Verified')?.status, 'True');
    const bytes = await s3.download(BUCKET, key);
    assert.equal(bytes.length, artifact?.sizeBytes);
    assert.equal(`sha256:${sha256(bytes)}`, artifact?.checksum);

    // Exactly one run: nothing else was created for this schedule.
    const owned = (await kube.list<Snapshot>(API_VERSION, 'EtcdSnapshot', NS)).filter(s =>
      s.metadata.ownerReferences?.some(o => o.uid === schedule.metadata.uid),
    );
    assert.deepEqual(
      owned.map(s => s.metadata.name),
      [name],
    );

    const status = await waitFor(
      'the schedule’s status to record the success',
      async () => {
        const s = (await get<Schedule>('EtcdSnapshotSchedule', 'daily'))?.status;
        return s?.lastSuccessfulTime && !s.active ? s : false;
      },
      { timeoutMs: 30_000, intervalMs: 250 },
      world(['daily']),
    );
    const at = run.time.toISOString().replace('.000', '');
    assert.equal(status.lastScheduleTime, at);
    assert.equal(status.lastSuccessfulTime, done.status?.completionTime);
    assert.equal(
      status.nextScheduleTime,
      new Date(run.time.getTime() + 86_400_000).toISOString().replace('.000', ''),
    );
    const ready = status.conditions?.find(c => c.type === 'Ready');
    assert.equal(ready?.status, 'True');
    assert.match(ready?.message ?? '', new RegExp(`in ${ZONE}: the next run is at`));
    // The run came from the schedule's PingSource: the resync tick (hourly here) never fired.
    assert.ok(sandbox.delivered('run-snapshot', 'dev.knative.sources.ping') >= 1);
  });

  it('a deleted schedule’s PingSource goes with it', async () => {
    assert.equal((await kube.get(pingRef('retained'))).kind, 'found');
    const deleted = await kube.delete(ref('EtcdSnapshotSchedule', 'retained'));
    assert.equal(deleted.kind, 'deleted');
    await waitFor(
      'the PingSource of the deleted schedule gone',
      async () => (await kube.get(pingRef('retained'))).kind === 'not-found',
      { timeoutMs: 30_000, intervalMs: 250 },
      world([]),
    );
  });
});
