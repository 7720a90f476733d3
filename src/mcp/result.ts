import { ErrorCode as McpErrorCode, McpError, type CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { isLiveMemError, statusOf, type ErrorCode, type LiveMemError } from '../shared/errors.js';
import type { Logger } from '../shared/log.js';

/**
 * What a caller can do to recover depends on what the server offers: a hint or a prompt names
 * only tools of the served profile, so a model is never sent to a tool it cannot call.
 */
export interface Offered {
  /** The tools served (a profile's), or every tool. */
  tools: ReadonlySet<string> | 'all';
  /** A live_note to a missing space creates it (LIVE_MEM_AUTO_CREATE_SPACES). */
  autoCreateSpaces: boolean;
}

export const EVERY_TOOL: Offered = { tools: 'all', autoCreateSpaces: false };

export const offers = (offered: Offered, tool: string): boolean => offered.tools === 'all' || offered.tools.has(tool);

/** `a`, `a or b`, `a, b or c`: the tools of `names` that are offered. */
function orList(offered: Offered, names: string[]): string {
  const kept = names.filter((name) => offers(offered, name));
  return kept.length <= 1 ? (kept[0] ?? '') : `${kept.slice(0, -1).join(', ')} or ${kept[kept.length - 1]}`;
}

/** What a caller can do about a space that does not exist, in the words of a sentence's end. */
export function missingSpaceAdvice(offered: Offered, spaceId: string): string {
  const check = orList(offered, ['space_list']);
  const rest = check ? `, or check the name with ${check}` : '';
  if (offered.autoCreateSpaces && offers(offered, 'live_note')) return `write a note to it to create it (live_note, space_id "${spaceId}")${rest}`;
  if (offers(offered, 'space_create')) return `create it with space_create (space_id "${spaceId}")${rest}`;
  return `check the space_id${check ? ` with ${check}` : ''}, or ask whoever runs the server to create it (\`live-mem space create ${spaceId}\`)`;
}

const SPACE_MISSING = /^space '(.*)' does not exist$/;

/** The hint of an error that names tools: built from what is offered. */
function hintOf(error: LiveMemError, offered: Offered): string | undefined {
  if (error.code === 'not_found') {
    const space = SPACE_MISSING.exec(error.message)?.[1];
    if (space !== undefined) return `The space does not exist: ${missingSpaceAdvice(offered, space)}.`;
    const check = orList(offered, ['space_list', 'bank_list']);
    return check ? `Check the name with ${check}.` : 'Check the name and call again.';
  }
  if (error.code === 'storage_error') return `The store failed; ${offers(offered, 'system_health') ? 'call system_health or ' : ''}retry later.`;
  return HINTS[error.code];
}

/** What a model can do about each kind of error that names no tool. */
const HINTS: Partial<Record<ErrorCode, string>> = {
  already_exists: 'Pick another space_id, or use the existing space.',
  invalid_input: 'Fix the argument named in the message and call again.',
  conflict: 'Another writer holds this; wait a moment and call again.',
  forbidden: 'This token lacks the permission or the space; ask an admin.',
  llm_error: 'The model failed or answered unusably; nothing was changed. Retry later.',
  quota_exceeded: 'A daily token cap is reached; nothing was sent. Wait for the next UTC day, or raise the cap the message names.',
  config_error: 'The server is not configured for this; the message says which setting to set.',
};

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
    result = { status: statusOf(error), code: error.code, message: error.message, ...error.data, ...(hint ? { hint } : {}) };
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
    return new RequestError(PROTOCOL_CODES[error.code] ?? McpErrorCode.InternalError, error.message, {
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
