// The agent's commands (`etcdfn-agent restore-fetch|restore-commit|snapshot-save|snapshot-delete`),
// run by agent/main.ts inside member Pods (init containers) and Jobs. A failed step writes
// `<Reason>: <message>` to its termination log, which the operator turns into the cluster's
// Restored condition (or the snapshot's status), and answers exit code 1 so the Pod goes no further.
// Apart from the entry point so tests can run each command in process, with the steps replaced.
import { readFileSync, writeFileSync } from 'node:fs';
import { Command } from 'commander';
import type { EtcdAccess } from '../shared/etcd/access.ts';
import {
  RESTORE_SOURCE_MOUNT,
  RestoreFailure,
  failureMessage,
  restorePaths,
} from '../shared/restore/layout.ts';
import { fetchSnapshot, type FetchSource } from '../shared/restore/fetch.ts';
import { commitRestore } from '../shared/restore/commit.ts';
import { credentialsIn } from '../shared/s3/location.ts';
import {
  deleteMessage,
  failedMessage,
  SaveFailure,
  savedMessage,
  SNAPSHOT_MOUNT,
} from '../shared/snapshot-file/result.ts';
import { saveSnapshotFile } from '../shared/snapshot-file/save.ts';
import { deleteSnapshotFile } from '../shared/snapshot-file/delete.ts';

/** The work each command does; tests replace them. */
export interface AgentSteps {
  fetchSnapshot: typeof fetchSnapshot;
  commitRestore: typeof commitRestore;
  saveSnapshotFile: typeof saveSnapshotFile;
  deleteSnapshotFile: typeof deleteSnapshotFile;
}

export const AGENT_STEPS: AgentSteps = { fetchSnapshot, commitRestore, saveSnapshotFile, deleteSnapshotFile };

/** Where the agent writes its lines and reads its credentials: the process's own, unless a test says. */
export interface AgentIo {
  log(line: string): void;
  error(line: string): void;
  env: NodeJS.ProcessEnv;
}

const PROCESS_IO: AgentIo = {
  log: line => console.log(line),
  error: line => console.error(line),
  env: process.env,
};

interface Common {
  dataDir: string;
  terminationLog: string;
}

/** Runs the command `argv` names (argv as process.argv: node, script, command, options); the exit code. */
export async function runAgent(
  argv: readonly string[],
  steps: AgentSteps = AGENT_STEPS,
  io: AgentIo = PROCESS_IO,
): Promise<number> {
  let exitCode = 0;
  const fail = () => {
    exitCode = 1;
  };
  await agentProgram(steps, io, fail).parseAsync([...argv]);
  return exitCode;
}

async function step(
  common: Common,
  io: AgentIo,
  fail: () => void,
  run: () => Promise<string>,
): Promise<void> {
  try {
    io.log(await run());
  } catch (err) {
    const failure =
      err instanceof RestoreFailure
        ? err
        : new RestoreFailure('RestoreFailed', err instanceof Error ? err.message : String(err));
    const text = failureMessage(failure);
    io.error(text);
    try {
      writeFileSync(common.terminationLog, text.slice(0, 4000));
    } catch {
      // no termination log: the message is still in the container's log
    }
    fail();
  }
}

