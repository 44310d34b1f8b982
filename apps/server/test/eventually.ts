/** Waiting helpers for tests of things that happen a little later (notifications, reconnects, background passes). */

/** Resolves after `ms` milliseconds. */
export const sleep = (ms: number) => new Promise<void>((r) => setTimeout(r, ms));

/**
 * Calls `fn` every `everyMs` (default 20 ms) until `ok` holds for its value or `ms` (default 3000) have passed, and
 * returns the last value either way: the caller's own expect says what was wrong.
 */
export async function eventually<T>(fn: () => Promise<T>, ok: (v: T) => boolean, ms = 3000, everyMs = 20): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await fn();
    if (ok(v) || Date.now() > end) return v;
    await sleep(everyMs);
  }
}
