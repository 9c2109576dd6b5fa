// The agent's commands (agent/program.ts) in process, each step replaced by a recording fake: what
// each command hands its step (source, paths, members to stream from, TLS and credentials read from
// the mounted files), what it prints, what it leaves in its termination log and its exit code.
// The steps themselves are restore-fetch, restore-commit and snapshot-file tests'; the whole agent
// as a child process in a Pod is test/integration/restore-agent.test.ts and snapshot-file*.test.ts.
import assert from 'node:assert/strict';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, describe, it, mock } from 'node:test';
import { AGENT_STEPS, agentProgram, runAgent, type AgentSteps } from '../../agent/program.ts';
import { RestoreFailure } from '../../shared/restore/layout.ts';
import { SaveFailure } from '../../shared/snapshot-file/result.ts';

const dir = mkdtempSync(join(tmpdir(), 'etcdfn-agent-program-'));
after(() => rmSync(dir, { recursive: true, force: true }));
let n = 0;
const logFile = () => join(dir, `termination-${++n}.log`);
const read = (file: string) => readFileSync(file, 'utf8');

function agent(overrides: Partial<AgentSteps> = {}, env: NodeJS.ProcessEnv = {}) {
  const calls: { step: string; args: unknown }[] = [];
  const out: string[] = [];
  const err: string[] = [];
  const record =
    <T>(step: string, answer: () => T) =>
    async (args: unknown) => {
      calls.push({ step, args });
      return answer();
    };
  const steps = {
    fetchSnapshot: record('fetch', () => ({
      kind: 'fetched',
      sizeBytes: 20480,
      sha256: 'ab12',
      snapshotMinor: '3.5',
    })),
    commitRestore: async (paths: unknown, rec: unknown) => {
      calls.push({ step: 'commit', args: [paths, rec] });
      return { kind: 'committed' };
    },
    saveSnapshotFile: record('save', () => ({
      path: 'backups/snap.db',
      sizeBytes: 4128,
      sha256: 'cd34',
      member: 'demo-1',
      revision: 9,
    })),
    deleteSnapshotFile: record('delete', () => ({ kind: 'deleted', message: 'deleted backups/snap.db' })),
    ...overrides,
  } as unknown as AgentSteps;
  const run = (...args: string[]) =>
    runAgent(['node', 'etcdfn-agent', ...args], steps, {
      log: l => out.push(l),
      error: l => err.push(l),
      env,
    });
  return { calls, out, err, run };
}

