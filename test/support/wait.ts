// Polling for e2e tests: wait until a condition holds, and say what was last seen when it does not.
import { setTimeout as sleep } from 'node:timers/promises';

export async function waitFor<T>(
  what: string,
  check: () => Promise<T | undefined | false>,
  { timeoutMs = 60_000, intervalMs = 250 }: { timeoutMs?: number; intervalMs?: number } = {},
  describeLast?: () => Promise<string> | string,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await check();
      if (value !== undefined && value !== false) return value;
    } catch (err) {
      lastError = err;
    }
    if (Date.now() > deadline) {
      const last = describeLast ? await describeLast() : '';
      const error = lastError instanceof Error ? ` (last error: ${lastError.message})` : '';
      throw new Error(
        `timed out after ${timeoutMs} ms waiting for ${what}${error}${last ? `\n${last}` : ''}`,
      );
    }
    await sleep(intervalMs);
  }
}
