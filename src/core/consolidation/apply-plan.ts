import { invalid, isLiveMemError } from '../../shared/errors.js';
import { foldedBankName, quoteName, validateBankFilename } from '../validate.js';
import { applySectionEdit } from './markdown.js';
import type { Plan } from './plan.js';

/** A rewrite may not leave less than this share of a file (a model that "summarises" a file away). */
export const MIN_KEPT_SHARE = 0.3;
/** Files smaller than this are exempt from the shrink rule: a few lines may legitimately collapse. */
export const SHRINK_RULE_MIN_CHARS = 200;

export interface BankSnapshot {
  /** Current bank files: content and the etag they were read at. */
  files: Map<string, { content: string; etag: string }>;
  /** Files the rules mark append-only. */
  appendOnly: Set<string>;
}

export interface FileWrite {
  filename: string;
  content: string;
  /** The etag read before the plan; null for a new file. Writes are compare-and-swap against it. */
  expectedEtag: string | null;
  kind: 'created' | 'updated';
}

/** Bounds on the bank's growth: a model reply may not flood it (settable: see ConsolidationSettings). */
export interface BankLimits {
  /** Most files one plan may create. */
  maxNewFiles: number;
  /** Most files the bank may hold once the plan is applied (a plan creating none is never refused by it). */
  maxBankFiles: number;
}

export interface AppliedPlan {
  writes: FileWrite[];
  unchanged: number;
  operations: number;
}

/**
 * Validates a whole plan and computes every file's new content in memory; nothing is written. Any
 * refusal (a bad file name, a missing heading, a destructive rewrite, an append-only file that
 * shrinks, too many new files) fails the whole plan with `invalid_input`.
 */
export function applyPlan(plan: Plan, bank: BankSnapshot, limits: BankLimits): AppliedPlan {
  const next = new Map<string, string>();
  const resolve = nameResolver(bank);
  let operations = 0;
  for (const change of plan.changes) {
    const filename = resolve(change.filename);
    const current = next.get(filename) ?? bank.files.get(filename)?.content;
    if (change.action === 'write') {
      next.set(filename, change.content);
      operations++;
      continue;
    }
    if (current === undefined) throw invalid(`${filename}: cannot edit a file that does not exist (create it with its whole content)`);
    let content = current;
    for (const edit of change.edits) {
      content = applySectionEdit(content, edit, filename);
      operations++;
    }
    next.set(filename, content);
  }

  const writes: FileWrite[] = [];
  for (const [filename, content] of next) {
    const before = bank.files.get(filename);
    if (content.trim() === '') throw invalid(`${filename}: the plan leaves it empty; refused`);
    if (before && content === before.content) continue;
    if (before) {
      checkShrink(filename, before.content, content);
      if (bank.appendOnly.has(filename)) checkOnlyGrows(filename, before.content, content);
    }
    writes.push({ filename, content, expectedEtag: before?.etag ?? null, kind: before ? 'updated' : 'created' });
  }
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
