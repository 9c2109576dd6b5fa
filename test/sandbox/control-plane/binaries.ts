// Where the real control-plane programs are: built from k8s.io/kubernetes by scripts/build-go.sh
// (test/go/kube/go.mod) into the Go build cache. The API server's store is etcd 3.6, what
// Kubernetes itself runs on.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { etcdBinaries, goCacheDir, type EtcdBinaries } from '../../support/etcd-binaries.ts';

export interface ControlPlaneBinaries {
  kubeApiserver: string;
  kubeControllerManager: string;
  etcd: EtcdBinaries;
}

export function controlPlaneBinaries(): ControlPlaneBinaries {
  const dir = process.env.ETCDFN_KUBE_BIN ?? join(goCacheDir(), 'kube');
  const kubeApiserver = join(dir, 'kube-apiserver');
  const kubeControllerManager = join(dir, 'kube-controller-manager');
  for (const bin of [kubeApiserver, kubeControllerManager]) {
    if (!existsSync(bin)) {
      throw new Error(
        `${bin} does not exist: run \`npm run setup\` (scripts/build-go.sh builds kube-apiserver and ` +
          'kube-controller-manager from test/go/kube/go.mod), or set $ETCDFN_KUBE_BIN to a folder holding both',
      );
    }
  }
  return { kubeApiserver, kubeControllerManager, etcd: etcdBinaries('3.6') };
}