/** The agent's commands, bound to `steps` and `io`; `fail` is called when a step fails. */
export function agentProgram(steps: AgentSteps, io: AgentIo, fail: () => void): Command {
  const program = new Command().name('etcdfn-agent');

  program
    .command('restore-fetch')
    .description('fetch and verify the snapshot a new cluster is restored from')
    .requiredOption('--data-dir <dir>')
    .requiredOption('--etcd-version <version>')
    .option('--termination-log <file>', '', '/dev/termination-log')
    .option('--sha256 <hex>')
    .option('--s3-endpoint <url>')
    .option('--s3-bucket <bucket>')
    .option('--s3-key <key>')
    .option('--s3-region <region>')
    .option('--s3-path-style <bool>')
    .option('--s3-secret <name>')
    .option('--source-file <path>')
    .option('--source-mount <dir>', 'where the claim holding --source-file is mounted', RESTORE_SOURCE_MOUNT)
    .option('--source-name <uri>')
    .action(async (o: Record<string, string | undefined> & Common) => {
      await step(o, io, fail, async () => {
        const source: FetchSource = o.sourceFile
          ? {
              kind: 'file',
              mount: o.sourceMount ?? RESTORE_SOURCE_MOUNT,
              path: o.sourceFile,
              display: o.sourceName ?? o.sourceFile,
            }
          : {
              kind: 's3',
              endpoint: o.s3Endpoint ?? '',
              bucket: o.s3Bucket ?? '',
              key: o.s3Key ?? '',
              region: o.s3Region,
              ...(o.s3PathStyle !== undefined && { forcePathStyle: o.s3PathStyle === 'true' }),
              credentials: credentialsIn({
                AWS_ACCESS_KEY_ID: io.env.AWS_ACCESS_KEY_ID ?? '',
                AWS_SECRET_ACCESS_KEY: io.env.AWS_SECRET_ACCESS_KEY ?? '',
              }),
              secretName: o.s3Secret ?? '',
            };
        const result = await steps.fetchSnapshot({
          paths: restorePaths(o.dataDir),
          source,
          ...(o.sha256 && { sha256: o.sha256 }),
          etcdVersion: o.etcdVersion ?? '',
        });
        if (result.kind === 'already-restored')
          return 'already restored: the data directory is kept as it is';
        return `fetched ${result.sizeBytes} bytes, sha256 ${result.sha256}, written by etcd ${result.snapshotMinor}`;
      });
    });

  program
    .command('restore-commit')
    .description("move etcd's restored data into place and mark the restore complete")
    .requiredOption('--data-dir <dir>')
    .option('--termination-log <file>', '', '/dev/termination-log')
    .option('--source-name <uri>', '', '')
    .action(async (o: Common & { sourceName: string }) => {
      await step(o, io, fail, async () => {
        const result = await steps.commitRestore(restorePaths(o.dataDir), { source: o.sourceName });
        return result.kind === 'committed'
          ? `restore of ${o.sourceName} complete`
          : 'already restored: nothing changed';
      });
    });

  program
    .command('snapshot-save')
    .description('stream a snapshot from etcd to a file on a mounted PVC, then read it back and verify it')
    .option('--mount <dir>', '--dir/--file must resolve inside this mount of the claim', SNAPSHOT_MOUNT)
    .requiredOption('--dir <dir>', 'the directory on the mounted claim')
    .requiredOption('--file <name>')
    .requiredOption('--recorded-path <path>', 'the path relative to the claim, as the status records it')
    .requiredOption('--owner-uid <uid>')
    .requiredOption('--source <member=url...>', 'members to stream from, in order of preference')
    .option('--termination-log <file>', '', '/dev/termination-log')
    .option('--tls-ca <file>', "the CA of etcd's serving certificate (client TLS)")
    .option('--tls-cert <file>', 'client certificate (mTLS)')
    .option('--tls-key <file>', "the client certificate's key")
    .option('--auth-user <name>', 'the etcd user to log in as (auth clusters)')
    .option('--auth-password-file <file>', "the file holding that user's password (a mounted Secret key)")
    .action(
      async (o: {
        tlsCa?: string;
        tlsCert?: string;
        tlsKey?: string;
        authUser?: string;
        authPasswordFile?: string;
        mount: string;
        dir: string;
        file: string;
        recordedPath: string;
        ownerUid: string;
        source: string[];
        terminationLog: string;
      }) => {
        let report: string;
        try {
          const saved = await steps.saveSnapshotFile({
            mount: o.mount,
            dir: o.dir,
            file: o.file,
            recordedPath: o.recordedPath,
            ownerUid: o.ownerUid,
            access: agentAccess(o),
            sources: o.source.map(s => {
              const at = s.indexOf('=');
              return { member: s.slice(0, at), endpoint: s.slice(at + 1) };
            }),
          });
          report = savedMessage(saved);
          io.log(
            `saved ${saved.path}: ${saved.sizeBytes} bytes, sha256 ${saved.sha256}, from ${saved.member}`,
          );
        } catch (err) {
          const failure =
            err instanceof SaveFailure
              ? err
              : new SaveFailure('SaveFailed', err instanceof Error ? err.message : String(err));
          report = failedMessage(failure);
          io.error(report);
          fail();
        }
        try {
          writeFileSync(o.terminationLog, report);
        } catch {
          // no termination log: the report is still in the container's log
        }
      },
    );

  program
    .command('snapshot-delete')
    .description(
      'remove a snapshot file from a mounted PVC, only if this EtcdSnapshot wrote it and it is unchanged',
    )
    .option('--mount <dir>', '--dir/--file must resolve inside this mount of the claim', SNAPSHOT_MOUNT)
    .requiredOption('--dir <dir>', 'the directory on the mounted claim')
    .requiredOption('--file <name>')
    .requiredOption('--recorded-path <path>', 'the path relative to the claim, as the status records it')
    .requiredOption('--owner-uid <uid>')
    .requiredOption('--sha256 <hex>', 'the checksum the status records')
    .option('--termination-log <file>', '', '/dev/termination-log')
    .option('--tls-ca <file>', "the CA of etcd's serving certificate (client TLS)")
    .option('--tls-cert <file>', 'client certificate (mTLS)')
    .option('--tls-key <file>', "the client certificate's key")
    .action(
      async (
        o: Parameters<typeof deleteSnapshotFile>[0] & {
          tlsCa?: string;
          tlsCert?: string;
          tlsKey?: string;
          terminationLog: string;
        },
      ) => {
        let report: string;
        try {
          const deleted = await steps.deleteSnapshotFile(o);
          report = deleteMessage(deleted);
          io.log(deleted.message);
        } catch (err) {
          report = `the delete step failed: ${err instanceof Error ? err.message : String(err)}`.slice(
            0,
            3900,
          );
          io.error(report);
          fail();
        }
        try {
          writeFileSync(o.terminationLog, report);
        } catch {
          // no termination log: the report is still in the container's log
        }
      },
    );

  return program;
}

/**
 * Client TLS and credentials from the files the Job mounts (shared/builders/snapshot-job.ts), read
 * at start. The password is used as the Secret holds it (as the operator's own calls do) and never
 * printed.
 */
function agentAccess(o: {
  tlsCa?: string;
  tlsCert?: string;
  tlsKey?: string;
  authUser?: string;
  authPasswordFile?: string;
}): EtcdAccess {
  return {
    ...(o.tlsCa && {
      tls: {
        ca: readFileSync(o.tlsCa),
        ...(o.tlsCert && { cert: readFileSync(o.tlsCert) }),
        ...(o.tlsKey && { key: readFileSync(o.tlsKey) }),
      },
    }),
    ...(o.authUser &&
      o.authPasswordFile && {
        auth: { username: o.authUser, password: readFileSync(o.authPasswordFile, 'utf8') },
      }),
  };
}
