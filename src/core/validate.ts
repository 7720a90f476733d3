import { invalid } from '../shared/errors.js';
import { isPlainFileName, MAX_NAME_BYTES, utf8Bytes } from '../shared/keys.js';

export const SPACE_ID_PATTERN = /^[a-zA-Z0-9][a-zA-Z0-9_-]{0,63}$/;

export const CATEGORIES = ['observation', 'decision', 'todo', 'insight', 'question', 'progress', 'issue'] as const;
export type Category = (typeof CATEGORIES)[number];

export function validateSpaceId(spaceId: string): string {
  if (typeof spaceId !== 'string' || !SPACE_ID_PATTERN.test(spaceId)) {
    throw invalid(`invalid space_id ${JSON.stringify(spaceId)}: 1-64 characters, letters, digits, '_' or '-', starting with a letter or digit`);
  }
  return spaceId;
}

/**
 * What a caller is told about a category that is none of CATEGORIES (by the core, and by the MCP
 * schema first): a missing one is said to be required, not "unknown category undefined".
 */
export const unknownCategory = (category: unknown): string =>
  `${category === undefined || category === null ? 'category is required' : `unknown category ${JSON.stringify(category)}`}: use one of ${CATEGORIES.join(', ')}`;

export function validateCategory(category: string): Category {
  if (!(CATEGORIES as readonly string[]).includes(category)) throw invalid(unknownCategory(category));
  return category as Category;
}

/**
 * The synthesis, as corrections name it: a bank file name no bank file may take, so `bank_read`,
 * `bank_write`, `bank_delete` and `bank_revert` correct it as they do a bank file. It is the
 * synthesis's own file name (`{space}/_synthesis.md`, beside the bank, as the Python server keeps
 * it), and the ref search hits give it.
 */
export const SYNTHESIS_FILE = '_synthesis.md';

