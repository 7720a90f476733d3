/**
 * Polling waits for tests whose subject changes in the background — a change feed, another process, a
 * stream's notifications: how long a condition took to hold, or an error naming what never came.
 */

export const sleep = (ms: number): Promise<void> => new Promise((resolve) => setTimeout(resolve, ms));

/** Waits until `check` holds, looking every `stepMs`; returns the milliseconds it took; throws after `ms`. */
export async function within(ms: number, check: () => boolean, what: string, stepMs = 10): Promise<number> {
  const start = Date.now();
  while (!check()) {
    if (Date.now() - start > ms) throw new Error(`no ${what} within ${ms} ms`);
    await sleep(stepMs);
  }
  return Date.now() - start;
}

/** `within` for in-process feeds: 2 s by default, looking every 5 ms. */
export const until = (check: () => boolean, what: string, ms = 2_000): Promise<number> => within(ms, check, what, 5);
