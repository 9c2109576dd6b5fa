// Carries out the one step planCluster chose. Every side effect is idempotent or detectable, so a
// crash between any two of them converges on the next invocation.
import { setTimeout as sleep } from 'node:timers/promises';
import type { EtcdCluster } from '../api/etcd-cluster.ts';
import type { EtcdMember } from '../api/etcd-member.ts';
import { API_VERSION, ETCD_CLUSTER, ETCD_MEMBER } from '../api/group.ts';
import { buildMember } from '../builders/member.ts';
import { isControlledBy } from '../builders/owner.ts';
import type { KubeObject, ObjectRef } from '../k8s/objects.ts';
import type { ClusterState } from '../plan/cluster/types.ts';
import { type AddMemberOperation, type ClusterAction } from '../plan/cluster/plan.ts';
import { etcdEndpoints, initialClusterFrom, memberUrls } from '../plan/cluster/members.ts';
import type { Context } from '../runtime/context.ts';
import { crashPoint, type CrashPoint } from '../runtime/crash.ts';
import { recoverSpace } from './cluster-space.ts';
import { growVolumes } from './cluster-volumes.ts';
import { defragmentMember } from './cluster-defrag.ts';
import { setDormant } from './cluster-dormant.ts';
import type { RestoreResolution } from '../plan/restore/types.ts';
import type { OwnedChanges } from '../plan/owned/types.ts';
import { applyOwned } from './owned-apply.ts';
import type { ActResult } from './act-result.ts';

type Cluster = EtcdCluster & KubeObject;

const retry = (reason: string, status: 409 | 429 | 503 = 503): ActResult => ({
  ok: false,
  outcome: { result: 'retry', reason, status },
});

