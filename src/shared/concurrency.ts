/** Maps `items` through `fn` with at most `limit` calls in flight; results keep the input order. */
export async function mapLimit<T, R>(items: readonly T[], limit: number, fn: (item: T, index: number) => Promise<R>): Promise<R[]> {
  const results = new Array<R>(items.length);
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < items.length) {
      const index = next++;
      results[index] = await fn(items[index] as T, index);
    }
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(limit, items.length)) }, worker));
  return results;
}

/**
 * Yields `fn(item)` for each item, in order, with up to `limit` calls running ahead: a stream of
 * reads that hides latency while holding at most `limit` results in memory.
 */
export async function* mapOrdered<T, R>(items: Iterable<T>, limit: number, fn: (item: T) => Promise<R>): AsyncGenerator<R> {
  const running: Array<Promise<R>> = [];
  const iterator = items[Symbol.iterator]();
  const fill = () => {
    while (running.length < Math.max(1, limit)) {
      const next = iterator.next();
      if (next.done) return;
      const promise = fn(next.value);
      promise.catch(() => undefined); // surfaced when its turn comes; never an unhandled rejection meanwhile
      running.push(promise);
    }
  };
  fill();
  while (running.length > 0) {
    const result = await (running.shift() as Promise<R>);
    fill();
    yield result;
  }
}

/**
 * Runs async tasks with at most `limit` in flight: `run` waits only when the limit is reached;
 * `drain` waits for the rest. The first failure is thrown by the next `run` or by `drain`.
 */
export function boundedTasks(limit: number) {
  const inFlight = new Set<Promise<void>>();
  let failure: unknown;
  return {
    async run(task: () => Promise<void>): Promise<void> {
      if (failure) throw failure;
      const promise: Promise<void> = task()
        .catch((error: unknown) => {
          failure ??= error;
        })
        .finally(() => inFlight.delete(promise));
      inFlight.add(promise);
      if (inFlight.size >= limit) await Promise.race(inFlight);
      if (failure) throw failure;
    },
    async drain(): Promise<void> {
      await Promise.all(inFlight);
      if (failure) throw failure;
    },
  };
}

/**
 * Wraps `task` so that callers get a run that started after they called, and callers arriving
 * while a run is in flight share the next one (per key): n concurrent fsyncs of one folder cost
 * two, not n. A failed run fails the callers that shared it, and only them.
 */
export function coalescing(task: (key: string) => Promise<void>): (key: string) => Promise<void> {
  const latest = new Map<string, Promise<void>>();
  const queued = new Map<string, Promise<void>>();
  return (key) => {
    const waiting = queued.get(key);
    if (waiting) return waiting;
    const previous = latest.get(key);
    const run = (previous ?? Promise.resolve())
      .catch(() => undefined)
      .then(() => {
        queued.delete(key);
        return task(key);
      });
    if (previous) queued.set(key, run);
    latest.set(key, run);
    run.then(
      () => latest.get(key) === run && latest.delete(key),
      () => latest.get(key) === run && latest.delete(key),
    );
    return run;
  };
}

/**
 * At most `limit` tasks at once, without a queue: past it, `run` throws `busy()` at once. The slot is
 * taken synchronously when `run` is called, so callers started together are counted together.
 */
export function refusingSlots(limit: number) {
  let running = 0;
  return {
    async run<T>(task: () => Promise<T>, busy: () => Error): Promise<T> {
      if (running >= limit) throw busy();
      running += 1;
      try {
        return await task();
      } finally {
        running -= 1;
      }
    },
  };
}
