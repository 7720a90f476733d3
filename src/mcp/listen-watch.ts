/**
 * `subscriptions/listen` (MCP 2026-07-28) fed by the core's change feed. The SDK's serving entries
 * answer a listen request themselves — the instance never sees it, nor the stream closing — so each
 * transport hands its streams here (stdio.ts from the connection's messages, http.ts per request):
 * what a stream may hear (its filter narrowed to the resources its caller may read) and one resource
 * watch per open stream (resource-watch.ts), started for the URIs and list changes it asks for and
 * stopped when it closes, so a space no open stream asks for is not checked.
 */
import { ProtocolError, type RequestId, type SubscriptionFilter } from '@modelcontextprotocol/server';
import { authorize, type Caller, canAccessSpace } from '../core/caller.js';
import type { Core } from '../core/core.js';
import { isLiveMemError } from '../shared/errors.js';
import { createResourceWatch, type ResourceNotices } from './resource-watch.js';
import { subscribable } from './resources.js';

/** A listen request's filter (params.notifications), if the message is a listen request with one. */
export function listenFilter(message: unknown): { id: RequestId; filter: SubscriptionFilter } | undefined {
  const request = message as { id?: unknown; method?: unknown; params?: { notifications?: unknown } } | null;
  if (request === null || typeof request !== 'object' || request.method !== 'subscriptions/listen') return undefined;
  const { id } = request;
  const filter = request.params?.notifications;
  if ((typeof id !== 'string' && typeof id !== 'number') || typeof filter !== 'object' || filter === null) return undefined;
  return { id, filter: filter as SubscriptionFilter };
}

/**
 * What a stream of `caller` may hear of `filter`: the resource URIs of live-mem it may read, normalised
 * (the SDK matches them as written), the others left out — as resources/subscribe refuses them — so the
 * acknowledged filter says what the stream will hear. Tools and prompts never change while a server
 * runs: their list changes are not asked for (nor advertised).
 */
export function narrowFilter(caller: Caller | undefined, filter: SubscriptionFilter): SubscriptionFilter {
  const narrowed: SubscriptionFilter = {};
  if (caller === undefined) return narrowed;
  if (filter.resourcesListChanged === true) narrowed.resourcesListChanged = true;
  const uris = new Set<string>();
  for (const raw of filter.resourceSubscriptions ?? []) {
    try {
      const { uri, spaceId } = subscribable(raw);
      authorize(caller, 'read', spaceId);
      uris.add(uri);
    } catch (error) {
      // An invalid or foreign URI (a ProtocolError), an invalid id, a space this caller may not read: not heard of.
      if (!(error instanceof ProtocolError) && !isLiveMemError(error)) throw error;
    }
  }
  if (uris.size > 0) narrowed.resourceSubscriptions = [...uris];
  return narrowed;
}

/**
 * A stream's notifications told before its acknowledgement is sent: kept, each once, and handed over
 * in order when the stream opens (both transports acknowledge only once the baselines are taken).
 */
export function createHold<T>() {
  let held: T[] | undefined = [];
  return {
    /** Keeps `item` while the stream is not open (true); false once it is: send it now. */
    keep(item: T): boolean {
      if (!held) return false;
      const same = JSON.stringify(item);
      if (!held.some((other) => JSON.stringify(other) === same)) held.push(item);
      return true;
    },
    /** The stream is open: what was kept, in the order told. */
    release(): T[] {
      const kept = held ?? [];
      held = undefined;
      return kept;
    },
  };
}

export interface ListenStream {
  /** Resolves once the baselines of what the stream watches are taken: any change after it is told. */
  ready: Promise<void>;
  /** Stops the stream's watches (idempotent). */
  close(): void;
}

/** How a stream's caller is checked again before each notification, and what ends the stream when it no longer may hear. */
export interface StreamCaller {
  caller: Caller;
  /** The caller now (its token looked up again): a revocation or an expiry applies to the next notification. Throws `forbidden` then. */
  current(): Promise<Caller>;
  /** The token no longer stands for anyone: the stream is ended (its watch is stopped here). */
  revoked(): void;
}

/**
 * Watches what one stream asks for, with a filter narrowed for its caller (narrowFilter): each URI's
 * space, and for `resourcesListChanged` the store's list of spaces (those the caller may read are told).
 * Before each notification the caller is looked up again, as each request's is: a revoked or expired
 * token ends the stream, a space its token may no longer read is not told of.
 */
export function watchStream(core: Core, who: StreamCaller, filter: SubscriptionFilter, notices: ResourceNotices): ListenStream {
  let closed = false;
  let checked: Promise<void> = Promise.resolve();
  /** Tells a notification once the caller, looked up again, may still hear it; in order. */
  const tell = (spaceId: string | undefined, send: () => void) => {
    checked = checked.then(async () => {
      if (closed) return;
      let caller: Caller;
      try {
        caller = await who.current();
      } catch (error) {
        if (!isLiveMemError(error, 'forbidden')) throw error;
        stream.close();
        who.revoked();
        return;
      }
      if (spaceId === undefined || canAccessSpace(caller, spaceId)) send();
    });
    checked = checked.catch((error: unknown) => core.context.logger.warn('a listen notification was not told', { error: String(error) }));
  };
  const watch = createResourceWatch(core, {
    updated: (uri) => tell(subscribable(uri).spaceId, () => notices.updated(uri)),
    listChanged: () => tell(undefined, () => notices.listChanged()),
  });
  const { caller } = who;
  const baselines: Array<Promise<void>> = [];
  if (filter.resourcesListChanged === true) baselines.push(watch.listed(caller, true));
  for (const uri of filter.resourceSubscriptions ?? []) baselines.push(watch.subscribe(uri, subscribable(uri).spaceId));
  const stream: ListenStream = {
    ready: Promise.all(baselines).then(() => undefined),
    close() {
      if (closed) return;
      closed = true;
      watch.close();
    },
  };
  return stream;
}
