// kubectl etcdfn: a kubectl plugin for etcdfn clusters. Run as `node --import tsx cli/main.ts`
// or, with scripts/ on PATH, as `kubectl etcdfn`. Every failure is one line on stderr and a
// non-zero exit code.
import { Command, InvalidArgumentError, Option } from 'commander';
import { CliError, openCli, type GlobalOptions } from './context.ts';
import { runAlarms } from './alarms.ts';
import { runCompact } from './compact.ts';
import { runDefrag } from './defrag.ts';
import { OUTPUT_FORMATS } from './format.ts';
import { runHealth } from './health.ts';
import { runMembers } from './members.ts';
import { runMoveLeader } from './move-leader.ts';
import { runPause } from './pause.ts';
import { runRestore, type Confirm, type RestoreOptions } from './restore.ts';
import { runResume } from './resume.ts';
import { runSnapshot, type SnapshotOptions } from './snapshot.ts';
import { runSnapshotSave, type SnapshotSaveOptions } from './snapshot-save.ts';
import { runStatus } from './status.ts';
import { createInterface } from 'node:readline/promises';
import { errorMessage } from '../shared/k8s/errors.ts';

const print = (line: string): void => void process.stdout.write(`${line}\n`);

/** The confirmation question on the terminal; undefined when stdin is not one (a script, a pipe). */
const askOnTerminal: Confirm = async question => {
  if (!process.stdin.isTTY) return undefined;
  const rl = createInterface({ input: process.stdin, output: process.stderr });
  try {
    return await rl.question(question);
  } finally {
    rl.close();
  }
};

function positiveInt(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 0) throw new InvalidArgumentError('not a whole number');
  return n;
}

const outputOption = () => new Option('-o, --output <format>', 'output format').choices(OUTPUT_FORMATS);
const timeoutOption = () =>
  new Option('--timeout <seconds>', 'how long --wait waits').argParser(positiveInt).default(600);

function globals(command: Command): GlobalOptions {
  return command.optsWithGlobals<GlobalOptions>();
}