describe('etcdfn-agent restore-fetch', () => {
  it('from S3: the location and the key pair from the environment, the data directory’s paths, the checksum', async () => {
    const a = agent({}, { AWS_ACCESS_KEY_ID: 'AKID', AWS_SECRET_ACCESS_KEY: 'sekret' });
    const log = logFile();
    const code = await a.run(
      'restore-fetch',
      '--data-dir=/var/lib/etcd',
      '--etcd-version=3.5.16',
      `--termination-log=${log}`,
      '--sha256=ff00',
      '--s3-endpoint=https://s3.example',
      '--s3-bucket=backups',
      '--s3-key=prod/snap.db',
      '--s3-region=eu-west-1',
      '--s3-path-style=true',
      '--s3-secret=creds',
    );
    assert.equal(code, 0);
    const args = a.calls[0]?.args as Record<string, unknown>;
    assert.equal(a.calls[0]?.step, 'fetch');
    assert.deepEqual(args.source, {
      kind: 's3',
      endpoint: 'https://s3.example',
      bucket: 'backups',
      key: 'prod/snap.db',
      region: 'eu-west-1',
      forcePathStyle: true,
      credentials: { accessKeyId: 'AKID', secretAccessKey: 'sekret' },
      secretName: 'creds',
    });
    assert.equal(args.sha256, 'ff00');
    assert.equal(args.etcdVersion, '3.5.16');
    assert.equal((args.paths as { dataDir: string }).dataDir, '/var/lib/etcd');
    assert.equal(
      (args.paths as { snapshotFile: string }).snapshotFile,
      '/var/lib/etcd/.etcdfn-restore/snapshot.db',
    );
    assert.deepEqual(a.out, ['fetched 20480 bytes, sha256 ab12, written by etcd 3.5']);
  });

  it('path style false, no region, no checksum, no keys in the environment: said as such', async () => {
    const a = agent();
    await a.run('restore-fetch', '--data-dir=/d', '--etcd-version=3.5.16', '--s3-path-style=false');
    const args = a.calls[0]?.args as { source: Record<string, unknown> } & Record<string, unknown>;
    assert.equal(args.source.forcePathStyle, false);
    assert.equal(args.source.region, undefined);
    assert.equal(args.source.credentials, undefined);
    assert.equal(args.source.endpoint, '');
    assert.equal(args.source.bucket, '');
    assert.equal(args.source.key, '');
    assert.equal(args.source.secretName, '');
    assert.equal('sha256' in args, false);
    const none = agent();
    await none.run('restore-fetch', '--data-dir=/d', '--etcd-version=3.5.16');
    assert.equal('forcePathStyle' in (none.calls[0]?.args as { source: object }).source, false);
  });

  it('from a file on a claim: its mount (by default /restore-source) and the name it is shown by', async () => {
    const a = agent();
    await a.run('restore-fetch', '--data-dir=/d', '--etcd-version=3.5.16', '--source-file=snaps/a.db');
    assert.deepEqual((a.calls[0]?.args as { source: unknown }).source, {
      kind: 'file',
      mount: '/restore-source',
      path: 'snaps/a.db',
      display: 'snaps/a.db',
    });
    const b = agent();
    await b.run(
      'restore-fetch',
      '--data-dir=/d',
      '--etcd-version=3.5.16',
      '--source-file=a.db',
      '--source-mount=/m',
      '--source-name=pvc://backups/a.db',
    );
    assert.deepEqual((b.calls[0]?.args as { source: unknown }).source, {
      kind: 'file',
      mount: '/m',
      path: 'a.db',
      display: 'pvc://backups/a.db',
    });
  });

  it('data already restored: said, exit 0', async () => {
    const a = agent({ fetchSnapshot: async () => ({ kind: 'already-restored' }) });
    const code = await a.run('restore-fetch', '--data-dir=/d', '--etcd-version=3.5.16');
    assert.equal(code, 0);
    assert.deepEqual(a.out, ['already restored: the data directory is kept as it is']);
  });

  it('a failure with its reason: `<Reason>: <message>` in the termination log and on stderr, exit 1', async () => {
    const a = agent({
      fetchSnapshot: async () => {
        throw new RestoreFailure('ChecksumMismatch', 'sha256 ab, expected cd');
      },
    });
    const log = logFile();
    const code = await a.run(
      'restore-fetch',
      '--data-dir=/d',
      '--etcd-version=3.5.16',
      `--termination-log=${log}`,
    );
    assert.equal(code, 1);
    assert.equal(read(log), 'ChecksumMismatch: sha256 ab, expected cd');
    assert.deepEqual(a.err, ['ChecksumMismatch: sha256 ab, expected cd']);
    assert.deepEqual(a.out, []);
  });

  it('any other error: RestoreFailed with its message, the log cut at 4000 characters', async () => {
    const a = agent({
      fetchSnapshot: async () => {
        throw new Error('x'.repeat(5000));
      },
    });
    const log = logFile();
    assert.equal(
      await a.run('restore-fetch', '--data-dir=/d', '--etcd-version=3.5.16', `--termination-log=${log}`),
      1,
    );
    assert.equal(read(log).length, 4000);
    assert.ok(read(log).startsWith('RestoreFailed: xxx'));
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a thrown non-Error, as String(err) handles
    const b = agent({ fetchSnapshot: () => Promise.reject('plain string') });
    const log2 = logFile();
    await b.run('restore-fetch', '--data-dir=/d', '--etcd-version=3.5.16', `--termination-log=${log2}`);
    assert.equal(read(log2), 'RestoreFailed: plain string');
  });

  it('no termination log to write: the failure still on stderr, exit 1', async () => {
    const a = agent({
      fetchSnapshot: async () => {
        throw new RestoreFailure('ChecksumMismatch', 'bad');
      },
    });
    const code = await a.run(
      'restore-fetch',
      '--data-dir=/d',
      '--etcd-version=3.5.16',
      `--termination-log=${join(dir, 'no', 'such', 'dir', 'log')}`,
    );
    assert.equal(code, 1);
    assert.deepEqual(a.err, ['ChecksumMismatch: bad']);
  });
});

