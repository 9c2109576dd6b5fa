// Knative's images: its module's config/ names `ko://` images (ko's "build this Go package" form;
// a release names built images instead). The sandbox runs each as the binary scripts/build-go.sh
// built from test/go/knative (named after the Deployment that runs it). The controller hands the
// same form to the Deployments it makes (APISERVER_RA_IMAGE), so adapters map the same way.
import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { goCacheDir } from '../../support/etcd-binaries.ts';

/** Go package under knative.dev/eventing/cmd/ → the binary built from it. */
const PROGRAMS: Readonly<Record<string, string>> = {
  controller: 'eventing-controller',
  webhook: 'eventing-webhook',
  apiserver_receive_adapter: 'apiserver-receive-adapter',
  mtping: 'pingsource-mt-adapter',
  'in_memory/channel_controller': 'imc-controller',
  'in_memory/channel_dispatcher': 'imc-dispatcher',
  mtchannel_broker: 'mt-broker-controller',
  'broker/ingress': 'mt-broker-ingress',
  'broker/filter': 'mt-broker-filter',
};

const KO_EVENTING = 'ko://knative.dev/eventing/cmd/';

/** Whether an image is one of Knative's (its programs bind :8080, so they need a namespace each). */
export function isKnativeImage(image: string | undefined): boolean {
  return !!image?.startsWith('ko://knative.dev/');
}

/** The `ko://` image → binary map of the programs built (empty when none are). */
export function knativePrograms(dir = join(goCacheDir(), 'knative')): Map<string, string> {
  const out = new Map<string, string>();
  for (const [pkg, binary] of Object.entries(PROGRAMS)) {
    const path = join(dir, binary);
    if (existsSync(path)) out.set(`${KO_EVENTING}${pkg}`, path);
  }
  return out;
}
