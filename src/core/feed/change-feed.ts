/**
 * The change feed: changes to the spaces someone watches, made by anyone — this process, another
 * process on the same store, another host on the same bucket — found by the store's own change
 * detection (space-probe.ts), checked every interval while a space has a subscriber and not at all
 * once its last one leaves. Shells turn it into what their clients understand (MCP resource
 * notifications today; `subscriptions/listen` next; the viewer's live page); it knows none of them.
 */
import { mapLimit } from '../../shared/concurrency.js';
import type { Logger } from '../../shared/log.js';
import type { StorageDriver } from '../../storage/types.js';
import { STORE_CHANGES } from '../layout.js';
import { keepsMarkers } from './change-marker.js';
import { createSpaceProbe, FULL_CHECK_MS, type FeedEvent, markerWatch } from './space-probe.js';

export type { FeedEvent } from './space-probe.js';

/** The target that watches the store itself: spaces created and deleted anywhere in it. */
export const STORE = '*';

/** Interval defaults: a stat is cheap, a request to a bucket is not. */
export const DEFAULT_WATCH_INTERVAL_MS = { versions: 1_000, listings: 5_000 };

export type FeedListener = (event: FeedEvent) => void;

export interface FeedSubscription {
  /**
   * Resolves once each target's first check ran: its baseline taken, so changes after it are told (if
   * the store failed that check, the next interval takes the baseline; `ready` does not wait for it).
   */
  ready: Promise<void>;
  /** Stops this subscription; a target with no subscriber left is no longer checked. Idempotent. */
  unsubscribe(): void;
}

export interface ChangeFeed {
  /** Calls `listener` with the changes of these spaces (ids; `STORE` for spaces created and deleted). */
  subscribe(targets: readonly string[], listener: FeedListener): FeedSubscription;
  /** The same as an async iterable, ended by `signal` or by leaving the loop. */
  listen(targets: readonly string[], options?: { signal?: AbortSignal }): AsyncGenerator<FeedEvent>;
  /** A change made in this process: checks the watched targets now rather than at the next interval. */
  poke(): void;
  /** The targets being checked. */
  watching(): string[];
  /** Stops every check. */
  close(): void;
}

interface Probe {
  /** `full`: past an unchanged marker or folder version (space-probe.ts). */
  check(full: boolean): Promise<FeedEvent[]>;
}

interface Watch {
  probe: Probe;
  listeners: Set<FeedListener>;
  /** The first check's result: the baseline taken (or tried). */
  checked: Promise<void>;
  markChecked: () => void;
  /** The last check failed (logged once per streak). */
  failing: boolean;
}

export interface ChangeFeedOptions {
  storage: StorageDriver;
  logger: Logger;
  clock: () => Date;
  /** Milliseconds between checks; default by driver (DEFAULT_WATCH_INTERVAL_MS). */
  intervalMs?: number;
  /** Without folder versions: list a watched space at least this often, whatever its marker says (FULL_CHECK_MS). */
  fullCheckMs?: number;
}

/** Tells a watch's listeners its events, in order; a listener that throws is logged, and the others are told all the same. */
function deliver(logger: Logger, target: string, watch: Watch, events: FeedEvent[]): void {
  for (const event of events) {
    for (const listener of watch.listeners) {
      try {
        listener(event);
      } catch (error) {
        logger.warn(`a listener of the change feed failed on ${event.type}`, { target, error: String(error) });
      }
    }
  }
}