describe('etcdfn-agent restore-commit', () => {
  it('commits the data directory’s restore, recording the source', async () => {
    const a = agent();
    const code = await a.run('restore-commit', '--data-dir=/var/lib/etcd', '--source-name=s3://b/k');
    assert.equal(code, 0);
    const [paths, rec] = a.calls[0]?.args as [{ dataDir: string }, unknown];
    assert.equal(paths.dataDir, '/var/lib/etcd');
    assert.deepEqual(rec, { source: 's3://b/k' });
    assert.deepEqual(a.out, ['restore of s3://b/k complete']);
  });

  it('no source name: an empty one', async () => {
    const a = agent();
    await a.run('restore-commit', '--data-dir=/d');
    assert.deepEqual((a.calls[0]?.args as unknown[])[1], { source: '' });
  });

  it('already committed: nothing changed, said', async () => {
    const a = agent({ commitRestore: async () => ({ kind: 'already-restored' }) as never });
    await a.run('restore-commit', '--data-dir=/d');
    assert.deepEqual(a.out, ['already restored: nothing changed']);
  });

  it('a failure: in the termination log, exit 1', async () => {
    const a = agent({
      commitRestore: async () => {
        throw new Error('rename failed');
      },
    });
    const log = logFile();
    assert.equal(await a.run('restore-commit', '--data-dir=/d', `--termination-log=${log}`), 1);
    assert.equal(read(log), 'RestoreFailed: rename failed');
  });
});

const saveArgs = (log: string, ...more: string[]) => [
  'snapshot-save',
  '--dir=/snapshots/backups',
  '--file=snap.db',
  '--recorded-path=backups/snap.db',
  '--owner-uid=snap-uid',
  '--source',
  'demo-1=http://demo-1.demo.prod.svc:2379',
  'demo-0=http://demo-0:2379/?a=b',
  `--termination-log=${log}`,
  ...more,
];

describe('etcdfn-agent snapshot-save', () => {
  it('hands the step the claim’s mount, the file, its owner and the members in order; reports what it saved', async () => {
    const a = agent();
    const log = logFile();
    assert.equal(await a.run(...saveArgs(log)), 0);
    assert.deepEqual(a.calls[0]?.args, {
      mount: '/snapshots',
      dir: '/snapshots/backups',
      file: 'snap.db',
      recordedPath: 'backups/snap.db',
      ownerUid: 'snap-uid',
      access: {},
      sources: [
        { member: 'demo-1', endpoint: 'http://demo-1.demo.prod.svc:2379' },
        { member: 'demo-0', endpoint: 'http://demo-0:2379/?a=b' },
      ],
    });
    const report = read(log);
    assert.ok(
      report.endsWith(
        JSON.stringify({
          path: 'backups/snap.db',
          sizeBytes: 4128,
          sha256: 'cd34',
          member: 'demo-1',
          revision: 9,
        }),
      ),
      report,
    );
    assert.deepEqual(a.out, ['saved backups/snap.db: 4128 bytes, sha256 cd34, from demo-1']);
  });

  it('client TLS and the root login from the mounted files', async () => {
    for (const [f, text] of [
      ['ca', 'CA PEM'],
      ['cert', 'CERT PEM'],
      ['key', 'KEY PEM'],
      ['pw', 'hunter2'],
    ])
      writeFileSync(join(dir, f), text);
    const a = agent();
    await a.run(
      ...saveArgs(logFile()),
      '--mount=/m',
      `--tls-ca=${join(dir, 'ca')}`,
      `--tls-cert=${join(dir, 'cert')}`,
      `--tls-key=${join(dir, 'key')}`,
      '--auth-user=root',
      `--auth-password-file=${join(dir, 'pw')}`,
    );
    const args = a.calls[0]?.args as {
      mount: string;
      access: { tls: Record<string, Buffer>; auth: unknown };
    };
    assert.equal(args.mount, '/m');
    assert.equal(args.access.tls.ca?.toString(), 'CA PEM');
    assert.equal(args.access.tls.cert?.toString(), 'CERT PEM');
    assert.equal(args.access.tls.key?.toString(), 'KEY PEM');
    assert.deepEqual(args.access.auth, { username: 'root', password: 'hunter2' });
    assert.ok(!a.out.join().includes('hunter2') && !a.err.join().includes('hunter2'), 'never printed');
  });

  it('a CA alone (no client certificate), a user without a password file: neither half invented', async () => {
    const a = agent();
    await a.run(...saveArgs(logFile()), `--tls-ca=${join(dir, 'ca')}`, '--auth-user=root');
    const access = (a.calls[0]?.args as { access: { tls: object; auth?: unknown } }).access;
    assert.deepEqual(Object.keys(access.tls), ['ca']);
    assert.equal(access.auth, undefined);
    const b = agent();
    await b.run(
      ...saveArgs(logFile()),
      `--auth-password-file=${join(dir, 'pw')}`,
      `--tls-cert=${join(dir, 'cert')}`,
    );
    assert.deepEqual((b.calls[0]?.args as { access: object }).access, {});
  });

  it('a failure with its reason: the report says it, exit 1', async () => {
    const a = agent({
      saveSnapshotFile: async () => {
        throw new SaveFailure('VolumeFull', 'no space left on device');
      },
    });
    const log = logFile();
    assert.equal(await a.run(...saveArgs(log)), 1);
    assert.equal(read(log), 'VolumeFull: no space left on device');
    assert.deepEqual(a.err, ['VolumeFull: no space left on device']);
  });

  it('any other error: SaveFailed', async () => {
    const a = agent({ saveSnapshotFile: () => Promise.reject(new Error('boom')) });
    const log = logFile();
    assert.equal(await a.run(...saveArgs(log)), 1);
    assert.equal(read(log), 'SaveFailed: boom');
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a thrown non-Error, as String(err) handles
    const b = agent({ saveSnapshotFile: () => Promise.reject('bare') });
    const log2 = logFile();
    await b.run(...saveArgs(log2));
    assert.equal(read(log2), 'SaveFailed: bare');
  });

  it('no termination log: the outcome unchanged', async () => {
    const a = agent();
    assert.equal(await a.run(...saveArgs(join(dir, 'none', 'log'))), 0);
  });
});