/** `owned`: an ensure-* step's changes, as the plan carries them (ClusterPlan.owned). */
export async function act(
  ctx: Context,
  state: ClusterState,
  action: ClusterAction,
  owned?: OwnedChanges,
): Promise<ActResult> {
  // Over 80 lines: one case per ClusterAction kind, so the compiler checks the switch is exhaustive;
  // each case is a call or a few lines.
  switch (action.kind) {
    case 'none':
      return { ok: true, summary: 'nothing to do' };
    case 'wait':
      // Every wait ends with an event this function receives (a member's status or deletion).
      return { ok: true, summary: action.reason };
    case 'ensure-services':
      return applyPlanned(ctx, action.kind, owned, 'cluster:service-ensured');
    case 'ensure-pdb':
      return applyPlanned(ctx, action.kind, owned, 'cluster:pdb-ensured');
    case 'ensure-network-policy':
      return applyPlanned(ctx, action.kind, owned);
    case 'claim':
      return addMember(ctx, state, action.operation, true);
    case 'resume':
      // Most often the claimant is still at it (its own EtcdMember's creation is this event): a
      // second memberAdd racing it would be dropped by raft (one configuration change at a time)
      // and hang until the call times out. Waiting on etcd is left to the claimant.
      return addMember(ctx, state, action.operation, false);
    case 'set-dormant':
      return setDormant(ctx, state, action.member, action.dormant, action.seed);
    case 'release-seed':
      return setDormant(ctx, state, action.member, false, false);
    case 'promote':
      return promote(ctx, state, action.member, action.id);
    case 'mark-voter': {
      const patched = await ctx.kube.mergePatchStatus(memberRef(state, action.member), {
        isVoter: true,
        role: 'voter',
      });
      return patched.kind === 'written'
        ? { ok: true, summary: `recorded ${action.member} as a voter` }
        : retry(`recording ${action.member} as a voter: ${patched.kind}`);
    }
    case 'move-leader': {
      const moved = await ctx.etcd.moveLeader(etcdEndpoints(state, state.cluster), action.toId);
      if (moved.kind === 'ok') await crashPoint('cluster:leader-moved');
      return moved.kind === 'ok'
        ? { ok: true, summary: `moved leadership from ${action.from} to ${action.toId}` }
        : retry(`moving leadership off ${action.from}: ${moved.message}`);
    }
    case 'enable-downgrade': {
      const enabled = await ctx.etcd.enableDowngrade(etcdEndpoints(state, state.cluster), action.version);
      return enabled.kind === 'ok'
        ? {
            ok: true,
            summary: `etcd's downgrade to ${action.version} enabled${enabled.alreadyEnabled ? ' (already)' : ''}`,
          }
        : retry(`enabling etcd's downgrade to ${action.version}: ${enabled.message}`);
    }
    case 'upgrade-member': {
      const patched = await ctx.kube.mergePatch(memberRef(state, action.member), {
        spec: { version: action.version },
      });
      if (patched.kind === 'written') await crashPoint('cluster:member-upgraded');
      return patched.kind === 'written'
        ? { ok: true, summary: `upgrading ${action.member} from ${action.from} to ${action.version}` }
        : retry(`upgrading ${action.member}: ${patched.kind}`);
    }
    case 'delete-member': {
      await ctx.kube.delete(memberRef(state, action.member));
      await crashPoint('cluster:member-deleted');
      return { ok: true, summary: `deleting member ${action.member}` };
    }
    case 'delete-members': {
      // The member first (reconcile-member leaves a member being deleted alone), then its Pod, so
      // the old etcd stops now rather than when garbage collection gets to it.
      for (const member of action.members) {
        await ctx.kube.delete(memberRef(state, member));
        await crashPoint('cluster:restore-member-deleted');
        const pod = {
          apiVersion: 'v1',
          kind: 'Pod',
          namespace: state.cluster.metadata.namespace ?? '',
          name: member,
        };
        await ctx.kube.delete(pod);
      }
      return { ok: true, summary: `deleting members ${action.members.join(', ')}, whose data is discarded` };
    }
    case 'grow-volumes':
      return growVolumes(ctx, state, action);
    case 'recover-space': {
      const recovered = await recoverSpace(ctx, state.cluster, action);
      return recovered.ok ? recovered : retry(recovered.reason);
    }
    case 'force-new-cluster': {
      const patched = await ctx.kube.mergePatch(memberRef(state, action.member), {
        spec: { forceNewCluster: action.on ? true : null },
      });
      if (patched.kind !== 'written')
        return retry(
          `${action.on ? 'setting' : 'unsetting'} forceNewCluster on ${action.member}: ${patched.kind}`,
        );
      await crashPoint('cluster:force-flag-set');
      return {
        ok: true,
        summary: action.on
          ? `member ${action.member} restarts with --force-new-cluster`
          : `member ${action.member} restarts without --force-new-cluster`,
      };
    }
    case 'recheck':
      // Nothing this function receives an event for ends the wait: the event comes back with back-off.
      return retry(action.reason);
    case 'defragment':
      return defragmentMember(ctx, state, action);
    case 'remove-orphan': {
      const removed = await ctx.etcd.remove(etcdEndpoints(state, state.cluster), action.id);
      if (removed.kind === 'ok') await crashPoint('cluster:orphan-removed');
      if (removed.kind === 'ok' || removed.kind === 'member-not-found') {
        return {
          ok: true,
          summary: `removed etcd member ${action.id} (${action.peerURL}) that no EtcdMember stood for`,
        };
      }
      return retry(`removing orphan etcd member ${action.id}: ${removed.message}`);
    }
  }
}

/** An ensure-* step's changes, applied as planned; a plan without them is a bug, answered as a retry. */
function applyPlanned(
  ctx: Context,
  kind: ClusterAction['kind'],
  owned: OwnedChanges | undefined,
  point?: CrashPoint,
): Promise<ActResult> {
  return owned
    ? applyOwned(ctx, owned, point)
    : Promise.resolve(retry(`${kind} without the changes it planned`));
}

function memberRef(state: ClusterState, name: string): ObjectRef {
  return {
    apiVersion: API_VERSION,
    kind: ETCD_MEMBER.kind,
    namespace: state.cluster.metadata.namespace ?? '',
    name,
  };
}

