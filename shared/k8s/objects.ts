// The Kubernetes adapter: read objects, write them, and write status with optimistic concurrency.
// Every expected outcome (not found, conflict, already exists, invalid) comes back as a value the
// caller switches on; only the unexpected (5xx, network, RBAC) throws KubeApiError, which the
// function runtime answers with a 5xx so the event is retried.
import {
  CustomObjectsApi,
  KubernetesObjectApi,
  PatchStrategy,
  setHeaderOptions,
  type KubeConfig,
  type KubernetesObject,
} from '@kubernetes/client-node';
import { GROUP, RESOURCES } from '../api/group.ts';
import { apiStatusOf, KubeApiError, type ApiStatus } from './errors.ts';

export interface ObjectRef {
  apiVersion: string;
  kind: string;
  namespace: string;
  name: string;
}

/** A Kubernetes object as etcdfn handles it: metadata always present. */
export type KubeObject = KubernetesObject & { metadata: NonNullable<KubernetesObject['metadata']> };

export type ReadResult<T> = { kind: 'found'; object: T } | { kind: 'not-found' };
export type CreateResult<T> =
  { kind: 'created'; object: T } | { kind: 'already-exists' } | { kind: 'invalid'; message: string };
export type WriteResult<T> =
  | { kind: 'written'; object: T }
  | { kind: 'conflict'; message: string }
  | { kind: 'not-found' }
  | { kind: 'invalid'; message: string };
export type DeleteResult =
  { kind: 'deleted' } | { kind: 'not-found' } | { kind: 'conflict'; message: string };

export interface DeleteOptions {
  propagationPolicy?: 'Background' | 'Foreground' | 'Orphan';
  gracePeriodSeconds?: number;
  /** Delete only this incarnation: a newer object of the same name is left alone (conflict). */
  uid?: string;
}

const FIELD_MANAGER = 'etcdfn';

export class KubeObjects {
  private readonly objects: KubernetesObjectApi;
  private readonly custom: CustomObjectsApi;

  constructor(kc: KubeConfig) {
    this.objects = KubernetesObjectApi.makeApiClient(kc);
    this.custom = kc.makeApiClient(CustomObjectsApi);
  }

