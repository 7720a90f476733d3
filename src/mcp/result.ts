import { isJSONRPCErrorResponse, ProtocolError, ProtocolErrorCode } from '@modelcontextprotocol/server';
import type { Transport, CallToolResult } from '@modelcontextprotocol/server';
import { MODEL_FIX, MODEL_FIX_REMOTE } from '../core/model.js';
import { isLiveMemError, statusOf, type ErrorCode, type LiveMemError } from '../shared/errors.js';
import { EVERY_TOOL, hintFor, mcpWording, type Offered } from '../shared/hints.js';
import type { Logger } from '../shared/log.js';

/** The hint of an error over MCP: the shared table (shared/hints.ts), naming only the tools offered. */
const hintOf = (error: LiveMemError, offered: Offered): string | undefined => hintFor(error.code, error.message, mcpWording(offered), error.data);

/**
 * An error's message as this client is told it: the core says how to give this machine a model
 * (MODEL_FIX); a client of a server on another machine is told to ask whoever runs it.
 */
const messageFor = (error: LiveMemError, offered: Offered): string => (offered.remote ? error.message.replace(MODEL_FIX, MODEL_FIX_REMOTE) : error.message);

/** Statuses that are not errors: `partial` kept the work it did (its message says what failed). */
const SUCCESS = new Set(['ok', 'created', 'deleted', 'partial']);

/** A core result as a tool result; a result that carries an error status (a failed consolidation) sets isError. */
export function toolResult(result: Record<string, unknown>): CallToolResult {
  const isError = !SUCCESS.has(String(result.status));
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result, ...(isError ? { isError } : {}) };
}

/**
 * The one place where an error becomes a tool result: domain errors keep their message and the
 * seed's status; anything else is reported as an internal error, with the stack on stderr only.
 */
export function toolError(error: unknown, logger: Logger, toolName: string, offered: Offered = EVERY_TOOL): CallToolResult {
  let result: Record<string, unknown>;
  if (isLiveMemError(error) && error.code !== 'internal') {
    const hint = hintOf(error, offered);
    result = { status: statusOf(error), code: error.code, message: messageFor(error, offered), ...error.data, ...(hint ? { hint } : {}) };
  } else {
    logger.error(`tool ${toolName} failed`, { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
    result = { status: 'error', code: 'internal', message: `internal error in ${toolName}; the server's log (stderr) has the details` };
  }
  return { content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result, isError: true };
}

/** JSON-RPC error codes for domain errors outside tools (resources, prompts); -32002 is MCP 2025's "resource not found" (legacyErrors). */
const PROTOCOL_CODES: Partial<Record<ErrorCode, number>> = {
  not_found: -32002,
  invalid_input: ProtocolErrorCode.InvalidParams,
  forbidden: ProtocolErrorCode.InvalidRequest,
};

/**
 * The one place where an error of a resource or prompt request becomes a JSON-RPC error: those
 * have no result to carry a status, so the status rides in `data`. Internal errors as in toolError.
 */
export function protocolError(error: unknown, logger: Logger, what: string, offered: Offered = EVERY_TOOL): Error {
  if (error instanceof ProtocolError) return error;
  if (isLiveMemError(error) && error.code !== 'internal') {
    const hint = hintOf(error, offered);
    return new ProtocolError(PROTOCOL_CODES[error.code] ?? ProtocolErrorCode.InternalError, messageFor(error, offered), {
      status: statusOf(error),
      code: error.code,
      ...(hint ? { hint } : {}),
    });
  }
  logger.error(`${what} failed`, { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  return new ProtocolError(ProtocolErrorCode.InternalError, `internal error in ${what}; the server's log (stderr) has the details`, {
    status: 'error',
    code: 'internal',
  });
}

/** What v1 of the SDK answered a `resources/read` of a URI no resource matches (v2: "Resource not found: <uri>", `data.uri`). */
const resourceNotFound = (uri: string) => `Resource ${uri} not found`;

/**
 * A transport that keeps 2025-era clients' errors as they were before the SDK's v2. It sends every
 * -32002 as -32602, since MCP 2026-07-28 names a missing resource -32602, on the 2025 era too: a
 * missing space or bank file of live-mem's own (protocolError, `data.code` `not_found`) stays -32002
 * there. And a URI no resource matches is said as v1 said it. `legacy` says whether the connection
 * speaks the 2025 era (default: always); a 2026-07-28 one gets the SDK's errors as they are.
 */
export function legacyErrors<T extends Transport>(transport: T, legacy: () => boolean = () => true): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    // A result (most messages) is told by a key, without the schema check (a parse of the message).
    if (!('error' in message) || !isJSONRPCErrorResponse(message) || message.error.code !== ProtocolErrorCode.InvalidParams || !legacy())
      return send(message, options);
    const { error } = message;
    const data = error.data as Record<string, unknown> | undefined;
    if (data?.code === 'not_found') return send({ ...message, error: { ...error, code: PROTOCOL_CODES.not_found as number } }, options);
    const uri = data?.uri;
    if (data && typeof uri === 'string' && Object.keys(data).length === 1 && error.message === `Resource not found: ${uri}`)
      return send({ ...message, error: { code: error.code, message: resourceNotFound(uri) } }, options);
    return send(message, options);
  };
  return transport;
}
