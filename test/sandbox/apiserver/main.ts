// CLI for manual use: node --import tsx test/sandbox/apiserver/main.ts --port 8001 --crds crds
//   --data .sandbox/apiserver --kubeconfig .sandbox/kubeconfig
// Runs until SIGINT/SIGTERM, then saves (with --data) and exits.

import { resolve } from 'node:path';
import { Command } from 'commander';
import { writeKubeconfig } from '../kubeconfig.ts';
import { startApiServer } from './index.ts';

const program = new Command()
  .name('sandbox-apiserver')
  .description('A local Kubernetes API server stand-in for etcdfn')
  .option('--port <port>', 'port on 127.0.0.1 (0 = any free port)', '0')
  .option('--crds <dir>', 'directory of CustomResourceDefinition YAML files')
  .option('--data <dir>', 'persist objects in this directory')
  .option('--kubeconfig <file>', 'write a kubeconfig for kubectl / client-node here')
  .option('--namespace <ns>', 'namespace of the kubeconfig context', 'default')
  .option('--no-pod-graceful-deletion', 'delete Pods at once (when no kubelet runs)')
  .option('-v, --verbose', 'log every request');

program.parse();
const o = program.opts<{
  port: string;
  crds?: string;
  data?: string;
  kubeconfig?: string;
  namespace: string;
  podGracefulDeletion: boolean;
  verbose?: boolean;
}>();

const server = await startApiServer({
  port: Number(o.port),
  crdDir: o.crds && resolve(o.crds),
  dataDir: o.data && resolve(o.data),
  podGracefulDeletion: o.podGracefulDeletion,
  log: o.verbose ? line => console.error(line) : undefined,
});
console.log(`sandbox API server listening on ${server.url}`);
if (o.kubeconfig) {
  writeKubeconfig(resolve(o.kubeconfig), server.url, o.namespace);
  console.log(`kubeconfig written to ${resolve(o.kubeconfig)} (export KUBECONFIG=${resolve(o.kubeconfig)})`);
}

const stop = (): void => {
  void server.close().then(() => process.exit(0));
};
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
