// The sandbox's control plane (the real one, ../control-plane) and process kubelet in one process, inside the private mount namespace
// that gives its processes the sandbox's /etc/hosts. Started by harness.ts for tests, or by hand:
//
//   node --import tsx test/sandbox/kubelet/sandbox-process.ts --dir .sandbox/k [--crds crds]
//
// Re-executes itself under `unshare` when needed (namespace.ts). Prints one JSON line on stdout
// when ready ({"ready":true,"url","kubeconfig","controlUrl","hostsFile","dnsActive","nameServerIP","pid"}), then
// runs until SIGTERM/SIGINT or until stdin closes (the parent went away), and stops everything.
import { rmSync } from 'node:fs';
import { Command } from 'commander';
import { startCore } from '../core.ts';
import { ensurePrivateMountNamespace } from '../namespace.ts';

await ensurePrivateMountNamespace();

const program = new Command()
  .name('sandbox-process')
  .requiredOption('--dir <dir>', 'state directory (control-plane/, kubelet/)')
  .option('--crds <dir>', 'CustomResourceDefinition YAML files to apply')
  .option('--port <port>', 'API server port on 127.0.0.1 (0 = any)', '0')
  .option('--ip-base <ip>', 'Pod IPs are counted up from this 127.x.y.z address')
  .option('--agent-command <json>', 'argv of the operator agent, as a JSON array')
  .option('--backoff-max-ms <ms>', 'cap of the restart back-off')
  .option('--pod-network', 'run Pods that ask for it in network namespaces of their own (root)')
  .option('--persist', "keep the control plane's etcd data (<dir>/control-plane/etcd) across restarts")
  .option('--watch-stdin', 'stop when stdin closes')
  .option('--remove-dir', 'remove --dir when stopping');
program.parse();
const o = program.opts<{
  dir: string;
  crds?: string;
  port: string;
  ipBase?: string;
  agentCommand?: string;
  backoffMaxMs?: string;
  persist?: boolean;
  podNetwork?: boolean;
  watchStdin?: boolean;
  removeDir?: boolean;
}>();

const core = await startCore({
  dir: o.dir,
  crdDir: o.crds,
  port: Number(o.port),
  ipBase: o.ipBase,
  agentCommand: o.agentCommand ? (JSON.parse(o.agentCommand) as string[]) : undefined,
  backoffMaxMs: o.backoffMaxMs ? Number(o.backoffMaxMs) : undefined,
  persist: o.persist ?? false,
  podNetwork: o.podNetwork ?? false,
});
const { kubelet, kubeconfig } = core;

let stopping = false;
async function stop(code: number): Promise<void> {
  if (stopping) return;
  stopping = true;
  await core.stop();
  if (o.removeDir) rmSync(core.dir, { recursive: true, force: true });
  process.exit(code);
}
process.on('SIGTERM', () => void stop(0));
process.on('SIGINT', () => void stop(0));
process.on('SIGHUP', () => void stop(0));
if (o.watchStdin) {
  process.stdin.on('end', () => void stop(0));
  process.stdin.on('error', () => void stop(0));
  process.stdin.resume();
}

const info = {
  ready: true,
  url: core.url,
  kubeconfig,
  controlUrl: kubelet.controlUrl,
  hostsFile: kubelet.hostsFile,
  dnsActive: kubelet.dnsActive,
  nameServerIP: kubelet.nameServerIP ?? null,
  pid: process.pid,
};
process.stdout.write(`${JSON.stringify(info)}\n`);
