// Runs the real control plane alone, for trying CRDs and manifests by hand:
//   node --import tsx test/sandbox/control-plane/main.ts [--dir D] [--crds]
// prints the kubeconfig path once ready; Ctrl-C stops etcd, kube-apiserver and the controller manager.
import { join, resolve } from 'node:path';
import { KubeConfig } from '@kubernetes/client-node';
import { applyCrds } from './apply.ts';
import { startControlPlane } from './index.ts';

const args = process.argv.slice(2);
const dirAt = args.indexOf('--dir');
const dir = resolve(dirAt >= 0 ? args[dirAt + 1] : '.control-plane');
const cp = await startControlPlane({ dir });
const root = resolve(import.meta.dirname, '..', '..', '..');
if (args.includes('--crds')) {
  const kc = new KubeConfig();
  kc.loadFromFile(cp.kubeconfig);
  await applyCrds(kc, [join(root, 'crds'), join(root, 'test', 'sandbox', 'crds')]).catch(
    async (err: Error) => {
      process.stderr.write(`${err.message}\n`);
      await cp.stop();
      process.exit(1);
    },
  );
}
process.stdout.write(`kube-apiserver ${cp.version} at ${cp.url}\nexport KUBECONFIG=${cp.kubeconfig}\n`);
const stop = (): void => void cp.stop().then(() => process.exit(0));
process.on('SIGINT', stop);
process.on('SIGTERM', stop);