const deleteArgs = (log: string, ...more: string[]) => [
  'snapshot-delete',
  '--dir=/snapshots/backups',
  '--file=snap.db',
  '--recorded-path=backups/snap.db',
  '--owner-uid=snap-uid',
  '--sha256=cd34',
  `--termination-log=${log}`,
  ...more,
];

describe('etcdfn-agent snapshot-delete', () => {
  it('hands the step the file, its owner and its checksum; reports what it did', async () => {
    const a = agent();
    const log = logFile();
    assert.equal(await a.run(...deleteArgs(log)), 0);
    const args = a.calls[0]?.args as Record<string, unknown>;
    assert.deepEqual(
      {
        mount: args.mount,
        dir: args.dir,
        file: args.file,
        recordedPath: args.recordedPath,
        ownerUid: args.ownerUid,
        sha256: args.sha256,
      },
      {
        mount: '/snapshots',
        dir: '/snapshots/backups',
        file: 'snap.db',
        recordedPath: 'backups/snap.db',
        ownerUid: 'snap-uid',
        sha256: 'cd34',
      },
    );
    assert.ok(
      read(log).endsWith(JSON.stringify({ kind: 'deleted', message: 'deleted backups/snap.db' })),
      read(log),
    );
    assert.deepEqual(a.out, ['deleted backups/snap.db']);
  });

  it('a failure: said in the report, cut at 3900 characters, exit 1', async () => {
    const a = agent({ deleteSnapshotFile: () => Promise.reject(new Error('y'.repeat(5000))) });
    const log = logFile();
    assert.equal(await a.run(...deleteArgs(log)), 1);
    assert.equal(read(log).length, 3900);
    assert.ok(read(log).startsWith('the delete step failed: yyy'));
    assert.equal(a.err[0], read(log));
    // eslint-disable-next-line @typescript-eslint/prefer-promise-reject-errors -- a thrown non-Error, as String(err) handles
    const b = agent({ deleteSnapshotFile: () => Promise.reject('bare') });
    const log2 = logFile();
    await b.run(...deleteArgs(log2));
    assert.equal(read(log2), 'the delete step failed: bare');
  });

  it('no termination log: the outcome unchanged', async () => {
    const a = agent();
    assert.equal(await a.run(...deleteArgs(join(dir, 'none', 'log'))), 0);
  });
});

