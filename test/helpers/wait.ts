import { setTimeout as sleep } from 'node:timers/promises';

/**
 * Polls `read` every 20 ms until it returns something other than null or undefined, and returns that.
 * Fails naming `what` when `timeoutMs` passes first (a bound, not a timing assertion: it keeps a broken
 * build from hanging the suite).
 */
export async function waitUntil<T>(
  what: string,
  read: () => Promise<T | null | undefined> | T | null | undefined,
  timeoutMs = 30_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let lastError: unknown;
  for (;;) {
    try {
      const value = await read();
      if (value !== null && value !== undefined) return value;
      lastError = undefined;
    } catch (error) {
      lastError = error;
    }
    if (Date.now() > deadline) {
      const cause = lastError ? ` (last error: ${(lastError as Error).message})` : '';
      throw new Error(`timed out after ${timeoutMs} ms waiting until ${what}${cause}`);
    }
    await sleep(20);
  }
}
