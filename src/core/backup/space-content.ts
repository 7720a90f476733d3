import { RESERVED_SUFFIXES, isPlainFileName } from '../../shared/keys.js';
import { hasForeignLineEndings, normalizeLineEndings } from '../../shared/line-endings.js';
import { KEEP_FILE } from '../layout.js';
import { parseNoteName } from '../note-name.js';
import { MAX_LEVEL, SUMMARY_ID } from '../derived/summary-record.js';
import { isStoredBankFilename } from '../validate.js';

/**
 * What a space's content is: the files an export or a backup carries, and the only ones an import
 * or a restore accepts (paths relative to the space's folder, see layout.ts). An allow-list, not a
 * deny-list: everything else in a space's folder is state of the processes working on it (leases,
 * a pending commit, job records, temp files) or data derived from the content (index snapshots),
 * and planted by an archive it would be trusted as the space's own — a pending commit naming
 * another space gets applied there, a lease held until 2099 blocks the space for good. Such an
 * archive was not written by live-mem, so it is refused whole rather than cleaned up.
 */

/** Files of a space that are not content, and what they are (for messages). */
const INTERNAL: Array<[RegExp, string]> = [
  [/^_consolidation\/lock\.json$/, 'a consolidation lease'],
  [/^_consolidation\/pending\.json$/, 'a pending consolidation commit'],
  [/^_consolidation\/claim\.json$/, "an agent's claim on a window of notes"],
  [/^_consolidation\/jobs\//, 'a background job record'],
  [/^_consolidation\//, 'consolidation state'],
  [/^_summaries\/lock\.json$/, 'a summaries lease'],
  [/^_summaries\/jobs\//, 'a background job record'],
  [/^_index\//, 'a search index snapshot'],
  [/^_spend\//, 'the model spend ledger'],
];

const TOP_FILES = new Set(['_meta.json', '_rules.md', '_synthesis.md', KEEP_FILE]);
/** `history/{id}/record.json|notes.json` (a consolidation) or `|preimages.json` (a compaction); ids are `{YYYYMMDDTHHMMSS}-{random}`. */
const HISTORY_FILE = /^history\/[A-Za-z0-9][A-Za-z0-9_-]{0,127}\/(record|notes|preimages)\.json$/;
const SUMMARY_FILE = /^_summaries\/L(\d)\/([^/]+)\.json$/;

/** What a path that is not content is, when it is internal state (undefined otherwise). */
export function internalState(path: string): string | undefined {
  if (RESERVED_SUFFIXES.some((suffix) => path.endsWith(suffix))) return 'a temp file';
  return INTERNAL.find(([pattern]) => pattern.test(path))?.[1];
}

/**
 * Why `path` (relative to a space's folder) is not part of a space's content, as a phrase that
 * follows the path in a message; undefined when it is content.
 */
export function whyNotContent(path: string): string | undefined {
  if (TOP_FILES.has(path) || HISTORY_FILE.test(path)) return undefined;
  const internal = internalState(path);
  if (internal) return `is internal state (${internal}): live-mem exports and backups never carry it`;
  const slash = path.indexOf('/');
  const folder = path.slice(0, slash + 1);
  const name = path.slice(slash + 1);
  if (folder === 'live/') {
    return name === KEEP_FILE || (isPlainFileName(name) && parseNoteName(name) !== null)
      ? undefined
      : 'is not a live note: names are {YYYYMMDDTHHMMSS}_{agent}_{category}_{id}.md';
  }
  if (folder === 'bank/') {
    return name === KEEP_FILE || isStoredBankFilename(name)
      ? undefined
      : "is not a bank file: bank files are plain names ending in .md, without folders or '..'";
  }

  const summary = SUMMARY_FILE.exec(path);
  if (summary) {
    const level = Number(summary[1]);
    if (level >= 1 && level <= MAX_LEVEL && SUMMARY_ID.test(summary[2] as string)) return undefined;
  }
  return 'is not part of a space (_meta.json, _rules.md, _synthesis.md, live/, bank/, history/, _summaries/)';
}

/** Why a `_meta.json` body cannot be a space's metadata, or undefined when it can. */
export function whyNotMeta(body: Buffer): string | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(body.toString('utf8'));
  } catch {
    return 'is not JSON';
  }
  return typeof parsed === 'object' && parsed !== null && !Array.isArray(parsed) ? undefined : 'is not a JSON object';
}

/** The Markdown a space's writers parse into sections: its rules, its synthesis and its bank files. */
export const isSpaceMarkdown = (path: string): boolean =>
  path === '_rules.md' || path === '_synthesis.md' || (path.startsWith('bank/') && path.endsWith('.md'));

/**
 * An imported file as a space stores it: its Markdown (rules, synthesis, bank) with line endings
 * normalised, as every write leaves them (shared/line-endings.ts); any other file as it is.
 */
export function importedBody(path: string, body: Buffer): Buffer {
  if (!isSpaceMarkdown(path)) return body;
  const text = body.toString('utf8');
  return hasForeignLineEndings(text) ? Buffer.from(normalizeLineEndings(text), 'utf8') : body;
}