  async get<T extends KubeObject>(ref: ObjectRef): Promise<ReadResult<T>> {
    try {
      const object = await this.objects.read<T>({
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name, namespace: ref.namespace },
      });
      return { kind: 'found', object };
    } catch (err) {
      if (apiStatusOf(err)?.code === 404) return { kind: 'not-found' };
      throw new KubeApiError(`get ${describe(ref)}`, err);
    }
  }

  /** The object, or undefined when it does not exist (get without the outcome to switch on). */
  async find<T extends KubeObject>(ref: ObjectRef): Promise<T | undefined> {
    const read = await this.get<T>(ref);
    return read.kind === 'found' ? read.object : undefined;
  }

  /** Lists one kind in a namespace (or all namespaces when namespace is ''), optionally by label. */
  async list<T extends KubeObject>(
    apiVersion: string,
    kind: string,
    namespace: string,
    labelSelector?: string,
  ): Promise<T[]> {
    try {
      const args = [undefined, undefined, undefined, undefined, labelSelector] as const;
      const list = await this.objects.list<T>(apiVersion, kind, namespace || undefined, ...args);
      // Lists omit apiVersion/kind on items; put them back so items can be written as they are.
      return list.items.map(item => ({ ...item, apiVersion, kind }));
    } catch (err) {
      throw new KubeApiError(`list ${kind} in ${namespace || 'all namespaces'}`, err);
    }
  }

  async create<T extends KubeObject>(object: T): Promise<CreateResult<T>> {
    try {
      return {
        kind: 'created',
        object: await this.objects.create(object, undefined, undefined, FIELD_MANAGER),
      };
    } catch (err) {
      const status = apiStatusOf(err);
      if (status?.code === 409 && status.reason === 'AlreadyExists') return { kind: 'already-exists' };
      if (status?.code === 422) return { kind: 'invalid', message: status.message };
      throw new KubeApiError(`create ${describe(refOf(object))}`, err);
    }
  }

  /** Replaces the object; its metadata.resourceVersion makes this a compare-and-swap. */
  async replace<T extends KubeObject>(object: T): Promise<WriteResult<T>> {
    requireResourceVersion(object);
    try {
      return {
        kind: 'written',
        object: await this.objects.replace(object, undefined, undefined, FIELD_MANAGER),
      };
    } catch (err) {
      return writeFailure(err, `replace ${describe(refOf(object))}`);
    }
  }

  /**
   * Replaces the status of an etcdfn custom resource. The object's resourceVersion is the
   * precondition: a concurrent writer makes this return `conflict`, never overwrite its work.
   */
  async replaceStatus<T extends KubeObject>(object: T): Promise<WriteResult<T>> {
    requireResourceVersion(object);
    const ref = refOf(object);
    try {
      const written = (await this.custom.replaceNamespacedCustomObjectStatus({
        ...customPath(ref),
        body: object,
        fieldManager: FIELD_MANAGER,
      })) as T;
      return { kind: 'written', object: written };
    } catch (err) {
      return writeFailure(err, `replace status of ${describe(ref)}`);
    }
  }

  /**
   * RFC 7396 merge patch. Put metadata.resourceVersion in the patch to make it conditional
   * (the API server then answers a stale version with a conflict).
   */
  async mergePatch<T extends KubeObject>(
    ref: ObjectRef,
    patch: Record<string, unknown>,
  ): Promise<WriteResult<T>> {
    const body = {
      ...patch,
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      metadata: { ...(patch.metadata as object), name: ref.name, namespace: ref.namespace },
    } as T;
    try {
      const strategy = PatchStrategy.MergePatch;
      const written = await this.objects.patch(
        body,
        undefined,
        undefined,
        FIELD_MANAGER,
        undefined,
        strategy,
      );
      return { kind: 'written', object: written };
    } catch (err) {
      return writeFailure(err, `patch ${describe(ref)}`);
    }
  }

  /** RFC 7396 merge patch of the status of an etcdfn custom resource. */
  async mergePatchStatus<T extends KubeObject>(
    ref: ObjectRef,
    status: Record<string, unknown>,
  ): Promise<WriteResult<T>> {
    try {
      const options = setHeaderOptions('Content-Type', PatchStrategy.MergePatch);
      const written = (await this.custom.patchNamespacedCustomObjectStatus(
        { ...customPath(ref), body: { status }, fieldManager: FIELD_MANAGER },
        options,
      )) as T;
      return { kind: 'written', object: written };
    } catch (err) {
      return writeFailure(err, `patch status of ${describe(ref)}`);
    }
  }

  async delete(ref: ObjectRef, options: DeleteOptions = {}): Promise<DeleteResult> {
    try {
      const spec = {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        metadata: { name: ref.name, namespace: ref.namespace },
      };
      const body = options.uid ? { preconditions: { uid: options.uid } } : undefined;
      await this.objects.delete(
        spec,
        undefined,
        undefined,
        options.gracePeriodSeconds,
        undefined,
        options.propagationPolicy ?? 'Background',
        body,
      );
      return { kind: 'deleted' };
    } catch (err) {
      const status = apiStatusOf(err);
      if (status?.code === 404) return { kind: 'not-found' };
      if (status?.code === 409) return { kind: 'conflict', message: status.message };
      throw new KubeApiError(`delete ${describe(ref)}`, err);
    }
  }
}

export function refOf(object: KubeObject): ObjectRef {
  return {
    apiVersion: object.apiVersion ?? '',
    kind: object.kind ?? '',
    namespace: object.metadata.namespace ?? '',
    name: object.metadata.name ?? '',
  };
}

function describe(ref: ObjectRef): string {
  return `${ref.kind} ${ref.namespace}/${ref.name}`;
}

function requireResourceVersion(object: KubeObject): void {
  // Without a resourceVersion a replace is unconditional and could erase a concurrent write.
  if (!object.metadata.resourceVersion) {
    throw new Error(
      `refusing an unconditional write of ${describe(refOf(object))}: no metadata.resourceVersion`,
    );
  }
}

function writeFailure<T>(err: unknown, operation: string): WriteResult<T> {
  const status: ApiStatus | undefined = apiStatusOf(err);
  if (status?.code === 409) return { kind: 'conflict', message: status.message };
  if (status?.code === 404) return { kind: 'not-found' };
  if (status?.code === 422) return { kind: 'invalid', message: status.message };
  throw new KubeApiError(operation, err);
}

function customPath(ref: ObjectRef): {
  group: string;
  version: string;
  namespace: string;
  plural: string;
  name: string;
} {
  const [group, version] = ref.apiVersion.split('/');
  const resource = RESOURCES.find(r => r.kind === ref.kind);
  if (group !== GROUP || !version || !resource) {
    throw new Error(`status writes are only for ${GROUP} resources, not ${ref.apiVersion} ${ref.kind}`);
  }
  return { group, version, namespace: ref.namespace, plural: resource.plural, name: ref.name };
}
