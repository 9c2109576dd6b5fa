// Polling helpers for tests that drive the sandbox through the API.
import type { CoreV1Api, V1Pod } from '@kubernetes/client-node';
import { statusCode } from './api.ts';

export const sleep = (ms: number): Promise<void> => new Promise(r => setTimeout(r, ms));

/** Polls `probe` until it returns a value other than undefined/false; rejects after `timeoutMs`. */
export async function waitFor<T>(
  what: string,
  probe: () => Promise<T | undefined | false> | T | undefined | false,
  timeoutMs = 30_000,
  intervalMs = 100,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const value = await probe();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      last = err;
    }
    if (Date.now() > deadline) {
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${last ? ` (last error: ${last instanceof Error ? last.message : JSON.stringify(last)})` : ''}`,
      );
    }
    await sleep(intervalMs);
  }
}

export async function readPod(core: CoreV1Api, namespace: string, name: string): Promise<V1Pod | undefined> {
  try {
    return await core.readNamespacedPod({ name, namespace });
  } catch (err) {
    if (statusCode(err) === 404) return undefined;
    throw err;
  }
}

export function isReady(pod: V1Pod | undefined): boolean {
  return pod?.status?.conditions?.some(c => c.type === 'Ready' && c.status === 'True') ?? false;
}

/** A Pod reference "namespace/name" (a bare name means "default"). */
function splitRef(ref: string): [string, string] {
  const [a, b] = ref.split('/');
  return b === undefined ? ['default', a] : [a, b];
}

/** Waits until the Pod `ref` ("namespace/name") exists and `pred` holds for it; returns it. */
export function waitForPod(
  core: CoreV1Api,
  ref: string,
  what: string,
  pred: (pod: V1Pod) => boolean,
  timeoutMs = 30_000,
): Promise<V1Pod> {
  const [namespace, name] = splitRef(ref);
  return waitFor(
    `pod ${namespace}/${name} ${what}`,
    async () => {
      const pod = await readPod(core, namespace, name);
      return pod && pred(pod) ? pod : undefined;
    },
    timeoutMs,
  );
}

/** Waits until the Pod object is gone from the API. */
export function waitForPodGone(
  core: CoreV1Api,
  namespace: string,
  name: string,
  timeoutMs = 30_000,
): Promise<true> {
  return waitFor(
    `pod ${namespace}/${name} to disappear`,
    async () => ((await readPod(core, namespace, name)) ? undefined : true),
    timeoutMs,
  );
}
