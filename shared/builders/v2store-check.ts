// etcd's upgrade guide to 3.6: the v2 store must hold no custom content (3.6 refuses to start on
// it), checked with `etcdutl check v2store` on a data directory not in use. etcdfn never passes
// --enable-v2, so its members have none; the check still runs, with the member's previous (3.5)
// etcdutl, as an init container of the first 3.6 Pod of each member, on its own volume, before
// the 3.6 binary opens it. When it finds custom content (exit 1, "detected custom v2 content"),
// the Pod stays in its init container: the member's data is untouched, the roll-out waits on it
// (its Pod trouble is reported) and the other members keep quorum.
import type { V1Container } from '@kubernetes/client-node';
import type { EtcdMember } from '../api/etcd-member.ts';
import { isMemoryMedium } from './storage.ts';
import { DATA_DIR } from '../names.ts';

export const V2STORE_CHECK_CONTAINER = 'check-v2store';

/** The init container for a member going from 3.5 to 3.6 on its data, else none. */
export function v2storeCheckContainers(
  member: EtcdMember,
  opts: { image: (version: string) => string; common: Partial<V1Container> },
): V1Container[] {
  const from = member.status?.version;
  if (!from?.startsWith('3.5.') || !member.spec.version.startsWith('3.6.')) return [];
  if (isMemoryMedium(member.spec.storage)) return [];
  return [
    {
      ...opts.common,
      name: V2STORE_CHECK_CONTAINER,
      image: opts.image(from),
      command: ['etcdutl', 'check', 'v2store', `--data-dir=${DATA_DIR}`],
      volumeMounts: [{ name: 'data', mountPath: DATA_DIR }],
    },
  ];
}
