// The cluster's two Services. The headless one gives every member its stable DNS name (and lists
// members before they are Ready, so peers can find each other while forming); the client one is
// what applications use and selects voters only, so a client never lands on a learner, which
// refuses most requests.
import type { V1Service, V1ServicePort } from '@kubernetes/client-node';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import {
  CLIENT_PORT,
  clientServiceName,
  CLUSTER_LABEL,
  headlessServiceName,
  PEER_PORT,
  ROLE_LABEL,
} from '../names.ts';
import { clusterNameOf, clusterOwnedMetadata } from './cluster-meta.ts';
import { mapMergePatch } from './merge-patch.ts';

const port = (name: string, number: number): V1ServicePort => ({
  name,
  port: number,
  targetPort: number,
  protocol: 'TCP',
});

export function buildHeadlessService(cluster: EtcdCluster): V1Service {
  const name = clusterNameOf(cluster);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: clusterOwnedMetadata(cluster, headlessServiceName(name)),
    spec: {
      clusterIP: 'None',
      publishNotReadyAddresses: true,
      selector: { [CLUSTER_LABEL]: name },
      ports: [port('client', CLIENT_PORT), port('peer', PEER_PORT)],
    },
  };
}

export function buildClientService(cluster: EtcdCluster): V1Service {
  const name = clusterNameOf(cluster);
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: clusterOwnedMetadata(cluster, clientServiceName(name)),
    spec: {
      type: 'ClusterIP',
      publishNotReadyAddresses: false,
      selector: { [CLUSTER_LABEL]: name, [ROLE_LABEL]: 'voter' },
      ports: [port('client', CLIENT_PORT)],
    },
  };
}

/** A JSON merge patch (RFC 7396) for a Service's spec. */
export interface ServicePatch {
  spec: {
    selector?: Record<string, string | null>;
    publishNotReadyAddresses?: boolean;
    ports?: V1ServicePort[];
  };
}

/**
 * What to patch on an existing Service so that it does its job again: the selector, whether it
 * publishes not-ready addresses, and our named ports. Anything else — ports a user added, the type,
 * labels, annotations — is theirs and left alone. undefined when nothing drifted.
 */
export function serviceDrift(existing: V1Service, desired: V1Service): ServicePatch | undefined {
  const patch: ServicePatch = { spec: {} };
  const selector = mapMergePatch(existing.spec?.selector, desired.spec?.selector ?? {});
  if (selector) patch.spec.selector = selector;
  const publish = desired.spec?.publishNotReadyAddresses ?? false;
  if ((existing.spec?.publishNotReadyAddresses ?? false) !== publish)
    patch.spec.publishNotReadyAddresses = publish;
  const ports = portsPatch(existing.spec?.ports ?? [], desired.spec?.ports ?? []);
  if (ports) patch.spec.ports = ports;
  return Object.keys(patch.spec).length > 0 ? patch : undefined;
}

function samePort(a: V1ServicePort, b: V1ServicePort): boolean {
  return (
    a.port === b.port &&
    String(a.targetPort ?? a.port) === String(b.targetPort ?? b.port) &&
    (a.protocol ?? 'TCP') === (b.protocol ?? 'TCP')
  );
}

/**
 * A merge patch replaces a list whole, so the patch carries the full list: the user's ports as they
 * are, ours corrected in place (keeping what the API server or the user added to them, such as a
 * nodePort). A user port that took one of our numbers gives way to ours (two ports cannot share one).
 */
function portsPatch(existing: V1ServicePort[], desired: V1ServicePort[]): V1ServicePort[] | undefined {
  const drifted = desired.some(want => {
    const have = existing.find(p => p.name === want.name);
    return !have || !samePort(have, want);
  });
  if (!drifted) return undefined;
  const ours = (p: V1ServicePort): V1ServicePort | undefined => desired.find(want => want.name === p.name);
  const takesOurNumber = (p: V1ServicePort): boolean =>
    desired.some(want => p.port === want.port && (p.protocol ?? 'TCP') === (want.protocol ?? 'TCP'));
  const ports: V1ServicePort[] = [];
  for (const p of existing) {
    const want = ours(p);
    if (want) ports.push({ ...p, ...want });
    else if (!takesOurNumber(p)) ports.push(p);
  }
  for (const want of desired) if (!existing.some(p => p.name === want.name)) ports.push({ ...want });
  return ports;
}
