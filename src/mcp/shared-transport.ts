import { isJSONRPCErrorResponse, isJSONRPCRequest, isJSONRPCResultResponse } from '@modelcontextprotocol/server';
import type { Transport, TransportSendOptions, JSONRPCMessage, MessageExtraInfo, RequestId } from '@modelcontextprotocol/server';

/** Where the answer to one forwarded request goes: the HTTP request's own transport, under the client's id. */
interface Route {
  transport: Transport;
  id: RequestId;
}

/**
 * One MCP server for every HTTP request of the process. The SDK's stateless examples build a whole
 * server per request, since a server (a Protocol) holds one transport; live-mem's registers 36
 * tools, its resources and prompts, which cost more than the call itself. Here the server is built
 * once and connected to this transport, and each HTTP request keeps its own SDK transport (the
 * Streamable HTTP one: parsing, SSE, the answer) whose messages are forwarded through `attach`:
 * - each request gets an id unique in the process, and its answer (and the notifications sent
 *   about it, such as progress) goes back to the transport it came from, under the client's id —
 *   two clients both asking with id 1 never see each other's answers;
 * - who is calling travels with the message (`ctx.http.authInfo`, set per HTTP request), never in the
 *   server: concurrent requests of different tokens share nothing but the server's code;
 * - a request whose HTTP connection closes is cancelled (its handler's signal aborts), as closing a
 *   per-request server did.
 * Messages the client sends outside a request (notifications, answers to server requests) have no
 * stateless meaning and are dropped; so are server messages tied to no pending request.
 */
export class SharedServerTransport implements Transport {
  onmessage?: (message: JSONRPCMessage, extra?: MessageExtraInfo) => void;
  onclose?: () => void;
  onerror?: (error: Error) => void;
  private next = 0;
  private readonly pending = new Map<number, Route>();

  async start(): Promise<void> {}

  async close(): Promise<void> {
    this.pending.clear();
    this.onclose?.();
  }

  async send(message: JSONRPCMessage, options?: TransportSendOptions): Promise<void> {
    if (isJSONRPCResultResponse(message) || isJSONRPCErrorResponse(message)) {
      const route = typeof message.id === 'number' ? this.pending.get(message.id) : undefined;
      if (!route) return;
      this.pending.delete(message.id as number);
      await route.transport.send({ ...message, id: route.id }, { relatedRequestId: route.id });
      return;
    }
    const related = options?.relatedRequestId;
    const route = typeof related === 'number' ? this.pending.get(related) : undefined;
    if (route) await route.transport.send(message, { ...options, relatedRequestId: route.id });
  }

  /** Serves one HTTP request's transport through the shared server; call before its handleRequest. */
  attach(transport: Transport): { detach(): void } {
    const mine = new Set<number>();
    transport.onmessage = (message, extra) => {
      if (!isJSONRPCRequest(message)) return;
      const id = ++this.next;
      mine.add(id);
      this.pending.set(id, { transport, id: message.id });
      this.onmessage?.({ ...message, id }, extra);
    };
    return {
      detach: () => {
        for (const id of mine) {
          if (!this.pending.delete(id)) continue;
          // The connection closed before the answer: the handler's signal aborts, as a client's cancel would.
          this.onmessage?.({ jsonrpc: '2.0', method: 'notifications/cancelled', params: { requestId: id, reason: 'the HTTP request closed' } });
        }
      },
    };
  }
}
