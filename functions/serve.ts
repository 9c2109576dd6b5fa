// Serves one function over HTTP: `node --import tsx functions/serve.ts [name] [--port N] [--host H]`.
// The name defaults to $FUNCTION_TARGET and the port to $PORT (8080), as the functions framework
// and Knative expect; the host defaults to loopback ($HOST=0.0.0.0 in a container image).
import { Command } from 'commander';
import { log } from '../shared/log.ts';
import { functionServer, listen } from '../shared/runtime/function-server.ts';
import { FUNCTION_NAMES, isFunctionName, loadFunction } from './registry.ts';

async function main(argv: string[]): Promise<void> {
  const program = new Command()
    .name('serve')
    .argument('[function]', `one of ${FUNCTION_NAMES.join(', ')}`, process.env.FUNCTION_TARGET)
    .option('--port <port>', 'port to listen on (0 = any)', process.env.PORT ?? '8080')
    .option('--host <host>', 'address to listen on', process.env.HOST ?? '127.0.0.1')
    .option('--exit-with-stdin', 'exit when stdin closes (when a supervisor that may die runs it)')
    .parse(argv);
  const name = program.args[0] ?? process.env.FUNCTION_TARGET ?? '';
  const opts = program.opts<{ port: string; host: string; exitWithStdin?: boolean }>();
  if (!isFunctionName(name))
    throw new Error(`unknown function "${name}"; choose one of ${FUNCTION_NAMES.join(', ')}`);
  await loadFunction(name);
  const server = functionServer(name);
  const port = await listen(server, Number(opts.port), opts.host);
  // One line on stdout that a supervisor can wait for.
  console.log(JSON.stringify({ serving: name, url: `http://${opts.host}:${port}/` }));
  const stop = () => server.close(() => process.exit(0));
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  if (opts.exitWithStdin) {
    process.stdin.once('end', stop);
    process.stdin.once('error', stop);
    process.stdin.resume();
  }
}

main(process.argv).catch((err: unknown) => {
  log.error({ err }, 'function server failed to start');
  process.exit(1);
});