/**
 * The add-member operation, resumable from any point: create the EtcdMember (AlreadyExists is
 * fine), add it to etcd as a learner unless its peer URL is already there (adopt), wire its
 * --initial-cluster, then clear the operation from status.
 */
async function addMember(
  ctx: Context,
  state: ClusterState,
  op: AddMemberOperation,
  patient: boolean,
): Promise<ActResult> {
  const cluster = state.cluster;
  const ref = memberRef(state, op.member);
  if (op.initialMembers) return createInitialMembers(ctx, state, op, op.initialMembers);
  const member = await ensureMemberObject(ctx, cluster, op, state.restore);
  if (!member.ok) return member.result;
  if (!member.object.spec.initialCluster) {
    const wired = await wireLearner(ctx, state, member.object, patient);
    if (!wired.ok) return wired;
  }
  await clearOperation(ctx, cluster, op);
  await ctx.kube.get(ref);
  return {
    ok: true,
    summary: op.bootstrap ? `created seed member ${op.member}` : `added learner ${op.member}`,
  };
}

/**
 * Static bootstrap: every initial member is created with the whole list as its --initial-cluster,
 * so no Pod exists before the list is complete; AlreadyExists (a crash before the status was
 * cleared) is adopted. Then the operation is cleared. Each member's Pod follows from its own event.
 */
async function createInitialMembers(
  ctx: Context,
  state: ClusterState,
  op: AddMemberOperation,
  names: string[],
): Promise<ActResult> {
  const cluster = state.cluster;
  const initialCluster = names.map(n => `${n}=${memberUrls(cluster, n).peer}`).join(',');
  for (const name of names) {
    // A restore from S3 (staticBootstrap) is the same resolved object and checksum on every member.
    const made = await ensureMemberObject(
      ctx,
      cluster,
      { ...op, member: name },
      state.restore,
      initialCluster,
    );
    if (!made.ok) return made.result;
    if (made.object.spec.initialCluster !== initialCluster) {
      const why = `EtcdMember ${name} exists with another initial cluster (${made.object.spec.initialCluster}); it is not part of this bootstrap`;
      return retry(why);
    }
  }
  await clearOperation(ctx, cluster, op);
  return { ok: true, summary: `created the initial members ${names.join(', ')}` };
}

async function ensureMemberObject(
  ctx: Context,
  cluster: Cluster,
  op: AddMemberOperation,
  restore: RestoreResolution | undefined,
  initialCluster?: string,
): Promise<{ ok: true; object: EtcdMember } | { ok: false; result: ActResult }> {
  if (op.bootstrap && restore?.kind === 'blocked')
    return { ok: false, result: retry(`cannot restore yet: ${restore.message}`) };
  const member = buildMember(cluster, {
    bootstrap: op.bootstrap,
    name: op.member,
    ...(restore?.kind === 'ready' && { restore: restore.restore }),
  });
  if (initialCluster) member.spec.initialCluster = initialCluster;
  else if (op.bootstrap) {
    // The seed knows its whole initial cluster: itself.
    member.spec.initialCluster = `${op.member}=${memberUrls(cluster, op.member).peer}`;
  }
  const created = await ctx.kube.create(member);
  if (created.kind === 'created') await crashPoint('cluster:member-created');
  if (created.kind === 'created') return { ok: true, object: created.object };
  if (created.kind === 'invalid')
    return { ok: false, result: retry(`creating member ${op.member}: ${created.message}`) };
  const existing = await ctx.kube.get<EtcdMember & KubeObject>({
    apiVersion: API_VERSION,
    kind: ETCD_MEMBER.kind,
    namespace: cluster.metadata.namespace ?? '',
    name: op.member,
  });
  if (existing.kind === 'not-found')
    return { ok: false, result: retry(`member ${op.member} vanished while being created`) };
  if (!isControlledBy(existing.object, cluster)) {
    const why = `EtcdMember ${op.member} exists but belongs to another EtcdCluster (an earlier one of the same name, still being deleted?)`;
    return { ok: false, result: retry(why) };
  }
  return { ok: true, object: existing.object };
}

