import { LlmError } from '../llm/types.js';
import { CONFIRM_AGAIN, isLiveMemError, RESTORE_AS, statusOf } from '../shared/errors.js';
import { CLI_WORDING, hintFor as sharedHint } from '../shared/hints.js';
import { forTerminal, jsonForTerminal } from './terminal.js';

/**
 * An error as the CLI reports it, at its one boundary (main.ts): one line and a hint on stderr, or the
 * MCP tools' error shape with --json; and its exit code. (A result is rendered by output.ts.)
 */

/** A usage error commander found (an unknown flag, a missing argument), with the command whose help to see. */
export class UsageError extends Error {
  override readonly name = 'UsageError';
}

/** An error as the CLI reports it: one line, a status and code for --json, and the exit code. */
export interface CliFailure {
  message: string;
  status: string;
  code: string;
  data: Record<string, unknown>;
  /** What to do about it, as the MCP results' `hint` says it, worded for a shell. */
  hint?: string;
  /** 1 a domain error (not found, forbidden, storage…), 2 a usage or configuration error. */
  exitCode: 1 | 2;
}

/** What to do about an error (its code, the core's message and its data): the hint MCP gives, from the same table, in commands. */
export const hintFor = (code: string, message: string, data?: Record<string, unknown>): string | undefined => sharedHint(code, message, CLI_WORDING, data);

/** Errors of the operating system (a file given on the command line), said the way people say them. */
const SYSTEM_ERRORS: Record<string, string> = {
  ENOENT: 'no such file',
  EACCES: 'permission denied',
  EPERM: 'operation not permitted',
  EISDIR: 'is a folder, not a file',
  ENOTDIR: 'not a folder',
  EEXIST: 'already exists',
  ENOSPC: 'no space left on the device',
  EROFS: 'read-only file system',
  EMFILE: 'too many open files',
  ENAMETOOLONG: 'file name too long',
  ECONNREFUSED: 'connection refused',
  ENOTFOUND: 'host not found',
  ETIMEDOUT: 'timed out',
};

function systemMessage(error: NodeJS.ErrnoException): string | undefined {
  if (typeof error.code !== 'string' || !/^E[A-Z0-9]+$/.test(error.code)) return undefined;
  const known = SYSTEM_ERRORS[error.code];
  const what = known === 'no such file' && (error.syscall === 'scandir' || error.syscall === 'opendir') ? 'no such folder' : known;
  const where = error.path ?? (error as { hostname?: string }).hostname;
  if (!what) return error.message.replace(new RegExp(`^${error.code}: `), '');
  return where ? `${what}: ${where}` : what;
}

/**
 * One line from a message that may hold several: a library's code frame after a blank line is
 * dropped (the debug log shows it), the rest joined.
 */
export function oneLine(message: string): string {
  const head = message.split(/\n\s*\n/)[0] ?? '';
  return head
    .split('\n')
    .map((line) => line.trim())
    .filter(Boolean)
    .join(' ')
    .replace(/:$/, '');
}

/** Every error the CLI can meet, as the user is told about it. */
export function describeError(error: unknown): CliFailure {
  if (isLiveMemError(error)) {
    const usage = error.code === 'invalid_input' || error.code === 'config_error';
    // The core words a missing confirmation for MCP (its `confirm` argument); here it is --yes.
    const message = oneLine(error.message).replace(CONFIRM_AGAIN, CLI_WORDING.confirm).replace(RESTORE_AS, '--as <new_space_id>');
    // A usage error's message is the instruction itself (which flag, which value, --yes): the
    // table's hint for it ("fix the argument … and run again") would only repeat it to a person.
    const hint = usage ? undefined : hintFor(error.code, error.message, error.data);
    return { message, status: statusOf(error), code: error.code, data: error.data, ...(hint ? { hint } : {}), exitCode: usage ? 2 : 1 };
  }
  if (error instanceof UsageError) return { message: oneLine(error.message), status: 'error', code: 'invalid_input', data: {}, exitCode: 2 };
  if (error instanceof LlmError) return { message: oneLine(error.message), status: 'error', code: 'llm_error', data: {}, exitCode: 1 };
  const system = error instanceof Error ? systemMessage(error as NodeJS.ErrnoException) : undefined;
  if (system !== undefined) {
    const { code, path } = error as NodeJS.ErrnoException;
    return { message: oneLine(system), status: 'error', code: 'system_error', data: { errno: code, ...(path ? { path } : {}) }, exitCode: 1 };
  }
  const message = error instanceof Error ? error.message : String(error);
  return {
    message: `unexpected error: ${oneLine(message)} (LIVE_MEM_LOG_LEVEL=debug shows where)`,
    status: 'error',
    code: 'internal',
    data: {},
    exitCode: 1,
  };
}

/**
 * An error as the user sees it: one line on stderr (`live-mem: …`), or with --json the same JSON
 * shape as the MCP tools' errors on stdout. The stack (and its causes') only with debug logging.
 */
export function renderError(
  error: unknown,
  options: { json?: boolean | undefined; debug?: boolean | undefined },
): { stdout: string; stderr: string; exitCode: 1 | 2 } {
  const failure = describeError(error);
  const hint = failure.hint ? { hint: failure.hint } : {};
  const stdout = options.json ? jsonForTerminal({ status: failure.status, code: failure.code, message: failure.message, ...failure.data, ...hint }) : '';
  let stderr = options.json ? '' : `live-mem: ${failure.message}\n${failure.hint ? `  hint: ${failure.hint}\n` : ''}`;
  if (options.debug) {
    for (let cause: unknown = error, depth = 0; cause !== undefined && depth < 5; cause = (cause as { cause?: unknown }).cause, depth++) {
      stderr += `${depth > 0 ? 'caused by: ' : ''}${cause instanceof Error ? (cause.stack ?? cause.message) : String(cause)}\n`;
    }
  }
  // A message may quote the store (a file name, a model's reply): made visible like any rendered text.
  return { stdout, stderr: forTerminal(stderr), exitCode: failure.exitCode };
}
