import { invalid, isLiveMemError } from '../../shared/errors.js';
import { foldedBankName, quoteName, validateBankFilename } from '../validate.js';
import { slicer } from '../../shared/yield.js';
import { applySectionEditsInSlices, sectionAt, type SectionEdit } from '../markdown/edit.js';
import { type Outline, outlineDamage, outlineOf } from '../markdown/outline.js';
import { checkBankFileSize, checkEditCount } from '../validate.js';
import { DEFAULT_LIMITS } from '../context.js';
import type { FileWrite } from './record.js';

/** A rewrite may not leave less than this share of a file (a model that "summarises" a file away). */
export const MIN_KEPT_SHARE = 0.3;
/** Files smaller than this are exempt from the shrink rule: a few lines may legitimately collapse. */
export const SHRINK_RULE_MIN_CHARS = 200;

/** A change to one bank file: written whole, or edited section by section (a consolidation's plan cites notes beside each). */
export type BankChange = { filename: string; action: 'write'; content: string } | { filename: string; action: 'edit'; edits: SectionEdit[] };

/** A section of a file sent in part that the model was not shown whole (consolidation/bank-view.ts). */
export interface ElidedSection {
  /** Heading path, outermost first. */
  path: string[];
  /** Offsets in the file as it was read: [start, end). */
  start: number;
  end: number;
}

export interface BankSnapshot {
  /** Current bank files: content and the etag they were read at. */
  files: Map<string, { content: string; etag: string }>;
  /** Files the rules mark append-only. */
  appendOnly: Set<string>;
  /** Files the rules say are rewritten whole: a rewrite of any other file keeps every heading it has. */
  rewrittenWhole?: Set<string>;
  /** Files the model was sent in part (over their budget), with the sections it did not see whole (consolidation/bank-view.ts). */
  partial?: Map<string, ElidedSection[]>;
}

/** Bounds on the bank's growth: a model reply may not flood it (settable: see ConsolidationSettings). */
export interface BankLimits {
  /** Most files one plan may create. */
  maxNewFiles: number;
  /** Most files the bank may hold once the plan is applied (a plan creating none is never refused by it). */
  maxBankFiles: number;
  /** Largest file a plan may leave, in UTF-8 bytes (LIVE_MEM_BANK_FILE_MAX_BYTES; default 1 MiB). */
  maxFileBytes?: number;
}

export interface AppliedPlan {
  writes: FileWrite[];
  unchanged: number;
  operations: number;
}

/**
 * Validates a whole plan and computes every file's new content in memory; nothing is written. Any
 * refusal (a bad file name, a missing heading, a destructive rewrite, a rewrite or an edit that
 * loses a section it does not delete, an append-only file that shrinks, too many new files, a
 * rewrite of a file sent in part or an edit that would replace or delete what the model was not
 * shown, a file past the size cap, more than MAX_SECTION_EDITS edits) fails the whole plan with
 * `invalid_input`. The edits run in slices of the event loop (shared/yield.ts).
 */
export async function applyPlan(plan: { changes: readonly BankChange[] }, bank: BankSnapshot, limits: BankLimits): Promise<AppliedPlan> {
  checkEditCount(
    plan.changes.reduce((n, change) => n + (change.action === 'edit' ? change.edits.length : 0), 0),
    'the plan',
  );
  const next = new Map<string, string>();
  const resolve = nameResolver(bank);
  const pause = slicer();
  const sent = new Map<string, Outline>();
  /** Files written whole: checked to keep their outline once the cheaper guards passed. */
  const rewrites: Array<{ filename: string; before: string; after: string; whole: boolean }> = [];
  let operations = 0;
  for (const change of plan.changes) {
    const filename = resolve(change.filename);
    const current = next.get(filename) ?? bank.files.get(filename)?.content;
    const elided = bank.files.has(filename) ? bank.partial?.get(filename) : undefined;
    if (change.action === 'write') {
      if (elided) {
        throw invalid(
          `${filename} was sent in part (it is larger than the prompt could show; ${elided.length} sections were elided), so it may not be rewritten whole: ` +
            'change it with section edits (append, prepend or add; replace or delete only a section shown whole)',
        );
      }
      rewrites.push({ filename, before: current ?? '', after: change.content, whole: bank.rewrittenWhole?.has(filename) === true });
      next.set(filename, change.content);
      operations++;
      continue;
    }
    if (current === undefined) throw invalid(`${filename}: cannot edit a file that does not exist (create it with its whole content)`);
    if (elided) {
      const outline = sent.get(filename) ?? outlineOf((bank.files.get(filename) as { content: string }).content);
      sent.set(filename, outline);
      for (const edit of change.edits) checkSeen(filename, outline, edit, elided);
    }
    next.set(filename, await applySectionEditsInSlices(current, change.edits, filename, pause));
    operations += change.edits.length;
  }

  const writes: FileWrite[] = [];
  for (const [filename, content] of next) {
    const before = bank.files.get(filename);
    if (content.trim() === '') throw invalid(`${filename}: the plan leaves it empty; refused`);
    if (before && content === before.content) continue;
    checkBankFileSize(filename, content, limits.maxFileBytes ?? DEFAULT_LIMITS.bankFileMaxBytes, before?.content);
    if (before) {
      checkShrink(filename, before.content, content);
      if (bank.appendOnly.has(filename)) checkOnlyGrows(filename, before.content, content);
    }
    writes.push({ filename, content, expectedEtag: before?.etag ?? null, kind: before ? 'updated' : 'created' });
  }
  for (const rewrite of rewrites) checkOutlineKept(rewrite);
  checkGrowth(writes.filter((w) => w.kind === 'created').length, bank.files.size, limits);
  const touched = new Set(writes.map((w) => w.filename));
  const unchanged = [...bank.files.keys()].filter((name) => !touched.has(name)).length;
  return { writes, unchanged, operations };
}

