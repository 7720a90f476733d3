/**
 * The one error type of live-mem. Its `code` is stable and maps one-to-one to the `status` a tool
 * returns (seed 004): shells turn it into a tool result or an exit code in a single place each.
 */
export type ErrorCode =
  | 'invalid_input' // the caller sent something we refuse; nothing was changed
  | 'not_found'
  | 'already_exists'
  | 'forbidden'
  | 'conflict' // a lost race or a held lock; retrying later may succeed
  | 'precondition_failed' // storage-level: a create-only or compare-and-swap put lost
  | 'unsupported' // the store cannot do what is asked (e.g. ignores conditional writes)
  | 'storage_error'
  | 'config_error'
  | 'llm_error' // the model failed or gave no usable answer; nothing was changed
  | 'quota_exceeded' // a model call would pass a spending cap (spend/cap.ts: LIVE_MEM_LLM_DAILY_TOKENS, a space's llm_daily_tokens); nothing was sent
  | 'internal';

export class LiveMemError extends Error {
  override readonly name = 'LiveMemError';

  constructor(
    readonly code: ErrorCode,
    message: string,
    readonly data: Record<string, unknown> = {},
    options?: { cause?: unknown },
  ) {
    super(message, options);
  }
}

export function isLiveMemError(error: unknown, code?: ErrorCode): error is LiveMemError {
  return error instanceof LiveMemError && (code === undefined || error.code === code);
}

/** The seed's `status` for an error: everything that is not a named status is `error`. */
export function statusOf(error: LiveMemError): string {
  switch (error.code) {
    case 'not_found':
    case 'already_exists':
    case 'forbidden':
    case 'conflict':
      return error.code;
    case 'precondition_failed':
      return 'conflict';
    default:
      return 'error';
  }
}

export const invalid = (message: string, data?: Record<string, unknown>): LiveMemError => new LiveMemError('invalid_input', message, data);

/**
 * Phrases of the core's messages that name a tool argument. The core words them for MCP; the CLI
 * swaps each for its own flag (CONFIRM_AGAIN → --yes, RESTORE_AS → --as) where it reports errors,
 * so each shell names its own way to do it.
 */
export const CONFIRM_AGAIN = 'call again with confirm=true';
/** How to restore a backup under another space id (backup_restore's `as`). */
export const RESTORE_AS = 'as=<new_space_id>';
/** What a destructive operation says when it is not confirmed. */
export const unconfirmed = (what: string): LiveMemError => invalid(`${what}: ${CONFIRM_AGAIN}`);
