/**
 * `subscriptions/listen` over Streamable HTTP (MCP 2026-07-28, a team server): a stream hears of the
 * changes the core's change feed finds in the store — a note or a commit made through this server,
 * another replica or another host on the same bucket — for the resources its token may read. The
 * SDK's createMcpHandler serves listen streams from a ServerEventBus whose `subscribe(listener)`
 * carries neither the stream's caller nor its filter, and delivers each event to every stream whose
 * filter accepts it: a list change would reach tokens that may not read the space. So each stream
 * gets a handler of its own, whose bus is fed by that stream's watch alone (listen-watch.ts); the
 * SDK keeps the wire (acknowledgement, subscription ids, keep-alives, graceful close). A space is
 * watched while a stream asks for it; an open stream no longer counts as a call in flight of its
 * token, only as a connection.
 */
import type { IncomingMessage, ServerResponse } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, type McpHttpHandler, type McpServerFactory, type ServerEvent, type ServerEventBus } from '@modelcontextprotocol/server';
import type { Caller } from '../core/caller.js';
import type { Core } from '../core/core.js';
import type { Admitted } from '../http/listen.js';
import type { Logger } from '../shared/log.js';
import { createHold, type listenFilter, narrowFilter, watchStream } from './listen-watch.js';

export interface ListenServing {
  /** Serves one listen request (`listen`: what listenFilter read of its body) until its stream closes. */
  serve(
    req: IncomingMessage,
    res: ServerResponse,
    body: unknown,
    listen: NonNullable<ReturnType<typeof listenFilter>>,
    admitted: Admitted<Caller>,
  ): Promise<void>;
  /** Closes every open stream gracefully (the SDK's empty listen result) and stops their watches. */
  close(): Promise<void>;
}

export interface ListenServingOptions {
  core: Core;
  logger: Logger;
  /** The modern era's instance factory (http.ts): the stream's handler builds one to answer the listen request. */
  factory: McpServerFactory;
  /** Who the request's token stands for now (the front door's authenticate): throws `forbidden` once revoked or expired. */
  authenticate(req: IncomingMessage): Promise<Caller>;
}

export function createListenServing(options: ListenServingOptions): ListenServing {
  const { core, logger, factory } = options;
  const open = new Set<McpHttpHandler>();
  const onerror = (error: Error) => logger.debug(`MCP listen stream over HTTP: ${error.message}`);

  return {
    async serve(req, res, body, listen, admitted) {
      const filter = narrowFilter(admitted.caller, listen.filter);
      let listener: ((event: ServerEvent) => void) | undefined;
      /** Events told before the stream's acknowledgement, told after it. */
      const held = createHold<ServerEvent>();
      const publish = (event: ServerEvent) => {
        if (!held.keep(event)) listener?.(event);
      };
      let handler: McpHttpHandler | undefined;
      const { caller } = admitted;
      // A token revoked or expired while its stream is open ends it, as the next request of it would be refused.
      const who = { caller, current: () => options.authenticate(req), revoked: () => (handler ? void handler.close() : res.destroy()) };
      const watch =
        caller && Object.keys(filter).length > 0
          ? watchStream(core, { ...who, caller }, filter, {
              updated: (uri) => publish({ kind: 'resource_updated', uri }),
              listChanged: () => publish({ kind: 'resources_list_changed' }),
            })
          : undefined;
      res.once('close', () => watch?.close());
      // Acknowledged once the baselines are taken: any change after the acknowledgement is told.
      await watch?.ready;
      if (res.destroyed) return;
      const bus: ServerEventBus = {
        publish,
        subscribe(subscriber) {
          // The stream is open (acknowledged): it no longer holds one of its token's calls in flight.
          admitted.answered();
          listener = subscriber;
          for (const event of held.release()) subscriber(event);
          return () => {
            listener = undefined;
            watch?.close();
          };
        },
      };
      const stream = createMcpHandler(factory, { legacy: 'reject', bus, onerror });
      handler = stream;
      open.add(stream);
      res.once('close', () => {
        open.delete(stream);
        void stream.close();
      });
      const params = (body as { params?: Record<string, unknown> }).params ?? {};
      await toNodeHandler(stream, { onerror })(req, res, { ...(body as object), params: { ...params, notifications: filter } });
    },
    async close() {
      const closing = [...open].map((handler) => handler.close());
      open.clear();
      await Promise.all(closing);
    },
  };
}