export function createChangeFeed(options: ChangeFeedOptions): ChangeFeed {
  const { storage, logger, clock } = options;
  const intervalMs = options.intervalMs ?? (storage.version ? DEFAULT_WATCH_INTERVAL_MS.versions : DEFAULT_WATCH_INTERVAL_MS.listings);
  const fullCheckMs = options.fullCheckMs ?? FULL_CHECK_MS;
  let poked = false;
  const watches = new Map<string, Watch>();
  let timer: NodeJS.Timeout | undefined;
  let running = false;
  let again = false;
  let closed = false;

  const checkOne = async (target: string, watch: Watch, full: boolean) => {
    try {
      const events = await watch.probe.check(full);
      if (watch.failing) logger.info('change detection recovered', { target });
      watch.failing = false;
      if (watches.get(target) === watch) deliver(logger, target, watch, events);
    } catch (error) {
      // The state is kept: the next interval checks again, from what was last seen.
      if (!watch.failing) logger.warn('change detection failed; retried at the next interval', { target, error: String(error) });
      watch.failing = true;
    } finally {
      watch.markChecked();
    }
  };

  const schedule = (delay: number) => {
    if (timer || running || closed || watches.size === 0) return;
    timer = setTimeout(run, delay);
    // The interval never holds the process open; a check asked for now (a baseline someone awaits) does.
    if (delay > 0) timer.unref();
  };

  function run(): void {
    timer = undefined;
    running = true;
    const current = [...watches];
    // A check asked for by a change made here looks past the markers: this process may not have written them yet.
    const full = poked;
    poked = false;
    void mapLimit(current, storage.parallelism, ([target, watch]) => checkOne(target, watch, full)).finally(() => {
      running = false;
      const now = again;
      again = false;
      schedule(now ? 0 : intervalMs);
    });
  }

  const poke = () => {
    if (closed || watches.size === 0) return;
    poked = true;
    if (running) {
      again = true;
      return;
    }
    clearTimeout(timer);
    timer = undefined;
    schedule(0);
  };

  const watchOf = (target: string): Watch => {
    let watch = watches.get(target);
    if (!watch) {
      let markChecked = () => {};
      const checked = new Promise<void>((resolve) => {
        markChecked = resolve;
      });
      const probe = target === STORE ? createStoreProbe(storage, clock, fullCheckMs) : createSpaceProbe(storage, target, clock, fullCheckMs);
      watch = { probe, listeners: new Set(), checked, markChecked, failing: false };
      watches.set(target, watch);
    }
    return watch;
  };

  const subscribe = (targets: readonly string[], listener: FeedListener): FeedSubscription => {
    // A listener object of its own per subscription: the same function subscribed twice is two subscriptions.
    const own: FeedListener = (event) => listener(event);
    const held = [...new Set(targets)].map((target) => {
      const watch = watchOf(target);
      watch.listeners.add(own);
      return [target, watch] as const;
    });
    poke(); // the baselines of new targets, now
    let active = true;
    return {
      ready: Promise.all(held.map(([, watch]) => watch.checked)).then(() => undefined),
      unsubscribe: () => {
        if (!active) return;
        active = false;
        for (const [target, watch] of held) {
          watch.listeners.delete(own);
          if (watch.listeners.size === 0 && watches.get(target) === watch) watches.delete(target);
        }
        if (watches.size === 0) {
          clearTimeout(timer);
          timer = undefined;
        }
      },
    };
  };

  async function* listen(targets: readonly string[], listenOptions: { signal?: AbortSignal } = {}): AsyncGenerator<FeedEvent> {
    const { signal } = listenOptions;
    const queue: FeedEvent[] = [];
    let wake: (() => void) | undefined;
    const subscription = subscribe(targets, (event) => {
      queue.push(event);
      wake?.();
    });
    const onAbort = () => wake?.();
    signal?.addEventListener('abort', onAbort);
    try {
      await subscription.ready;
      while (!signal?.aborted) {
        const event = queue.shift();
        if (event) {
          yield event;
          continue;
        }
        await new Promise<void>((resolve) => {
          wake = resolve;
        });
        wake = undefined;
      }
    } finally {
      signal?.removeEventListener('abort', onAbort);
      subscription.unsubscribe();
    }
  }

  return {
    subscribe,
    listen,
    poke,
    watching: () => [...watches.keys()],
    close: () => {
      closed = true;
      clearTimeout(timer);
      timer = undefined;
      watches.clear();
    },
  };
}

/**
 * Spaces made and removed anywhere in the store: one listing of its top level (its folders but `_backups/`,
 * `_system/`; a new folder counts once its `_meta.json` exists), taken when the root's folder version (fs)
 * or the store's change marker (change-marker.ts) moved — at least once a minute with a marker — and at
 * every check on a store with neither (memory).
 */
function createStoreProbe(storage: StorageDriver, clock: () => Date, fullCheckMs: number): Probe {
  let spaces: Set<string> | undefined;
  let version: string | null | undefined;
  const marker = keepsMarkers(storage) ? markerWatch(storage, STORE_CHANGES, clock, fullCheckMs) : undefined;
  return {
    async check(full) {
      let commit: (() => void) | undefined;
      if (storage.version) {
        const now = await storage.version('');
        if (!full && now !== null && now === version && spaces) return [];
        commit = () => (version = now);
      } else if (marker) {
        const seen = await marker.changed(full);
        if (!seen.changed && spaces) return [];
        commit = seen.commit;
      }
      const folders = new Set<string>();
      let cursor: string | undefined;
      do {
        const page = await storage.list('', { delimiter: '/', ...(cursor ? { cursor } : {}) });
        for (const prefix of page.prefixes) if (!prefix.startsWith('_')) folders.add(prefix.slice(0, -1));
        cursor = page.cursor;
      } while (cursor);
      const now = new Set<string>();
      const events: FeedEvent[] = [];
      for (const folder of folders) {
        // The baseline takes every folder as it is (no request per space); a new one counts once its meta exists.
        if (!spaces || spaces.has(folder) || (await storage.stat(`${folder}/_meta.json`))) now.add(folder);
        if (spaces && now.has(folder) && !spaces.has(folder)) events.push({ type: 'space_created', space_id: folder });
      }
      for (const space of spaces ?? []) if (!now.has(space)) events.push({ type: 'space_deleted', space_id: space });
      spaces = now;
      // On fs, a folder whose meta is not written yet is listed again at the next check, whatever the root's
      // version says (writing the meta does not change it); the store's marker is written after the meta.
      if (marker || [...folders].every((folder) => now.has(folder))) commit?.();
      return events;
    },
  };
}
