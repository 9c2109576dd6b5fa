// `npm run invoke -- <function> <fixture> [--kubeconfig <file>]`: runs one function once on a
// CloudEvent fixture, over real HTTP through the functions framework, against the cluster of the
// kubeconfig ($KUBECONFIG, or .sandbox/kubeconfig when the sandbox is running), and prints what
// it answered. The answer is only the event id and the outcome; what the function did is in its
// log lines (JSON on stdout, LOG_LEVEL=info by default).
import { existsSync, readFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { Command } from 'commander';
import { functionServer, listen } from '../shared/runtime/function-server.ts';
import { FUNCTION_NAMES, isFunctionName, loadFunction } from './registry.ts';

interface Fixture {
  headers: Record<string, string>;
  body: unknown;
}

async function main(argv: string[]): Promise<number> {
  const program = new Command()
    .name('npm run invoke --')
    .argument('<function>', `one of ${FUNCTION_NAMES.join(', ')}`)
    .argument('<fixture>', 'a fixture file, or a name under test/fixtures/events')
    .option('--kubeconfig <file>', 'cluster to act on (default: $KUBECONFIG, then .sandbox/kubeconfig)')
    .parse(argv);
  const [name, fixtureArg] = program.args as [string, string];
  const { kubeconfig } = program.opts<{ kubeconfig?: string }>();
  if (!isFunctionName(name)) {
    console.error(`unknown function "${name}"; choose one of ${FUNCTION_NAMES.join(', ')}`);
    return 2;
  }
  process.env.KUBECONFIG = kubeconfig ?? process.env.KUBECONFIG ?? defaultKubeconfig();
  const fixture = readFixture(fixtureArg);
  await loadFunction(name);
  const server = functionServer(name);
  const port = await listen(server, 0);
  try {
    const body = typeof fixture.body === 'string' ? fixture.body : JSON.stringify(fixture.body);
    const res = await fetch(`http://127.0.0.1:${port}/`, { method: 'POST', headers: fixture.headers, body });
    const text = await res.text();
    console.log(`${name} answered ${res.status}`);
    console.log(pretty(text));
    return res.status < 300 ? 0 : 1;
  } finally {
    server.close();
  }
}

function defaultKubeconfig(): string {
  const sandbox = resolve('.sandbox/kubeconfig');
  return existsSync(sandbox) ? sandbox : '';
}

function readFixture(arg: string): Fixture {
  const candidates = [
    arg,
    resolve('test/fixtures/events', arg),
    resolve('test/fixtures/events', `${arg}.json`),
  ];
  const file = candidates.find(f => existsSync(f));
  if (!file) throw new Error(`no fixture "${arg}" (looked for ${candidates.join(', ')})`);
  return JSON.parse(readFileSync(file, 'utf8')) as Fixture;
}

function pretty(text: string): string {
  try {
    return JSON.stringify(JSON.parse(text), null, 2);
  } catch {
    return text;
  }
}

main(process.argv).then(
  code => process.exit(code),
  (err: unknown) => {
    console.error(err instanceof Error ? err.message : err);
    process.exit(1);
  },
);
