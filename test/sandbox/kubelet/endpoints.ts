// Each Service's addresses as the endpoints controller would compute them, for the sandbox's DNS
// only: the matching Pods (ready ones in `addresses`, others in `notReadyAddresses`, or all in
// `addresses` with publishNotReadyAddresses), with the Service's ports resolved to target ports.
// Nothing is written: the real API server refuses Endpoints with the sandbox's loopback Pod IPs,
// and kube-controller-manager runs without its endpoints controllers (control-plane/index.ts).
import type {
  V1EndpointAddress,
  CoreV1EndpointPort,
  V1EndpointSubset,
  V1ServicePort,
} from '@kubernetes/client-node';
import type { Pod, Service } from './types.ts';

export function selects(
  selector: Record<string, string> | undefined,
  labels: Record<string, string> | undefined,
): boolean {
  if (!selector || Object.keys(selector).length === 0) return false;
  return Object.entries(selector).every(([k, v]) => labels?.[k] === v);
}

export function podReady(pod: Pod): boolean {
  return pod.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True') ?? false;
}

function targetPort(port: V1ServicePort, pod: Pod | undefined): number {
  const target = port.targetPort;
  if (target === undefined) return port.port;
  if (typeof target === 'number') return target;
  if (/^\d+$/.test(target)) return Number(target);
  for (const c of pod?.spec.containers ?? []) {
    const named = c.ports?.find(p => p.name === target);
    if (named) return named.containerPort;
  }
  return port.port;
}

/** The subsets an Endpoints object should have for a Service and the Pods of its namespace. */
export function desiredSubsets(svc: Service, pods: Pod[]): V1EndpointSubset[] {
  const publishAll = svc.spec?.publishNotReadyAddresses === true;
  const ready: V1EndpointAddress[] = [];
  const notReady: V1EndpointAddress[] = [];
  let first: Pod | undefined;
  for (const pod of pods) {
    if (!selects(svc.spec?.selector, pod.metadata.labels)) continue;
    const ip = pod.status?.podIP;
    const phase = pod.status?.phase;
    if (!ip || phase === 'Succeeded' || phase === 'Failed') continue;
    if (pod.metadata.deletionTimestamp && !publishAll) continue;
    first ??= pod;
    const address: V1EndpointAddress = {
      ip,
      targetRef: {
        kind: 'Pod',
        namespace: pod.metadata.namespace,
        name: pod.metadata.name,
        uid: pod.metadata.uid,
      },
    };
    if (pod.spec.nodeName) address.nodeName = pod.spec.nodeName;
    if (pod.spec.hostname && pod.spec.subdomain === svc.metadata.name) address.hostname = pod.spec.hostname;
    (publishAll || podReady(pod) ? ready : notReady).push(address);
  }
  if (!ready.length && !notReady.length) return [];
  const byIp = (a: V1EndpointAddress, b: V1EndpointAddress): number =>
    a.ip.localeCompare(b.ip, 'en', { numeric: true });
  const subset: V1EndpointSubset = {};
  if (ready.length) subset.addresses = ready.sort(byIp);
  if (notReady.length) subset.notReadyAddresses = notReady.sort(byIp);
  const ports: CoreV1EndpointPort[] = (svc.spec?.ports ?? []).map(p => {
    const port: CoreV1EndpointPort = { port: targetPort(p, first), protocol: p.protocol ?? 'TCP' };
    if (p.name) port.name = p.name;
    if (p.appProtocol) port.appProtocol = p.appProtocol;
    return port;
  });
  if (ports.length) subset.ports = ports;
  return [subset];
}