describe('etcdfn-agent <command> --help: what a person reads', () => {
  const help = (command: string) => {
    const program = agentProgram(AGENT_STEPS, { log: () => {}, error: () => {}, env: {} }, () => {});
    const found = program.commands.find(c => c.name() === command);
    assert.ok(found, command);
    return found.helpInformation().replace(/\s+/g, ' ');
  };

  it('restore-fetch', () => {
    const text = help('restore-fetch');
    for (const part of [
      'fetch and verify the snapshot a new cluster is restored from',
      '--data-dir <dir>',
      '--etcd-version <version>',
      '--termination-log <file> (default: "/dev/termination-log")',
      '--source-mount <dir> where the claim holding --source-file is mounted (default: "/restore-source")',
      '--sha256 <hex>',
      '--s3-endpoint <url>',
      '--s3-bucket <bucket>',
      '--s3-key <key>',
      '--s3-region <region>',
      '--s3-path-style <bool>',
      '--s3-secret <name>',
      '--source-file <path>',
      '--source-name <uri>',
    ])
      assert.ok(text.includes(part), `${part} in: ${text}`);
  });

  it('restore-commit', () => {
    const text = help('restore-commit');
    for (const part of [
      "move etcd's restored data into place and mark the restore complete",
      '--termination-log <file> (default: "/dev/termination-log")',
      '--source-name <uri> (default: "")',
    ])
      assert.ok(text.includes(part), `${part} in: ${text}`);
  });

  for (const command of ['snapshot-save', 'snapshot-delete'])
    it(command, () => {
      const text = help(command);
      for (const part of [
        '--mount <dir> --dir/--file must resolve inside this mount of the claim (default: "/snapshots")',
        '--dir <dir> the directory on the mounted claim',
        '--recorded-path <path> the path relative to the claim, as the status records it',
        '--termination-log <file> (default: "/dev/termination-log")',
        "--tls-ca <file> the CA of etcd's serving certificate (client TLS)",
        '--tls-cert <file> client certificate (mTLS)',
        "--tls-key <file> the client certificate's key",
      ])
        assert.ok(text.includes(part), `${part} in: ${text}`);
    });

  it('snapshot-save: its sources and login', () => {
    const text = help('snapshot-save');
    for (const part of [
      'stream a snapshot from etcd to a file on a mounted PVC, then read it back and verify it',
      '--source <member=url...> members to stream from, in order of preference',
      '--auth-user <name> the etcd user to log in as (auth clusters)',
      "--auth-password-file <file> the file holding that user's password (a mounted Secret key)",
    ])
      assert.ok(text.includes(part), `${part} in: ${text}`);
  });

  it('snapshot-delete: only its own file, unchanged', () => {
    const text = help('snapshot-delete');
    for (const part of [
      'remove a snapshot file from a mounted PVC, only if this EtcdSnapshot wrote it and it is unchanged',
      '--sha256 <hex> the checksum the status records',
    ])
      assert.ok(text.includes(part), `${part} in: ${text}`);
  });

  it('the program is etcdfn-agent', () => {
    const program = agentProgram(AGENT_STEPS, { log: () => {}, error: () => {}, env: {} }, () => {});
    assert.equal(program.name(), 'etcdfn-agent');
  });
});

describe('etcdfn-agent with the process’s own output and environment (as agent/main.ts runs it)', () => {
  it('prints its line on stdout, its failure on stderr, and reads the key pair from process.env', async () => {
    const log = mock.method(console, 'log', () => {});
    const error = mock.method(console, 'error', () => {});
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, key: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = 'AKIDENV';
    process.env.AWS_SECRET_ACCESS_KEY = 'envsecret';
    try {
      const seen: unknown[] = [];
      const steps = {
        ...AGENT_STEPS,
        fetchSnapshot: async (req: unknown) => {
          seen.push(req);
          return { kind: 'already-restored' as const };
        },
        commitRestore: async () => {
          throw new Error('disk gone');
        },
      } as AgentSteps;
      assert.equal(
        await runAgent(
          ['node', 'etcdfn-agent', 'restore-fetch', '--data-dir=/d', '--etcd-version=3.5.16'],
          steps,
        ),
        0,
      );
      assert.deepEqual(
        log.mock.calls.map(c => c.arguments),
        [['already restored: the data directory is kept as it is']],
      );
      assert.deepEqual((seen[0] as { source: { credentials: unknown } }).source.credentials, {
        accessKeyId: 'AKIDENV',
        secretAccessKey: 'envsecret',
      });
      const code = await runAgent(
        ['node', 'etcdfn-agent', 'restore-commit', '--data-dir=/d', `--termination-log=${logFile()}`],
        steps,
      );
      assert.equal(code, 1);
      assert.deepEqual(
        error.mock.calls.map(c => c.arguments),
        [['RestoreFailed: disk gone']],
      );
    } finally {
      log.mock.restore();
      error.mock.restore();
      if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
      else process.env.AWS_ACCESS_KEY_ID = saved.id;
      if (saved.key === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
      else process.env.AWS_SECRET_ACCESS_KEY = saved.key;
    }
  });
});