/** Names Windows reserves for devices, whatever the extension: `CON.md` cannot be created there. */
const WINDOWS_DEVICE = /^(con|prn|aux|nul|com[1-9\u00b9\u00b2\u00b3]|lpt[1-9\u00b9\u00b2\u00b3])\s*(\.|$)/i;
/** Characters Windows refuses in a name (besides the controls every name is refused for). */
const WINDOWS_FORBIDDEN = /[<>:"/\\|?*]/;

/**
 * A bank file name, returned in Unicode NFC: a plain `name.md` that every driver and every system
 * can hold, so that a name accepted once can be written ever after.
 *   - one segment: no folders, no '..', no control or invisible characters;
 *   - at most MAX_NAME_BYTES UTF-8 bytes, leaving room for the drivers' temp names (255 bytes is the
 *     file systems' limit; the longest key holding a bank file, its backup copy
 *     `_backups/{space}/{stamp}/files/bank/{name}`, stays far below S3's 1024 bytes);
 *   - nothing Windows cannot hold: device names (CON, NUL, COM1…), `<>:"/\|?*`, a trailing dot or space;
 *   - NFC, so that `café.md` typed composed or decomposed is one file (macOS would make them one anyway).
 */
export function validateBankFilename(filename: string): string {
  const refuse = (why: string) => invalid(`invalid bank filename ${quoteName(filename)}: ${why}`);
  if (typeof filename !== 'string') throw refuse('not a string');
  const name = filename.normalize('NFC');
  if (!isPlainFileName(name) || !name.endsWith('.md') || name.length < 4) throw refuse("use a plain name ending in .md, without folders or '..'");
  const bytes = utf8Bytes(name);
  if (bytes > MAX_NAME_BYTES) throw refuse(`${bytes} bytes in UTF-8, more than the ${MAX_NAME_BYTES} a file name may have here`);
  if (WINDOWS_DEVICE.test(name)) throw refuse('a device name on Windows (CON, PRN, AUX, NUL, COM1-9, LPT1-9)');
  if (WINDOWS_FORBIDDEN.test(name)) throw refuse('Windows refuses the characters < > : " / \\ | ? *');
  if (/[. ]$/.test(name)) throw refuse('Windows refuses a name ending in a dot or a space');
  if (name === SYNTHESIS_FILE) throw refuse('it names the synthesis, which is no bank file');
  return name;
}

/**
 * Whether a file stored in a bank folder is a bank file: any plain `*.md` name. Looser than
 * validateBankFilename on purpose: a name an older version or the Python server stored (`CON.md`, a
 * long one) is still the user's content, listed, backed up and exported; only new names are held to
 * the strict rules.
 */
export const isStoredBankFilename = (name: string): boolean => name.endsWith('.md') && isPlainFileName(name);

/** A name for a message: quoted, and cut if long (a refused name may be thousands of characters). */
export const quoteName = (name: unknown): string => {
  const text = String(name);
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 60)}…` : text);
};

/**
 * The key two names share on a case-insensitive, normalisation-insensitive file system (macOS,
 * Windows): names equal here are one file there.
 */
export const foldedBankName = (filename: string): string => filename.normalize('NFC').toLowerCase();

/**
 * Most section edits one call may carry (a plan's, a bank_write's): each costs what it writes
 * (markdown/edit.ts), and a list this long is no consolidation, only a flood.
 */
export const MAX_SECTION_EDITS = 10_000;

/** Refuses a list of section edits longer than MAX_SECTION_EDITS, before any of them is applied. */
export function checkEditCount(count: number, what: string): void {
  if (count > MAX_SECTION_EDITS) throw invalid(`${what} carries ${count} section edits; one call may carry at most ${MAX_SECTION_EDITS}`);
}

/**
 * A bank file's (or the synthesis's) size once written, against LIVE_MEM_BANK_FILE_MAX_BYTES: every
 * writer (a plan, bank_write, an import) is held to it, so no file grows past what a consolidation's
 * prompt, a search or an export handles in a moment. A file an older version left larger may still
 * be rewritten as long as it does not grow.
 */
export function checkBankFileSize(filename: string, content: string, maxBytes: number, before?: string): void {
  const bytes = utf8Bytes(content);
  if (bytes <= maxBytes) return;
  if (before !== undefined && bytes <= utf8Bytes(before)) return;
  throw invalid(
    `${filename} would hold ${bytes} bytes; a bank file may hold at most ${maxBytes} (LIVE_MEM_BANK_FILE_MAX_BYTES): ` +
      'split it into files by topic, or move what is done into an archive file',
    { filename, bytes, max_bytes: maxBytes },
  );
}

/**
 * Longest search query accepted, in characters. Past a few sentences a query adds nothing to a
 * ranking, and every character is tokenised, stemmed and matched against the index: a 4 MB query
 * held the event loop for seconds, stalling every other request of the process.
 */
export const MAX_QUERY_CHARS = 4_000;

/** A free-text search query, trimmed; empty or too long is refused before any work. */
export function validateQuery(query: unknown, options: { optional?: boolean } = {}): string {
  const text = typeof query === 'string' ? query.trim() : '';
  if (text.length === 0 && !options.optional) throw invalid('query is empty');
  if (text.length > MAX_QUERY_CHARS) {
    throw invalid(`query is too long (${text.length} characters): at most ${MAX_QUERY_CHARS}; search for the few words that matter`, {
      max_chars: MAX_QUERY_CHARS,
    });
  }
  return text;
}

export function validateLimit(limit: number, max: number): number {
  if (!Number.isInteger(limit) || limit < 1 || limit > max) throw invalid(`limit must be an integer from 1 to ${max}, got ${limit}`);
  return limit;
}

/** Parses an ISO 8601 date-time argument called `name`; an empty string means "no bound". */
export function parseDateTime(value: string, name: string): Date | undefined {
  if (value === '') return undefined;
  const time = Date.parse(value);
  if (typeof value !== 'string' || !/^\d{4}-\d{2}-\d{2}/.test(value) || Number.isNaN(time)) {
    throw invalid(`invalid ${name} ${JSON.stringify(value)}: use an ISO 8601 date-time such as 2026-02-20T18:00:00Z`);
  }
  return new Date(time);
}

export const parseSince = (since: string): Date | undefined => parseDateTime(since, 'since');

/** Longest `reason` a person may give a correction or a forget (kept in history). */
const MAX_REASON_CHARS = 1_000;

/** A person's `reason` for a correction or a forget: trimmed, null when empty, refused past MAX_REASON_CHARS. */
export function validateReason(reason: string | undefined): string | null {
  const text = reason?.trim() ?? '';
  if (text.length > MAX_REASON_CHARS) throw invalid(`reason has ${text.length} characters; at most ${MAX_REASON_CHARS}`);
  return text === '' ? null : text;
}
