import { invalid, LiveMemError } from '../../shared/errors.js';
import { normalizeLineEndings } from '../../shared/line-endings.js';
import { type BankFileState, readBankFiles } from '../bank/bank-files.js';
import type { RevisionInfo } from '../commit/record.js';
import type { CoreContext } from '../context.js';
import { SYNTHESIS_FILE, spaceKeys } from '../layout.js';
import { marker, type Redacted, redactForWrite } from '../redact/redact.js';
import { MAX_RULES_CHARS } from '../bank/rules.js';
import { checkBankFileSize, foldedBankName, isStoredBankFilename, quoteName, validateBankFilename } from '../validate.js';

/**
 * What a correction may put in place, checked in one place whoever asks: a person's write, or a
 * revert putting back what a revision record says was there (a record is input too: an import may
 * have brought it, crafted). A correction's target is a bank file or the synthesis (SYNTHESIS_FILE).
 */

/** The texts a correction may change, as they are now: the bank files and the synthesis. */
export interface Targets {
  bank: Map<string, BankFileState>;
  synthesis: BankFileState | undefined;
}

export async function readTargets(context: CoreContext, spaceId: string): Promise<Targets> {
  const [bank, synthesis] = await Promise.all([readBankFiles(context, spaceId), context.storage.get(spaceKeys(spaceId).synthesis)]);
  return { bank, synthesis: synthesis ? { content: synthesis.body.toString('utf8'), etag: synthesis.etag } : undefined };
}

export const targetOf = (targets: Targets, filename: string): BankFileState | undefined =>
  filename === SYNTHESIS_FILE ? targets.synthesis : targets.bank.get(filename);

/** A name a correction may write: the synthesis, or a bank file name a plan could create (NFC). */
export const targetName = (filename: unknown): string => (filename === SYNTHESIS_FILE ? SYNTHESIS_FILE : validateBankFilename(filename as string));

/**
 * The text a correction writes to `filename`, as it will be stored: with the line endings every
 * writer stores (a Windows file given whole), held to what a note is (no secret, no <private> span:
 * redact/), not empty (bank_delete removes a file), within the size of a bank file (a file an older
 * version left larger may shrink), and a new bank file within the bank's number of files and no
 * case twin of another (one file on macOS and Windows).
 */
export function checkedText(context: CoreContext, targets: Targets, filename: string, text: string): Redacted {
  const redaction = redactForWrite(normalizeLineEndings(text), context.redact, `the new text of ${filename}`);
  if (redaction.text.trim() === '') throw invalid(`${filename}: the new text is empty; to remove the file, use bank_delete`);
  checkBankFileSize(filename, redaction.text, context.limits.bankFileMaxBytes, targetOf(targets, filename)?.content);
  if (filename !== SYNTHESIS_FILE && !targets.bank.has(filename)) {
    const { bank } = targets;
    if (bank.size >= context.consolidation.maxBankFiles) throw invalid(`the bank holds ${bank.size} files, its most (LIVE_MEM_BANK_MAX_FILES)`);
    const twin = [...bank.keys()].find((name) => foldedBankName(name) === foldedBankName(filename));
    if (twin) throw invalid(`${quoteName(filename)} differs from ${quoteName(twin)} only by case: they are one file on macOS and Windows`);
  }
  return redaction;
}

/** Rules as they will be stored: line endings normalised, held to what a note is, not empty, at most MAX_RULES_CHARS. */
export function checkedRules(context: CoreContext, text: string): Redacted {
  const redaction = redactForWrite(normalizeLineEndings(text), context.redact, 'the new rules');
  if (redaction.text.trim() === '') throw invalid('rules are empty');
  if (redaction.text.length > MAX_RULES_CHARS) throw invalid(`rules have ${redaction.text.length} characters; the limit is ${MAX_RULES_CHARS}`);
  return redaction;
}

/** What stands in a pre-image for the lines a correction said were a secret. */
export const SECRET_REMOVED = marker('removed as a secret by a correction');

/** The lines of `before` that `after` no longer has (as whole lines, trimmed: a line kept anywhere is kept), blank ones aside. */
export function removedLines(before: string, after: string): Set<string> {
  const kept = new Set(after.split('\n').map((line) => line.trim()));
  return new Set(
    before
      .split('\n')
      .map((line) => line.trim())
      .filter((line) => line !== '' && !kept.has(line)),
  );
}

/** `text` with each line in `removed` (trimmed) redacted, each run of them one SECRET_REMOVED line. */
export function redactLines(text: string, removed: ReadonlySet<string>): string {
  const lines: string[] = [];
  for (const line of text.split('\n')) {
    if (!removed.has(line.trim())) lines.push(line);
    else if (lines[lines.length - 1] !== SECRET_REMOVED) lines.push(SECRET_REMOVED);
  }
  return lines.join('\n');
}

/**
 * `before` without the lines `after` no longer has: the pre-image of a correction that says it
 * removed a secret. What the person removed is then kept nowhere; the rest of the earlier text is,
 * so `bank_revert` still puts the file back but for the secret.
 */
export const withoutRemovedLines = (before: string, after: string): string => redactLines(before, removedLines(before, after));

/**
 * A revision record's `revision`, checked before a revert trusts it (an import may have brought it,
 * hand-made): its files a list of distinct names with what they were, its rules texts and versions.
 */
export function revisionToRevert(revision: RevisionInfo, rid: string): RevisionInfo {
  const malformed = (why: string) => new LiveMemError('storage_error', `revision ${rid} is malformed (${why}): nothing was reverted`, { damaged: true });
  const files: unknown = revision.files;
  if (!Array.isArray(files)) throw malformed('its files are no list');
  const names = new Set<string>();
  for (const file of files as Array<Record<string, unknown> | null>) {
    if (typeof file?.filename !== 'string' || typeof file.existed !== 'boolean' || !(file.version_after === null || typeof file.version_after === 'string'))
      throw malformed('a file without a name, whether it existed, or its version');
    if (names.has(file.filename)) throw malformed(`it names ${quoteName(file.filename)} twice`);
    if (file.filename !== SYNTHESIS_FILE && !isStoredBankFilename(file.filename))
      throw invalid(`revision ${rid} names ${quoteName(file.filename)}, which is no bank file: nothing was reverted`);
    names.add(file.filename);
  }
  const rules: unknown = revision.rules;
  if (
    rules !== undefined &&
    (typeof rules !== 'object' ||
      rules === null ||
      typeof (rules as Record<string, unknown>).before !== 'string' ||
      typeof (rules as Record<string, unknown>).version_after !== 'string')
  )
    throw malformed('its rules are no text and version');
  return revision;
}
