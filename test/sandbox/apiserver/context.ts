// What the HTTP layer shares: the engine, the registry, open watches and pluggable subresources.

import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Engine } from './operations.ts';
import type { Registry } from './registry.ts';
import type { Store } from './store.ts';
import type { KObject } from './types.ts';

export interface SubresourceRequest {
  method: string;
  namespace: string | undefined;
  name: string;
  query: URLSearchParams;
  body: string;
  /** the object the subresource belongs to */
  object: KObject;
  req: IncomingMessage;
}

/**
 * A handler for a subresource the API server does not implement itself (e.g. `pods/log`, which a
 * kubelet can serve). It writes the response itself.
 */
export type SubresourceHandler = (request: SubresourceRequest, res: ServerResponse) => void | Promise<void>;

export interface ServerContext {
  engine: Engine;
  registry: Registry;
  store: Store;
  /** close functions of open watch streams */
  watches: Set<() => void>;
  /** keyed "pods/log" */
  subresources: Map<string, SubresourceHandler>;
  hostPort: string;
  log?: (line: string) => void;
}
