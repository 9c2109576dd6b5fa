// Where the PingSources etcdfn makes (a schedule's timing, wake-ups) send their events: the Broker
// `etcdfn` of the operator's namespace, at the address Knative publishes in its status: its URL
// (the cluster's own domain; https when transport encryption is strict), the CA that signs it and,
// with Knative's OIDC feature on, the audience a sender's token must carry (without it the Broker
// answers 401). A PingSource in a user's namespace reaches the Broker by URI, since a sink `ref`
// across namespaces needs a Knative feature flag. $ETCDFN_SCHEDULE_SINK overrides it; until the
// Broker has an address (or where there is none: standalone mode, whose bridge fires PingSources
// itself), the broker ingress by its Service name, with no cluster domain written in.
import { DEFAULT_OPERATOR_NAMESPACE } from '../builders/network-policy.ts';
import type { KubeObject } from '../k8s/objects.ts';
import { sinkSpec, type PingSink } from '../builders/ping-source.ts';
import type { Context } from '../runtime/context.ts';

export const BROKER_NAME = 'etcdfn';

export interface Broker extends KubeObject {
  status?: { address?: { url?: string; CACerts?: string; audience?: string } };
}

export function brokerIngress(namespace: string): PingSink {
  return { uri: `http://broker-ingress.knative-eventing.svc/${namespace}/${BROKER_NAME}` };
}

/** The sink as the Broker's status gives it; the ingress by name when the Broker has no address. */
export function sinkOfBroker(broker: Broker | undefined, namespace: string): PingSink {
  const address = broker?.status?.address;
  if (!address?.url) return brokerIngress(namespace);
  return sinkSpec({ uri: address.url, audience: address.audience, CACerts: address.CACerts });
}

export async function pingSink(ctx: Context): Promise<PingSink> {
  if (ctx.settings.scheduleSink) return ctx.settings.scheduleSink;
  const namespace = ctx.settings.operatorNamespace || DEFAULT_OPERATOR_NAMESPACE;
  let broker: Broker | undefined;
  try {
    broker = await ctx.kube.find<Broker>({
      apiVersion: 'eventing.knative.dev/v1',
      kind: 'Broker',
      namespace,
      name: BROKER_NAME,
    });
  } catch {
    // No Broker kind here (standalone mode): the bridge ignores the sink.
    broker = undefined;
  }
  return sinkOfBroker(broker, namespace);
}
