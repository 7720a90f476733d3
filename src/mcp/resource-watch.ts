/**
 * One client's resource subscriptions, fed by the core's change feed (core/feed/): which URIs it
 * subscribed to, which spaces are watched for them, and which changes to tell it — by any process or
 * host on the store. It knows no transport: the server gives it the two notifications to send, so the
 * 2025 era's resources/subscribe and the 2026 era's subscriptions/listen can share it.
 */
import { type Caller, canAccessSpace } from '../core/caller.js';
import type { Core } from '../core/core.js';
import type { CoreEvent } from '../core/events.js';
import { type FeedEvent, type FeedSubscription, STORE } from '../core/feed/change-feed.js';
import { changesList, updatedUris } from './feed-notices.js';

export interface ResourceNotices {
  /** The content of a subscribed URI changed. */
  updated(uri: string): void;
  /** Resources were added or removed. */
  listChanged(): void;
}

export interface ResourceWatch {
  /**
   * The client listed resources as `caller`: from now on it hears of the list changing, for the spaces
   * that caller may read. `asked`: it asked to hear of it (a listen stream), so the store's list is
   * watched whatever a check costs. Resolves once the store's baseline is taken, when it is watched.
   */
  listed(caller: Caller, asked?: boolean): Promise<void>;
  /** Subscribes to `uri` of `spaceId` (already authorised); resolves once the space's baseline is taken. */
  subscribe(uri: string, spaceId: string): Promise<void>;
  unsubscribe(uri: string): void;
  /** Stops every watch (the client left). */
  close(): void;
}

export function createResourceWatch(core: Core, notices: ResourceNotices): ResourceWatch {
  /** Subscribed URIs and their space; each space with one is watched through the feed. */
  const subscribed = new Map<string, string>();
  const watched = new Map<string, FeedSubscription>();
  let lister: Caller | undefined;
  let asking = false;
  let storeWatch: FeedSubscription | undefined;

  const listChanged = (spaceId: string) => {
    if (lister && canAccessSpace(lister, spaceId)) notices.listChanged();
  };
  // Changes seen in the store, by anyone: spaces created and deleted come from the store's watch, the
  // rest from the watch of each space a URI is subscribed in.
  const onFeed = (event: FeedEvent) => {
    if (event.type === 'space_created' || event.type === 'space_deleted') return listChanged(event.space_id);
    for (const uri of updatedUris(event)) if (subscribed.has(uri)) notices.updated(uri);
    if (changesList(event)) listChanged(event.space_id);
  };

  /**
   * The store's list of spaces is watched for a client that listed: always where a check is a stat (fs),
   * and, where it is a request (S3), only while the client subscribes to something — a client that only
   * listed then hears of spaces created and deleted by this process alone (its own events, below) — unless
   * it asked to hear of them (a listen stream's resourcesListChanged).
   */
  const watchStore = () => {
    if (lister !== undefined && (asking || core.context.storage.version !== undefined || subscribed.size > 0)) {
      storeWatch ??= core.feed.subscribe([STORE], onFeed);
    } else {
      storeWatch?.unsubscribe();
      storeWatch = undefined;
    }
  };

  // What this process changed where the feed does not look: a consolidation in a space no URI here is
  // subscribed in, a space created or deleted while the store's list is not watched.
  const stopEvents = core.events.on((event: CoreEvent) => {
    if (event.type !== 'bank_changed') {
      if (!storeWatch) listChanged(event.space_id);
    } else if (!watched.has(event.space_id) && event.files.some((file) => file.kind !== 'updated')) listChanged(event.space_id);
  });

  return {
    async listed(caller, asked = false) {
      lister = caller;
      asking ||= asked;
      watchStore();
      await storeWatch?.ready;
    },
    async subscribe(uri, spaceId) {
      subscribed.set(uri, spaceId);
      watchStore();
      let watch = watched.get(spaceId);
      // Spaces created and deleted come from the store's watch alone (told once).
      if (!watch) {
        watch = core.feed.subscribe([spaceId], (event) => {
          if (!event.type.startsWith('space_')) onFeed(event);
        });
        watched.set(spaceId, watch);
      }
      await watch.ready;
    },
    unsubscribe(uri) {
      const spaceId = subscribed.get(uri);
      subscribed.delete(uri);
      watchStore();
      if (spaceId === undefined || [...subscribed.values()].includes(spaceId)) return;
      watched.get(spaceId)?.unsubscribe();
      watched.delete(spaceId);
    },
    close() {
      stopEvents();
      storeWatch?.unsubscribe();
      storeWatch = undefined;
      for (const watch of watched.values()) watch.unsubscribe();
      watched.clear();
      subscribed.clear();
    },
  };
}
