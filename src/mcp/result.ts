import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { type CallToolResult, ErrorCode as McpErrorCode, isJSONRPCErrorResponse, McpError } from '@modelcontextprotocol/sdk/types.js';
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

/** JSON-RPC error codes for domain errors outside tools (resources, prompts); -32002 is MCP's "resource not found". */
const PROTOCOL_CODES: Partial<Record<ErrorCode, number>> = {
  not_found: -32002,
  invalid_input: McpErrorCode.InvalidParams,
  forbidden: McpErrorCode.InvalidRequest,
};

/** What the SDK sends as a JSON-RPC error (its code, message and data), without McpError's "MCP error N:" in the message. */
class RequestError extends Error {
  constructor(
    readonly code: number,
    message: string,
    readonly data: Record<string, unknown>,
  ) {
    super(message);
  }
}

/**
 * The one place where an error of a resource or prompt request becomes a JSON-RPC error: those
 * have no result to carry a status, so the status rides in `data`. Internal errors as in toolError.
 */
export function protocolError(error: unknown, logger: Logger, what: string, offered: Offered = EVERY_TOOL): Error {
  if (error instanceof McpError) return error;
  if (isLiveMemError(error) && error.code !== 'internal') {
    const hint = hintOf(error, offered);
    return new RequestError(PROTOCOL_CODES[error.code] ?? McpErrorCode.InternalError, messageFor(error, offered), {
      status: statusOf(error),
      code: error.code,
      ...(hint ? { hint } : {}),
    });
  }
  logger.error(`${what} failed`, { error: error instanceof Error ? (error.stack ?? error.message) : String(error) });
  return new RequestError(McpErrorCode.InternalError, `internal error in ${what}; the server's log (stderr) has the details`, {
    status: 'error',
    code: 'internal',
  });
}

/**
 * A transport whose JSON-RPC errors carry their bare message. The SDK's McpError writes "MCP error
 * <code>: " into its own message, the SDK's server sends that message as the error's, and the
 * client's McpError adds the prefix again ("MCP error -32602: MCP error -32602: Prompt x not
 * found"). Errors live-mem raises go through protocolError (RequestError, no prefix); those the SDK
 * raises itself — an unknown prompt or resource, a refused prompt argument — lose theirs here.
 */
export function plainErrors<T extends Transport>(transport: T): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    // A result (most messages) is told by a key, without the schema check (a parse of the message).
    if (!('error' in message) || !isJSONRPCErrorResponse(message)) return send(message, options);
    const prefix = `MCP error ${message.error.code}: `;
    const bare = message.error.message.startsWith(prefix) ? message.error.message.slice(prefix.length) : message.error.message;
    return send({ ...message, error: { ...message.error, message: bare } }, options);
  };
  return transport;
}
