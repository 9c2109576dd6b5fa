// Two sandboxes one after the other in one process (as `npm run bench` runs the lifecycle and then
// the member-loss benchmark): the first, stopped, leaves /etc/hosts as the machine has it, and the
// second binds its own hosts file. Before, the second failed with "mount --bind … /etc/hosts
// failed": the first's bind mount stayed over /etc/hosts after its file was deleted, and mount(2)
// cannot mount over a deleted file (ENOENT).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { join } from 'node:path';
import { it } from 'node:test';
import { promisify } from 'node:util';
import { namespacedCommand } from '../sandbox/namespace.ts';

const run = promisify(execFile);

it('a second sandbox in the same process binds its own hosts file after the first stopped', async () => {
  const child = join(import.meta.dirname, 'two-sandboxes-child.ts');
  const { command, args, env } = namespacedCommand([process.execPath, '--import', 'tsx', child]);
  const { stdout } = await run(command, args, { env, timeout: 120_000 });
  const result = JSON.parse(stdout.trim().split('\n').pop() ?? '{}') as Record<string, unknown>;
  assert.deepEqual(result, {
    'dns active 1': true,
    "hosts is sandbox's 1": true,
    "machine's hosts after stop 1": true,
    'dns active 2': true,
    "hosts is sandbox's 2": true,
    "machine's hosts after stop 2": true,
  });
});
