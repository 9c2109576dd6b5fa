// `pods/log` for the sandbox API server (`kubectl logs`), served from the kubelet's log files when
// both run in one process: api.registerSubresource('pods/log', podLogHandler(kubelet)).
import type { SubresourceHandler } from '../apiserver/index.ts';
import type { Kubelet } from './index.ts';

export function podLogHandler(kubelet: Kubelet): SubresourceHandler {
  return (request, res) => {
    const status = (code: number, message: string): void => {
      res.writeHead(code, { 'content-type': 'application/json' });
      const reason = code === 404 ? 'NotFound' : 'BadRequest';
      res.end(
        JSON.stringify({
          kind: 'Status',
          apiVersion: 'v1',
          metadata: {},
          status: 'Failure',
          message,
          reason,
          code,
        }),
      );
    };
    const namespace = request.namespace ?? 'default';
    const spec = (
      request.object as { spec?: { containers?: { name: string }[]; initContainers?: { name: string }[] } }
    ).spec;
    const names = spec?.containers?.map(c => c.name) ?? [];
    const inits = spec?.initContainers?.map(c => c.name) ?? [];
    let container = request.query.get('container') ?? '';
    if (!container) {
      if (names.length !== 1) {
        return status(
          400,
          `a container name must be specified for pod ${request.name}, choose one of: [${names.join(' ')}]` +
            (inits.length ? ` or one of the init containers: [${inits.join(' ')}]` : ''),
        );
      }
      container = names[0]!;
    }
    let text: string;
    try {
      text = kubelet.logs(namespace, request.name, container, request.query.get('previous') === 'true');
    } catch (err) {
      return status(400, (err as Error).message);
    }
    const tail = Number(request.query.get('tailLines') ?? '');
    if (Number.isInteger(tail) && tail >= 0 && request.query.has('tailLines')) {
      const lines = text.split('\n');
      if (lines.at(-1) === '') lines.pop();
      text =
        lines.slice(Math.max(0, lines.length - tail)).join('\n') + (tail > 0 && lines.length ? '\n' : '');
    }
    res.writeHead(200, { 'content-type': 'text/plain' });
    res.end(text);
  };
}
