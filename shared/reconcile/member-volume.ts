// reconcile-member's resize-pvc step: one merge patch of the PVC's requested size. The API server
// may refuse it (the StorageClass does not allow expansion: 403; or a 422): the refusal goes into the
// member's status with its time (plan/member/volume-growth.ts), written compare-and-swap, and a Warning
// Event the first time; the invocation ends done, since retrying at once cannot help.
// Crash windows: after the patch and before the Event, the next invocation finds the PVC asking for
// the size and has nothing to do (the Event is lost, the condition still tells); after a refusal and
// before its status write, the next invocation asks again and records the same refusal.
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node';
import type { EtcdMember } from '../api/etcd-member.ts';
import { API_VERSION, ETCD_MEMBER } from '../api/group.ts';
import { apiStatusOf, KubeApiError } from '../k8s/errors.ts';
import type { KubeObject } from '../k8s/objects.ts';
import type { MemberAction, MemberPlan, MemberState } from '../plan/member/plan.ts';
import { refusedStatus } from '../plan/member/volume-growth.ts';
import type { Context } from '../runtime/context.ts';
import { emitEvents } from './member-events.ts';

type Resize = Extract<MemberAction, { kind: 'resize-pvc' }>;
export type ResizeOutcome =
  | { kind: 'resized'; summary: string }
  | { kind: 'refused'; summary: string }
  | { kind: 'retry'; reason: string };

export async function resizePvc(
  ctx: Context,
  state: MemberState,
  plan: MemberPlan,
  action: Resize,
): Promise<ResizeOutcome> {
  const member = state.member;
  const ns = member.metadata.namespace ?? '';
  const ref = { apiVersion: 'v1', kind: 'PersistentVolumeClaim', namespace: ns, name: action.name };
  let refusal: string | undefined;
  try {
    const patched = await ctx.kube.mergePatch<V1PersistentVolumeClaim & KubeObject>(ref, {
      spec: { resources: { requests: { storage: action.size } } },
    });
    if (patched.kind === 'written') {
      await emitEvents(ctx, member, plan.events, 'reconcile-member');
      return { kind: 'resized', summary: `PVC ${action.name}: ${action.from} → ${action.size} requested` };
    }
    if (patched.kind === 'not-found') return { kind: 'refused', summary: `PVC ${action.name} is gone` };
    if (patched.kind === 'conflict') return { kind: 'retry', reason: patched.message };
    refusal = patched.message;
  } catch (err) {
    if (!(err instanceof KubeApiError) || err.code !== 403) throw err;
    refusal = apiStatusOf(err.cause)?.message ?? err.message;
  }
  return recordRefusal(ctx, state, action, refusal);
}

async function recordRefusal(
  ctx: Context,
  state: MemberState,
  action: Resize,
  apiMessage: string,
): Promise<ResizeOutcome> {
  const name = state.member.metadata.name ?? '';
  const read = await ctx.kube.get<EtcdMember & KubeObject>({
    apiVersion: API_VERSION,
    kind: ETCD_MEMBER.kind,
    namespace: state.member.metadata.namespace ?? '',
    name,
  });
  if (read.kind === 'not-found') return { kind: 'refused', summary: `EtcdMember ${name} is gone` };
  const { status, events } = refusedStatus(read.object, {
    claim: action.name,
    className: state.pvc?.spec?.storageClassName,
    from: action.from,
    size: action.size,
    apiMessage,
    now: ctx.now(),
  });
  const written = await ctx.kube.replaceStatus({ ...read.object, status });
  if (written.kind === 'conflict') return { kind: 'retry', reason: written.message };
  await emitEvents(ctx, read.object, events, 'reconcile-member');
  return { kind: 'refused', summary: `growing PVC ${action.name} to ${action.size} refused: ${apiMessage}` };
}
