// Fault injection from the command line, through a running kubelet's control endpoint:
//
//   node --import tsx test/sandbox/kubelet/fault.ts [--url URL | --data-dir DIR] <command> ...
//     kill <ns/pod> [container] [--signal SIGTERM]   signal a Pod's processes (default SIGKILL)
//     wipe-pvc <ns/claim>                             delete everything in a PVC's directory
//     fill-pvc <ns/claim> <bytes>                     the PVC's disk becomes that small (ENOSPC past it)
//     read-only-pvc <ns/claim>                        the PVC's file system turns read-only (EROFS)
//     release-pvc <ns/claim>                          undo fill-pvc / read-only-pvc
//     freeze | unfreeze                               stop / resume the node
//     delay <ns/pod> <seconds>                        delay the (next) start of a Pod's containers
//     state                                           Pods, IPs, PIDs, restart counts (JSON)
//     logs <ns/pod> <container> [--previous]          a container's log
//
// The endpoint is found from --url, else $SANDBOX_KUBELET_URL, else <dir>/control.json for
// --data-dir, else the first of .sandbox/kubelet, .sandbox/k/kubelet, .sandbox that has one.
// A bare pod name means namespace "default".
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { Command } from 'commander';
import { FaultClient, controlUrlOf } from './control.ts';

function findUrl(opts: { url?: string; dataDir?: string }): string {
  if (opts.url) return opts.url;
  if (process.env.SANDBOX_KUBELET_URL) return process.env.SANDBOX_KUBELET_URL;
  const dirs = opts.dataDir ? [opts.dataDir] : ['.sandbox/kubelet', '.sandbox/k/kubelet', '.sandbox'];
  for (const dir of dirs) if (existsSync(join(dir, 'control.json'))) return controlUrlOf(dir);
  throw new Error(
    `no running kubelet found (looked for control.json in ${dirs.join(', ')}); pass --url or --data-dir`,
  );
}

function ref(value: string): { namespace: string; name: string } {
  const [a, b] = value.split('/');
  return b === undefined ? { namespace: 'default', name: a } : { namespace: a, name: b };
}

const program = new Command()
  .name('fault')
  .description('Inject faults into the sandbox kubelet')
  .option('--url <url>', 'control endpoint of the kubelet')
  .option('--data-dir <dir>', 'kubelet data directory holding control.json');

const client = (): FaultClient =>
  new FaultClient(findUrl(program.opts<{ url?: string; dataDir?: string }>()));
const print = (value: unknown): void => {
  process.stdout.write(typeof value === 'string' ? value : `${JSON.stringify(value, null, 2)}\n`);
};

program
  .command('kill <pod> [container]')
  .option('--signal <signal>', 'signal to send', 'SIGKILL')
  .action(async (pod: string, container: string | undefined, o: { signal: string }) => {
    const { namespace, name } = ref(pod);
    print(await client().kill({ namespace, pod: name, container, signal: o.signal as NodeJS.Signals }));
  });
program.command('wipe-pvc <claim>').action(async (claim: string) => {
  const { namespace, name } = ref(claim);
  print(await client().wipePvc({ namespace, claim: name }));
});
program
  .command('fill-pvc <claim> <bytes>')
  .description("the claim's disk becomes that small (writes past it fail with ENOSPC)")
  .action(async (claim: string, bytes: string) => {
    const { namespace, name } = ref(claim);
    print(await client().fillPvc({ namespace, claim: name, bytes: Number(bytes) }));
  });
program.command('read-only-pvc <claim>').action(async (claim: string) => {
  const { namespace, name } = ref(claim);
  print(await client().readOnlyPvc({ namespace, claim: name }));
});
program.command('release-pvc <claim>').action(async (claim: string) => {
  const { namespace, name } = ref(claim);
  print(await client().releasePvc({ namespace, claim: name }));
});
program.command('freeze').action(async () =>
  print(
    await client()
      .freeze()
      .then(() => ({ frozen: true })),
  ),
);
program.command('unfreeze').action(async () =>
  print(
    await client()
      .unfreeze()
      .then(() => ({ frozen: false })),
  ),
);
program.command('delay <pod> <seconds>').action(async (pod: string, seconds: string) => {
  const { namespace, name } = ref(pod);
  await client().delayStart({ namespace, pod: name, seconds: Number(seconds) });
  print({ delayed: `${namespace}/${name}`, seconds: Number(seconds) });
});
program.command('state').action(async () => print(await client().state()));
program
  .command('logs <pod> <container>')
  .option('--previous', 'the previous run of the container')
  .action(async (pod: string, container: string, o: { previous?: boolean }) => {
    const { namespace, name } = ref(pod);
    print(await client().logs(namespace, name, container, !!o.previous));
  });

try {
  await program.parseAsync();
} catch (err) {
  process.stderr.write(`fault: ${(err as Error).message}\n`);
  process.exitCode = 1;
}
