// Each cluster's NetworkPolicy admits every Pod etcdfn runs or creates that dials etcd, and no
// other: the function Pods as the chart (every value set, both Helm majors) and knative/ declare
// them, in the operator's namespace; the member, restoring seed and snapshot Job Pods the builders
// make from those functions' settings. A pure check (test/support/network-policy-admits.ts) until
// the sandbox enforces policies for real.
import { describe, it } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { buildNetworkPolicy } from '../../shared/builders/network-policy.ts';
import { CLIENT_PORT } from '../../shared/names.ts';
import { settingsFromEnv } from '../../shared/runtime/context.ts';
import { cluster, createdPods, CLUSTER_NAMESPACE } from '../support/created-pods.ts';
import { VALUE_SETS } from '../support/helm-values.ts';
import {
  containersOf,
  envOf,
  helmTemplate,
  HELM_MAJORS,
  parseYaml,
  ROOT,
  type Obj,
} from '../support/helm.ts';
import { admits } from '../support/network-policy-admits.ts';

/** The labels of a workload's Pods: its template's, plus what Knative Serving adds. */
function podLabels(o: Obj): Record<string, string> {
  const labels = { ...(o.spec.template.metadata?.labels ?? {}) } as Record<string, string>;
  if (o.kind === 'Service') labels['serving.knative.dev/service'] = o.metadata.name as string;
  return labels;
}

/** What the policy refuses that should pass, and what it lets through that should not. */
function admissionProblems(objects: Obj[]): string[] {
  const problems: string[] = [];
  const workloads = objects.filter(o => o.kind === 'Deployment' || (o.kind === 'Service' && o.spec.template));
  for (const w of workloads) {
    const namespace = w.metadata.namespace as string;
    // The namespace the functions find in their service account's mount.
    const env = {
      ...envOf(containersOf(w).find(c => c.name !== 'bridge')!),
      ETCDFN_OPERATOR_NAMESPACE: namespace,
    };
    const settings = settingsFromEnv(env);
    const policy = buildNetworkPolicy(cluster, { operatorNamespace: settings.operatorNamespace })!;
    const where = `${w.kind}/${w.metadata.name}`;
    if (!admits(policy, { namespace, labels: podLabels(w) }, CLIENT_PORT))
      problems.push(`${where}: the function Pod cannot reach the client port`);
    if (admits(policy, { namespace, labels: { app: 'neighbour' } }, CLIENT_PORT))
      problems.push(`${where}: any Pod of ${namespace} reaches the client port`);
    if (admits(policy, { namespace: CLUSTER_NAMESPACE, labels: {} }, CLIENT_PORT))
      problems.push(`${where}: an unlabelled Pod of the cluster's namespace reaches the client port`);
    for (const pod of createdPods(settings))
      for (const port of pod.dials)
        if (!admits(policy, { namespace: pod.namespace, labels: pod.template.metadata?.labels ?? {} }, port))
          problems.push(`${where}: the ${pod.what} cannot reach port ${port}`);
  }
  if (workloads.length === 0) problems.push('no function workload rendered');
  return problems;
}

describe("each cluster's NetworkPolicy admits the Pods that dial etcd, and only those", () => {
  for (const major of HELM_MAJORS)
    for (const [name, values] of Object.entries(VALUE_SETS))
      it(`Helm ${major}, values: ${name}`, () => {
        assert.deepEqual(admissionProblems(helmTemplate(major, values, { namespace: 'ops' })), []);
      });

  it('release/etcdfn-knative.yaml', () => {
    const file = join(ROOT, 'release', 'etcdfn-knative.yaml');
    assert.deepEqual(admissionProblems(parseYaml(readFileSync(file, 'utf8'), file)), []);
  });

  it('the check itself: a snapshot Job without the client label, a function Pod without its label', () => {
    const objects = helmTemplate(4, {}, { namespace: 'ops' });
    const service = objects.find(o => o.kind === 'Service')!;
    delete service.spec.template.metadata.labels['etcdfn.io/component'];
    assert.match(admissionProblems(objects).join('\n'), /the function Pod cannot reach the client port/);
    const policy = buildNetworkPolicy(cluster, { operatorNamespace: 'ops' })!;
    const job = createdPods({ operatorImage: 'i', etcdImageRepository: 'e', etcdImageDigests: {} }).find(
      p => p.what === 'snapshot Job',
    )!;
    const labels = { ...job.template.metadata!.labels };
    assert.equal(admits(policy, { namespace: CLUSTER_NAMESPACE, labels }, CLIENT_PORT), true);
    delete labels['etcdfn.io/client'];
    assert.equal(admits(policy, { namespace: CLUSTER_NAMESPACE, labels }, CLIENT_PORT), false);
  });
});
