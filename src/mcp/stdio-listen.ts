/**
 * The listen streams of one stdio connection (MCP 2026-07-28). The SDK's serveStdio answers
 * `subscriptions/listen` itself and never shows it to the instance, so this transport, between the
 * entry and the wire, follows each stream: the listen request (its filter narrowed to what the caller
 * may read, listen-watch.ts), the acknowledgement (the stream is open: its watch starts, and the
 * acknowledgement waits for the baselines, so any change after it is told), a cancellation or the
 * graceful close (the watch stops), the wire closing (every watch stops). Each stream is told of its
 * own changes, stamped with its subscription id: the instance's sendResourceUpdated, which serveStdio
 * routes, would tell a change once per stream watching it to every stream that asked for it.
 */
import { type JSONRPCMessage, type RequestId, SUBSCRIPTION_ID_META_KEY, type SubscriptionFilter, type Transport } from '@modelcontextprotocol/server';
import type { Caller } from '../core/caller.js';
import type { Core } from '../core/core.js';
import { LiveMemError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';
import { createHold, type ListenStream, listenFilter, narrowFilter, watchStream } from './listen-watch.js';

export interface StdioListenHost {
  core: Core;
  logger: Logger;
  /** The connection's caller, asked at each listen request (undefined: its token was refused). */
  caller(): Promise<Caller | undefined>;
}

interface Stream {
  watch: ListenStream;
  /** Notifications told before the acknowledgement was sent, sent after it. */
  held: ReturnType<typeof createHold<JSONRPCMessage>>;
}

const idOf = (message: JSONRPCMessage): RequestId | undefined => ('id' in message ? message.id : undefined);

/** `wire` with the listen streams of its connection fed by the change feed; serveStdio takes it as its transport. */
export function withListenStreams(wire: Transport, host: StdioListenHost): Transport {
  /** Listen requests let through, with their caller, until acknowledged or refused. */
  const asked = new Map<RequestId, Caller>();
  const open = new Map<RequestId, Stream>();
  /** Messages wait behind a listen request whose caller is being resolved: the order is kept. */
  let queue: Promise<void> | undefined;

  const tell = (id: RequestId, method: string, params: Record<string, unknown> = {}) => {
    const stream = open.get(id);
    if (!stream) return;
    const message = { jsonrpc: '2.0', method, params: { ...params, _meta: { [SUBSCRIPTION_ID_META_KEY]: id } } } as JSONRPCMessage;
    if (stream.held.keep(message)) return;
    wire.send(message).catch((error: unknown) => host.logger.debug('a listen notification was not sent', { error: String(error) }));
  };
  const stop = (id: RequestId) => {
    open.get(id)?.watch.close();
    open.delete(id);
  };

  /** The stream `ack` acknowledges opens: its watch starts, and the acknowledgement goes once the baselines are taken. */
  const opened = async (ack: JSONRPCMessage & { params?: { notifications?: SubscriptionFilter; _meta?: Record<string, unknown> } }) => {
    const id = ack.params?._meta?.[SUBSCRIPTION_ID_META_KEY] as RequestId | undefined;
    const caller = id === undefined ? undefined : asked.get(id);
    const honored = ack.params?.notifications ?? {};
    if (id === undefined || caller === undefined) return wire.send(ack);
    asked.delete(id);
    if (Object.keys(honored).length === 0) return wire.send(ack); // the entry closes it at once
    const who = {
      caller,
      current: async () => {
        const now = await host.caller();
        if (now === undefined) throw new LiveMemError('forbidden', 'the token of this connection was revoked or expired');
        return now;
      },
      // The stream ends as the entry ends one (its empty result): the client may listen again, and be refused.
      revoked: () => {
        open.delete(id);
        const result = { resultType: 'complete', _meta: { [SUBSCRIPTION_ID_META_KEY]: id } };
        wire.send({ jsonrpc: '2.0', id, result } as JSONRPCMessage).catch(() => undefined);
      },
    };
    const stream: Stream = {
      watch: watchStream(host.core, who, honored, {
        updated: (uri) => tell(id, 'notifications/resources/updated', { uri }),
        listChanged: () => tell(id, 'notifications/resources/list_changed'),
      }),
      held: createHold<JSONRPCMessage>(),
    };
    open.set(id, stream);
    await stream.watch.ready;
    await wire.send(ack);
    for (const message of stream.held.release()) await wire.send(message);
  };

  const transport: Transport = {
    async start() {
      wire.onmessage = receive;
      wire.onerror = (error) => transport.onerror?.(error);
      wire.onclose = () => {
        for (const id of [...open.keys()]) stop(id);
        asked.clear();
        transport.onclose?.();
      };
      await wire.start();
    },
    async send(message, options) {
      if ('method' in message && message.method === 'notifications/subscriptions/acknowledged') return opened(message);
      const id = idOf(message);
      if (id !== undefined && !('method' in message)) {
        asked.delete(id); // a listen request refused
        stop(id); // a stream closed gracefully
      }
      return wire.send(message, options);
    },
    close: () => wire.close(),
    setProtocolVersion: (version) => wire.setProtocolVersion?.(version),
  };

  const deliver = (message: JSONRPCMessage, extra?: Parameters<NonNullable<Transport['onmessage']>>[1]) => {
    if ('method' in message && message.method === 'notifications/cancelled' && !('id' in message)) {
      const cancelled = (message.params as { requestId?: RequestId } | undefined)?.requestId;
      if (cancelled !== undefined) stop(cancelled);
    }
    transport.onmessage?.(message, extra);
  };
  /** A listen request goes on with its filter narrowed to what its caller may read. */
  const narrowed = async (message: JSONRPCMessage, listen: NonNullable<ReturnType<typeof listenFilter>>): Promise<JSONRPCMessage> => {
    const caller = await host.caller().catch((error: unknown) => {
      host.logger.warn('a listen stream hears nothing: its caller could not be resolved', { error: String(error) });
      return undefined;
    });
    if (caller) asked.set(listen.id, caller);
    const params = (message as { params?: Record<string, unknown> }).params ?? {};
    return { ...message, params: { ...params, notifications: narrowFilter(caller, listen.filter) } } as JSONRPCMessage;
  };
  function receive(message: JSONRPCMessage, extra?: Parameters<NonNullable<Transport['onmessage']>>[1]): void {
    const listen = listenFilter(message);
    if (listen === undefined && queue === undefined) {
      deliver(message, extra);
      return;
    }
    const step = (queue ?? Promise.resolve()).then(async () => deliver(listen ? await narrowed(message, listen) : message, extra));
    const tail: Promise<void> = step
      .catch((error: unknown) => transport.onerror?.(error instanceof Error ? error : new Error(String(error))))
      .then(() => {
        if (queue === tail) queue = undefined;
      });
    queue = tail;
  }
  return transport;
}
