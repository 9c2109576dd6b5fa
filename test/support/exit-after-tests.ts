// Preloaded into every test file's process (package.json: --import): once the file's tests have
// finished, a process still held open by something a test left running (a server, a timer, a
// child) exits after a grace period instead of hanging the whole run. Node's own
// --test-force-exit is not used: it exits before the file's results have reached the runner
// through the pipe, so whole files' results went missing (counts moved from run to run) and a
// failure could go unseen. The grace timer is unref'd: a file that ends cleanly exits at once.
import { after } from 'node:test';

const GRACE_MS = 10_000;

// Only in a test file's own process (the runner sets NODE_TEST_CONTEXT there), not in the runner.
if (process.env.NODE_TEST_CONTEXT) {
  after(() => {
    setTimeout(() => {
      process.stderr.write(
        `exit-after-tests: this file's tests ended ${GRACE_MS / 1000} s ago but something it started is still running; exiting\n`,
      );
      process.exit(process.exitCode ?? 1);
    }, GRACE_MS).unref();
  });
}
