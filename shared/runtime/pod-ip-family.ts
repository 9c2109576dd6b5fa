// The family of the IPs Pods get on this cluster, which a member's etcd listens on (its listen URLs
// carry the Pod IP, in brackets when it is IPv6: shared/builders/etcd-listen.ts).
//
// $ETCDFN_POD_IP_FAMILY (`IPv4` or `IPv6`) says it; without it the operator looks at its own Pod,
// which is on the same Pod network as the members: a Pod with no IPv4 address but the loopback and
// a global IPv6 one is on an IPv6-only cluster. A dual-stack cluster whose primary family is IPv6
// (status.podIP is the IPv6 one) cannot be told apart from its interfaces: set the variable there.
import { networkInterfaces, type NetworkInterfaceInfo } from 'node:os';
import { POD_IP_FAMILIES, type PodIPFamily } from '../builders/etcd-listen.ts';

export const POD_IP_FAMILY_ENV = 'ETCDFN_POD_IP_FAMILY';

/** The setting, else what the addresses say; throws on a value that names no family. */
export function podIPFamily(
  setting: string | undefined,
  interfaces: NodeJS.Dict<NetworkInterfaceInfo[]> = networkInterfaces(),
): PodIPFamily {
  const value = setting?.trim();
  if (value) {
    const family = POD_IP_FAMILIES.find(f => f.toLowerCase() === value.toLowerCase());
    if (!family) throw new Error(`${POD_IP_FAMILY_ENV}: "${value.slice(0, 40)}" is not IPv4 or IPv6`);
    return family;
  }
  const addresses = Object.values(interfaces).flatMap(list => list ?? []);
  const external = addresses.filter(a => !a.internal);
  if (external.some(a => a.family === 'IPv4')) return 'IPv4';
  const globalIPv6 = external.some(a => a.family === 'IPv6' && !/^fe[89ab]/i.test(a.address));
  return globalIPv6 ? 'IPv6' : 'IPv4';
}