export function buildProgram(): Command {
  // Over 80 lines: the declaration of every subcommand and option, read as the CLI's surface; each
  // action is a one-line call into its own file.
  const program = new Command('kubectl etcdfn')
    .description('Operate etcdfn etcd clusters')
    .option('--kubeconfig <path>', 'path to the kubeconfig file (default: $KUBECONFIG, ~/.kube/config)')
    .option('--context <name>', 'the kubeconfig context to use')
    .option('-n, --namespace <namespace>', "namespace (default: the context's namespace, else default)")
    .showHelpAfterError()
    .configureOutput({ outputError: (str, write) => write(str) });

  program
    .command('status')
    .description('readiness, conditions, members and latest snapshot of a cluster')
    .argument('<cluster>')
    .addOption(outputOption())
    .action(async (cluster: string, opts: { output?: string }, command: Command) => {
      print(await runStatus(openCli(globals(command)), cluster, opts.output));
    });

  program
    .command('members')
    .description("etcd's own member list and status, asked from the members, next to the EtcdCluster status")
    .argument('<cluster>')
    .addOption(outputOption())
    .action(async (cluster: string, opts: { output?: string }, command: Command) => {
      print(await runMembers(openCli(globals(command)), cluster, opts.output));
    });

  program
    .command('health')
    .description(
      'each member on its own endpoint: answers, knows the leader, serves a linearizable read; revision, raft term, db size, alarms (exit 1 when not healthy)',
    )
    .argument('<cluster>')
    .addOption(outputOption())
    .action(async (cluster: string, opts: { output?: string }, command: Command) => {
      const { text, exitCode } = await runHealth(openCli(globals(command)), cluster, opts.output);
      print(text);
      process.exitCode = exitCode;
    });

  program
    .command('alarms')
    .description("etcd's active alarms (NOSPACE, CORRUPT); --disarm clears them (exit 1 if any remain)")
    .argument('<cluster>')
    .option('--disarm', 'clear every active alarm (compact and defragment first for NOSPACE)')
    .addOption(outputOption())
    .action(async (cluster: string, opts: { disarm?: boolean; output?: string }, command: Command) => {
      const { text, exitCode } = await runAlarms(openCli(globals(command)), cluster, opts);
      print(text);
      process.exitCode = exitCode;
    });

  program
    .command('compact')
    .description('drop the key history before the current revision (or --revision)')
    .argument('<cluster>')
    .option('--revision <n>', 'compact before this revision instead of the current one', positiveInt)
    .action(async (cluster: string, opts: { revision?: number }, command: Command) => {
      print(await runCompact(openCli(globals(command)), cluster, opts.revision));
    });

  program
    .command('defrag')
    .description(
      'defragment members one at a time, followers first, the leader last (refused while a member is unhealthy)',
    )
    .argument('<cluster>')
    .option('--member <name>', 'only this member')
    .addOption(timeoutOption().default(120))
    .action(async (cluster: string, opts: { member?: string; timeout: number }, command: Command) => {
      process.exitCode = await runDefrag(openCli(globals(command)), cluster, opts, print);
    });

  program
    .command('move-leader')
    .description('make the named member (its Pod name) the raft leader')
    .argument('<cluster>')
    .argument('<member>')
    .action(async (cluster: string, member: string, _opts: unknown, command: Command) => {
      print(await runMoveLeader(openCli(globals(command)), cluster, member));
    });

  const snapshotCommand = program
    .command('snapshot')
    .description(
      'take a snapshot to S3 (creates an EtcdSnapshot named <cluster>-xxxxx); `snapshot save` copies one to a local file',
    )
    .argument('<cluster>')
    .option('--s3-endpoint <url>', '(required) S3 endpoint, e.g. https://s3.eu-west-1.amazonaws.com')
    .option('--bucket <bucket>', '(required) the bucket (must exist)')
    .option('--key <prefix>', 'object key prefix; end it with / for a folder')
    .option('--secret <name>', '(required) Secret with AWS_ACCESS_KEY_ID and AWS_SECRET_ACCESS_KEY')
    .option('--region <region>', 'S3 region (default us-east-1)')
    .option('--wait', 'wait until Complete or Failed; exit 1 on Failed')
    .addOption(timeoutOption())
    .action(async (cluster: string, opts: SnapshotOptions, command: Command) => {
      // Checked here, not by commander: it would ask `snapshot save` for them too.
      for (const [flag, value] of [
        ['--s3-endpoint <url>', opts.s3Endpoint],
        ['--bucket <bucket>', opts.bucket],
        ['--secret <name>', opts.secret],
      ] as const) {
        if (!value) command.error(`error: required option '${flag}' not specified`);
      }
      process.exitCode = await runSnapshot(openCli(globals(command)), cluster, opts, print);
    });
  snapshotCommand
    .command('save')
    .description(
      "stream a snapshot from a member to a local file, check etcd's integrity hash, report keys and revision",
    )
    .argument('<cluster>')
    .argument('<file>', 'a new file (never overwritten)')
    .option('--member <name>', 'the member to stream from (default: the first that serves)')
    .addOption(outputOption())
    .action(async (cluster: string, file: string, opts: SnapshotSaveOptions, command: Command) => {
      const say = (line: string): void => void process.stderr.write(`${line}\n`);
      print(await runSnapshotSave(openCli(globals(command)), cluster, file, opts, say));
    });

  program
    .command('pause')
    .description(
      "scale to 0 and wait until Paused, keeping the data on the last member's PersistentVolumeClaim",
    )
    .argument('<cluster>')
    .option('--wait', 'wait until the cluster is Paused (the default)', true)
    .option('--no-wait', 'return once spec.replicas is 0, without waiting for Paused')
    .addOption(timeoutOption())
    .action(async (cluster: string, opts: { wait?: boolean; timeout: number }, command: Command) => {
      await runPause(
        openCli(globals(command)),
        cluster,
        { wait: opts.wait === true, timeout: opts.timeout },
        print,
      );
    });

  program
    .command('resume')
    .description('scale a paused cluster back up (default: the replicas it had before `pause`)')
    .argument('<cluster>')
    .option('--replicas <n>', 'members to resume to', positiveInt)
    .option('--wait', 'wait until all members are ready')
    .addOption(timeoutOption())
    .action(
      async (
        cluster: string,
        opts: { replicas?: number; wait?: boolean; timeout: number },
        command: Command,
      ) => {
        const o = { replicas: opts.replicas, wait: opts.wait === true, timeout: opts.timeout };
        await runResume(openCli(globals(command)), cluster, o, print);
      },
    );

  program
    .command('restore')
    .description(
      'return a running cluster to an EtcdSnapshot in place (same name, Services and Secrets); discards all current data',
    )
    .argument('<cluster>')
    .requiredOption('--from <snapshot>', 'a Complete EtcdSnapshot in the same namespace')
    .option('--yes-destroy-current-data', 'do not ask: the current data is discarded')
    .option('--wait', 'follow the steps until the cluster is restored and ready')
    .addOption(timeoutOption())
    .action(
      async (
        cluster: string,
        opts: { from: string; yesDestroyCurrentData?: boolean; wait?: boolean; timeout: number },
        command: Command,
      ) => {
        const o: RestoreOptions = { ...opts, wait: opts.wait === true };
        process.exitCode = await runRestore(openCli(globals(command)), cluster, o, print, askOnTerminal);
      },
    );

  return program;
}

export async function main(argv: string[]): Promise<number> {
  try {
    await buildProgram().parseAsync(argv, { from: 'user' });
    return typeof process.exitCode === 'number' ? process.exitCode : 0;
  } catch (err) {
    const message = err instanceof CliError ? err.message : errorMessage(err).split('\n')[0];
    process.stderr.write(`error: ${message}\n`);
    return err instanceof CliError ? err.exitCode : 1;
  }
}

if (import.meta.url === `file://${process.argv[1]}` || /\/cli\/main\.[jt]s$/.test(process.argv[1] ?? '')) {
  process.exitCode = await main(process.argv.slice(2));
}