function checkedName(filename: string): string {
  try {
    return validateBankFilename(filename);
  } catch (error) {
    if (isLiveMemError(error)) throw invalid(`the plan names an unsafe file ${quoteName(filename)}: ${error.message}`);
    throw error;
  }
}

/**
 * Maps each name of the plan to the file it means. A name is valid (see validateBankFilename) and
 * taken in NFC; one equal in NFC to an existing file is that file (stored decomposed, say). A new
 * name equal to another file but for case (`Progress.md` beside `progress.md`) is refused: on macOS
 * and Windows the two are one file, and the bank would differ from one system to another.
 */
function nameResolver(bank: BankSnapshot): (raw: string) => string {
  const known = new Map<string, string>();
  for (const name of bank.files.keys()) known.set(foldedBankName(name), name);
  const existing = new Map([...bank.files.keys()].map((name) => [name.normalize('NFC'), name]));
  return (raw) => {
    const name = checkedName(raw);
    const stored = existing.get(name);
    if (stored !== undefined) return stored;
    const other = known.get(foldedBankName(name));
    if (other !== undefined && other !== name) {
      throw invalid(`the plan names ${JSON.stringify(name)} beside ${JSON.stringify(other)}: they differ only by case, and are one file on macOS and Windows`);
    }
    known.set(foldedBankName(name), name);
    return name;
  };
}

/**
 * A `replace` or `delete` on a file sent in part must reach only sections the model saw whole. The
 * heading is looked up in the file as it was sent: a heading the plan adds itself holds nothing unseen.
 */
function checkSeen(filename: string, sent: Outline, edit: SectionEdit, elided: readonly ElidedSection[]): void {
  if (edit.op !== 'replace' && edit.op !== 'delete') return;
  const span = sectionAt(sent.headings, edit.path);
  if (!span) return;
  const unseen = elided.filter((section) => section.start >= span.start && section.start < span.end);
  if (unseen.length === 0) return;
  const names = unseen.slice(0, 3).map((section) => JSON.stringify(section.path.join(' > ')));
  throw invalid(
    `${filename}: cannot ${edit.op} section ${JSON.stringify(edit.path.join(' > '))}: it holds ${unseen.length} section(s) you were not shown whole ` +
      `(${names.join(', ')}${unseen.length > 3 ? ', …' : ''}; the file was sent in part): ` +
      `append or add to it instead, or ${edit.op} only a section shown whole`,
  );
}

function checkGrowth(created: number, existing: number, limits: BankLimits): void {
  if (created > limits.maxNewFiles) {
    throw invalid(`the plan creates ${created} bank files; one consolidation may create at most ${limits.maxNewFiles} (LIVE_MEM_CONSOLIDATION_MAX_NEW_FILES)`);
  }
  if (created > 0 && existing + created > limits.maxBankFiles) {
    throw invalid(
      `the plan creates ${created} bank files beside the ${existing} there are; the bank may hold at most ${limits.maxBankFiles} (LIVE_MEM_BANK_MAX_FILES)`,
    );
  }
}

/**
 * A file written whole keeps every heading it had (by text: a section may move), unless the rules
 * say it is rewritten whole; and no write leaves a code fence open at its end. A rewrite that drops
 * a section, or whose code fence never closes and turns the sections after it into text, is
 * refused: sections go with a `delete` edit.
 */
function checkOutlineKept({ filename, before, after, whole }: { filename: string; before: string; after: string; whole: boolean }): void {
  const was = outlineOf(before);
  const damage = outlineDamage(was, outlineOf(after), whole ? was.headings : []);
  if (damage)
    throw invalid(
      `${filename}: written whole, it ${damage}: keep every heading in a rewrite (remove a section with a "delete" edit), and close every code fence`,
    );
}

function checkShrink(filename: string, before: string, after: string): void {
  if (before.length >= SHRINK_RULE_MIN_CHARS && after.length < before.length * MIN_KEPT_SHARE) {
    const lost = Math.round((1 - after.length / before.length) * 100);
    throw invalid(
      `${filename}: the plan shrinks it by ${lost}% (${before.length} → ${after.length} characters); more than ${Math.round((1 - MIN_KEPT_SHARE) * 100)}% is refused`,
    );
  }
}

/** Append-only: every non-empty line of the old file is still there, in the same order. */
function checkOnlyGrows(filename: string, before: string, after: string): void {
  const lines = after.split('\n');
  let at = 0;
  for (const line of before.split('\n')) {
    if (line.trim() === '') continue;
    while (at < lines.length && lines[at] !== line) at++;
    if (at === lines.length) throw invalid(`${filename} is append-only (rules), but the plan removes or changes ${JSON.stringify(line.slice(0, 80))}`);
    at++;
  }
}