async function wireLearner(
  ctx: Context,
  state: ClusterState,
  member: EtcdMember,
  patient: boolean,
): Promise<ActResult> {
  const name = member.metadata.name ?? '';
  const endpoints = etcdEndpoints(state, state.cluster);
  const peer = memberUrls(state.cluster, name).peer;
  const listed = await ctx.etcd.listMembers(endpoints);
  if (listed.kind !== 'ok') return retry(`adding ${name}: etcd did not answer: ${listed.message}`);
  let members = listed.members;
  if (!members.some(m => m.peerURLs.includes(peer))) {
    const added = patient
      ? await addLearnerPatiently(ctx, endpoints, peer)
      : await ctx.etcd.addLearner(endpoints, peer);
    if (added.kind === 'ok') await crashPoint('cluster:learner-added');
    if (added.kind === 'ok') members = added.members;
    else if (added.kind === 'peer-url-exists') {
      const again = await ctx.etcd.listMembers(endpoints);
      if (again.kind !== 'ok') return retry(`adding ${name}: etcd did not answer: ${again.message}`);
      members = again.members;
    } else return retry(`adding ${name} as a learner: ${added.message}`);
  }
  const initialCluster = initialClusterFrom(members);
  const patched = await ctx.kube.mergePatch(memberRef(state, name), { spec: { initialCluster } });
  if (patched.kind !== 'written') return retry(`wiring ${name}: ${patched.kind}`);
  await crashPoint('cluster:member-wired');
  return { ok: true, summary: `learner ${name} added` };
}

/**
 * etcd refuses a membership change until every voter has been connected for 5 s (its strict
 * reconfiguration check), which right after a start or a promotion is always the case: wait
 * inside the request rather than bounce the event through the retry back-off.
 */
/** How often a refused memberAdd is asked again: etcd lets it through the moment 5 s are up. */
const UNHEALTHY_POLL_MS = 50;

async function addLearnerPatiently(ctx: Context, endpoints: string[], peer: string) {
  const deadline = Date.now() + ctx.settings.unhealthyWaitMs;
  for (;;) {
    const added = await ctx.etcd.addLearner(endpoints, peer);
    if (added.kind !== 'unhealthy-cluster' || Date.now() >= deadline) return added;
    await sleep(UNHEALTHY_POLL_MS);
  }
}

async function clearOperation(ctx: Context, cluster: Cluster, op: AddMemberOperation): Promise<void> {
  const ref = {
    apiVersion: API_VERSION,
    kind: ETCD_CLUSTER.kind,
    namespace: cluster.metadata.namespace ?? '',
    name: cluster.metadata.name ?? '',
  };
  for (let attempt = 0; attempt < 5; attempt++) {
    const read = await ctx.kube.get<Cluster>(ref);
    if (read.kind === 'not-found') return;
    const status = { ...read.object.status };
    if (status.operation?.member !== op.member) return;
    delete status.operation;
    const written = await ctx.kube.replaceStatus({ ...read.object, status });
    if (written.kind === 'written') await crashPoint('cluster:operation-cleared');
    if (written.kind !== 'conflict') return;
  }
}

/** Promotion is retried briefly in the request: a learner with little data catches up in moments. */
async function promote(ctx: Context, state: ClusterState, name: string, id: string): Promise<ActResult> {
  const endpoints = etcdEndpoints(state, state.cluster);
  for (let attempt = 0; attempt < ctx.settings.promoteAttempts; attempt++) {
    const result = await ctx.etcd.promote(endpoints, id);
    if (result.kind === 'ok') await crashPoint('cluster:promoted');
    if (result.kind === 'ok' || result.kind === 'not-a-learner') {
      await ctx.kube.mergePatchStatus(memberRef(state, name), { isVoter: true, role: 'voter' });
      await crashPoint('cluster:member-marked-voter');
      return { ok: true, summary: `promoted ${name} to voter` };
    }
    if (result.kind !== 'learner-not-in-sync') return retry(`promoting ${name}: ${result.message}`);
    await sleep(ctx.settings.promoteIntervalMs);
  }
  return retry(`learner ${name} is still catching up with the leader`);
}
