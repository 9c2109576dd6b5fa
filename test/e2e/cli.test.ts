// kubectl etcdfn on the sandbox: the real plugin, run by the real kubectl from scripts/ on PATH,
// against the sandbox's kubeconfig. What a user sees: the status screen, etcd's own view agreeing
// with it, a snapshot that ends Complete, pause and resume that keep the cluster and its data.
import assert from 'node:assert/strict';
import { execFile, execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { delimiter, join, resolve } from 'node:path';
import { after, before, describe, it } from 'node:test';
import { Etcd3 } from 'etcd3';
import { API_VERSION } from '../../shared/api/group.ts';
import type { HealthView } from '../../cli/health.ts';
import type { StatusView } from '../../cli/status.ts';
import { parse } from 'yaml';
import { KubeObjects } from '../../shared/k8s/objects.ts';
import { etcdBinaries } from '../support/etcd-binaries.ts';
import { s3rverSecret, startS3rver, type TestS3 } from '../support/s3rver.ts';
import { beforeCreation, converged as convergedAfter, mark, type Mark } from '../support/converge.ts';
import { startFullSandbox, type FullSandbox } from '../support/sandbox.ts';

const NS = 'default';
const NAME = 'cli';
const scripts = resolve(import.meta.dirname, '..', '..', 'scripts');
const home = mkdtempSync(join(tmpdir(), 'etcdfn-cli-home-'));

interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

describe('kubectl etcdfn on the sandbox', { timeout: 900_000 }, () => {
  let sandbox: FullSandbox;
  let s3: TestS3;
  let kube: KubeObjects;

  /** `kubectl etcdfn <args>` as a user types it, with scripts/ on PATH. */
  const etcdfn = (...args: string[]): Promise<Run> =>
    new Promise(done => {
      const env = { ...process.env, HOME: home, PATH: `${scripts}${delimiter}${process.env.PATH ?? ''}` };
      execFile(
        'kubectl',
        ['etcdfn', ...args, '--kubeconfig', sandbox.kubeconfig],
        { env },
        (err, stdout, stderr) =>
          done({ code: err ? Number((err as { code?: number }).code ?? 1) : 0, stdout, stderr }),
      );
    });
  const ok = async (...args: string[]): Promise<string> => {
    const run = await etcdfn(...args);
    assert.equal(run.code, 0, `kubectl etcdfn ${args.join(' ')} failed:\n${run.stderr}${run.stdout}`);
    return run.stdout;
  };
  const statusJson = async (): Promise<StatusView> => JSON.parse(await ok('status', NAME, '-o', 'json'));
  /**
   * Polls the API (not the CLI: each run starts node) until 3/3 on evidence from after `since`
   * (test/support/converge.ts), with three ready voters in status; then reads the CLI's view.
   */
  const converged = async (since: Mark): Promise<StatusView> => {
    const c = await convergedAfter(
      { kube, namespace: NS, name: NAME },
      { replicas: 3, since, timeoutMs: 180_000, describe: () => sandbox.output().slice(-3000) },
    );
    const voters = c.status?.members?.filter(m => m.role === 'voter' && m.id && m.ready) ?? [];
    assert.equal(voters.length, 3, 'three ready voters in status');
    return statusJson();
  };

  async function withEtcd<T>(fn: (client: Etcd3) => Promise<T>): Promise<T> {
    const v = await statusJson();
    const hosts = v.members.flatMap(m => (m.podIP ? [`http://${m.podIP}:2379`] : []));
    const client = new Etcd3({ hosts, dialTimeout: 2000 });
    try {
      return await fn(client);
    } finally {
      client.close();
    }
  }

  before(async () => {
    [sandbox, s3] = await Promise.all([
      startFullSandbox({ tickSeconds: 5, startTimeoutMs: 300_000 }),
      startS3rver(['backups']),
    ]);
    kube = new KubeObjects(sandbox.kc);
    assert.equal((await kube.create(s3rverSecret('cli-s3', NS))).kind, 'created');
    const created = await kube.create({
      apiVersion: API_VERSION,
      kind: 'EtcdCluster',
      metadata: { name: NAME, namespace: NS },
      spec: { replicas: 3, version: '3.5.16' },
    });
    assert.equal(created.kind, 'created');
  });
  after(async () => {
    await Promise.all([sandbox?.stop(), s3?.stop()]);
    rmSync(home, { recursive: true, force: true });
  });

  let ids: string[] = [];
  let clusterID = '';

  it('status shows READY 3/3 and three voters, one of them the leader', async () => {
    await converged(beforeCreation());
    const text = await ok('status', NAME);
    assert.match(text, /READY 3\/3/);
    assert.match(text, /PHASE Running/);
    assert.match(text, /^Available\s+True\s+QuorumHealthy/m);
    const rows = text.split('\n').filter(l => l.startsWith(`${NAME}-`));
    assert.equal(rows.length, 3, text);
    assert.ok(
      rows.every(r => /\svoter\s/.test(r)),
      text,
    );
    assert.equal(rows.filter(r => /\svoter\s+\*\s/.test(r)).length, 1, `one leader:\n${text}`);
    ids = rows.map(r => r.split(/\s+/)[1] ?? '').sort();
    assert.ok(
      ids.every(id => /^[0-9a-f]{16}$/.test(id)),
      text,
    );
    clusterID = (await statusJson()).clusterID ?? '';
    assert.match(clusterID, /^[0-9a-f]{16}$/);
  });

  it("members shows etcd's view with the same three IDs and no mismatch", async () => {
    const text = await ok('members', NAME);
    for (const id of ids) assert.match(text, new RegExp(`^${id}\\s+${NAME}-\\d+\\s+http://`, 'm'), text);
    assert.match(text, new RegExp(`cluster ID ${clusterID}`));
    assert.match(text, /No mismatch: etcd and the EtcdCluster status agree on 3 members/, text);
  });

  it('health, compact, defrag, move-leader and alarms work on the members themselves', async () => {
    const health = async (): Promise<HealthView> => JSON.parse(await ok('health', NAME, '-o', 'json'));
    const first = await health();
    assert.equal(first.healthy, true, JSON.stringify(first));
    assert.deepEqual(first.members.map(m => m.memberId).sort(), ids);
    assert.equal(first.members.filter(m => m.leader).length, 1);
    assert.deepEqual(parse(await ok('health', NAME, '-o', 'yaml')).members.length, 3);
    assert.match(await ok('health', NAME), /Healthy\./);

    // Churn one key so the history holds ~8 MiB the compaction can drop.
    const value = 'v'.repeat(32 * 1024);
    await withEtcd(async c => {
      for (let i = 0; i < 256; i++) await c.put('cli/churn').value(`${i}${value}`).exec();
    });
    const grown = await health();
    assert.match(await ok('compact', NAME), /compacted history before revision \d+/);
    const defrag = await ok('defrag', NAME);
    const order = [...defrag.matchAll(/defragmenting (\S+) \((\w+)/g)].map(m => [m[1], m[2]]);
    const leader = grown.members.find(m => m.leader)?.name;
    assert.equal(order.length, 3, defrag);
    assert.deepEqual(order.at(-1), [leader, 'leader'], `the leader goes last:\n${defrag}`);
    const shrunk = await health();
    for (const m of shrunk.members) {
      const was = grown.members.find(g => g.memberId === m.memberId)?.dbSize ?? 0;
      assert.ok((m.dbSize ?? Infinity) < was, `${m.name}: ${was} → ${m.dbSize}`);
    }
    assert.equal((await withEtcd(c => c.get('cli/churn').string()))?.slice(0, 3), '255');

    const follower = shrunk.members.find(m => !m.leader)?.name ?? '';
    assert.match(await ok('move-leader', NAME, follower), new RegExp(`${follower} leads ${NAME} now`));
    assert.equal((await health()).members.find(m => m.leader)?.name, follower);
    assert.match(await ok('alarms', NAME), /No active alarm on cli\./);
    assert.deepEqual(JSON.parse(await ok('alarms', NAME, '-o', 'json')).alarms, []);

    const nosuch = await etcdfn('move-leader', NAME, 'nosuch');
    assert.equal(nosuch.code, 1);
    assert.match(nosuch.stderr, /^error: no running member "nosuch" in cli \(members: /);
  });

  it('snapshot --wait prints the name and Complete with the artifact', async () => {
    const args = ['--s3-endpoint', s3.endpoint, '--bucket', 'backups', '--key', 'cli/', '--secret', 'cli-s3'];
    const text = await ok('snapshot', NAME, ...args, '--wait', '--timeout', '60');
    const [name, ...rest] = text.trim().split('\n');
    assert.match(name ?? '', new RegExp(`^${NAME}-[a-z0-9]+$`));
    assert.match(rest.join('\n'), new RegExp(`${name} Complete`));
    // The key: <prefix><namespace>/<cluster>/<name>-<uid8>.db (docs/snapshots.md).
    assert.match(text, new RegExp(`uri: +s3://backups/cli/[a-z0-9-]+/${NAME}/${name}-[0-9a-z-]{8}\\.db`));
    assert.match(text, /checksum: sha256:[0-9a-f]{64}/);
    assert.match(await ok('status', NAME), new RegExp(`Latest snapshot: ${name}\\s+Complete`));
  });

  it('snapshot save copies a snapshot to a local file: checked, counted as etcdutl counts, never over a file', async () => {
    await withEtcd(c =>
      Promise.all(Array.from({ length: 50 }, (_, i) => c.put(`cli/save/${i}`).value('v').exec())),
    );
    const file = join(home, 'saved.db');
    const run = await etcdfn('snapshot', 'save', NAME, file, '-o', 'json');
    assert.equal(run.code, 0, run.stderr);
    const saved = JSON.parse(run.stdout) as {
      file: string;
      member: string;
      sizeBytes: number;
      sha256: string;
      totalKey: number;
      dbRevision: number;
    };
    assert.match(
      run.stderr,
      new RegExp(`^streaming a snapshot of ${NAME} from ${NAME}-\\d+ \\(revision \\d+\\) to `),
    );
    const bytes = readFileSync(file);
    assert.equal(bytes.length, saved.sizeBytes);
    assert.equal(createHash('sha256').update(bytes).digest('hex'), saved.sha256);
    const etcdutl = JSON.parse(
      execFileSync(etcdBinaries('3.5').etcdutl ?? 'etcdutl', ['snapshot', 'status', file, '-w', 'json'], {
        encoding: 'utf8',
      }),
    ) as { revision: number; totalKey: number };
    assert.equal(saved.totalKey, etcdutl.totalKey);
    assert.equal(saved.dbRevision, etcdutl.revision);
    assert.ok(saved.totalKey >= 50);
    assert.deepEqual(
      readdirSync(home).filter(f => f.startsWith('saved.db')),
      ['saved.db'],
      'no partial file left',
    );

    const again = await etcdfn('snapshot', 'save', NAME, file);
    assert.equal(again.code, 1);
    assert.equal(again.stderr, `error: ${file} exists; it is never overwritten: choose another file name\n`);
    assert.ok(readFileSync(file).equals(bytes), 'the file is untouched');
    const text = await ok('snapshot', 'save', NAME, join(home, 'second.db'), '--member', `${NAME}-0`);
    assert.match(
      text,
      new RegExp(
        `^saved .*second\\.db: .* from ${NAME}-0\\n  sha256: +[0-9a-f]{64}\\n  keys: +\\d+ at revision \\d+`,
      ),
    );
    const missing = await etcdfn('snapshot', 'save', 'nosuch', join(home, 'third.db'));
    assert.equal(missing.code, 1);
    assert.equal(missing.stderr, 'error: etcdcluster "nosuch" not found in namespace "default"\n');
  });

  it('pause keeps the data, resume brings 3/3 back with the same cluster ID and the data', async () => {
    await withEtcd(c => c.put('cli/kept').value('before pause').exec());
    const idOf = new Map((await statusJson()).members.map(m => [m.name, m.id]));
    const paused = await ok('pause', NAME, '--timeout', '90');
    assert.match(paused, /replicas 3 → 0/);
    const claim = /data-(cli-\d+)/.exec(paused);
    assert.ok(claim, `pause names the claim that keeps the data:\n${paused}`);
    const keptMember = claim[1] ?? '';
    const keptID = idOf.get(keptMember);
    assert.ok(keptID && ids.includes(keptID), 'the paused member is one of the three');

    const since = await mark({ kube, namespace: NS, name: NAME });
    const resumed = await ok('resume', NAME, '--wait', '--timeout', '120');
    assert.match(resumed, /replicas 0 → 3/);
    const v = await converged(since);
    assert.equal(v.clusterID, clusterID);
    assert.equal(v.members.find(m => m.name === keptMember)?.id, keptID);
    assert.equal(await withEtcd(c => c.get('cli/kept').string()), 'before pause');
    assert.match(await ok('members', NAME), /No mismatch/);
  });

  it('errors are one line with a non-zero exit code', async () => {
    for (const command of ['status', 'health', 'defrag', 'alarms']) {
      const missing = await etcdfn(command, 'nosuch');
      assert.equal(missing.code, 1, command);
      assert.equal(missing.stderr, 'error: etcdcluster "nosuch" not found in namespace "default"\n', command);
    }
    const notPaused = await etcdfn('resume', NAME);
    assert.equal(notPaused.code, 1);
    assert.match(notPaused.stderr, /^error: cli is not paused \(spec.replicas is 3\)\n$/);
  });
});
