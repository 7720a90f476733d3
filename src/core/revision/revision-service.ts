import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { type BankDeleteInput, deleteFile } from './delete-file.js';
import { normalizeLineEndings } from './normalize-line-endings.js';
import { type RevertInput, revert } from './revert.js';
import type { BankWriteInput, RevisionDeps, RevisionResult } from './types.js';
import { type RulesUpdateInput, updateRules } from './update-rules.js';
import { writeFile } from './write-file.js';

export type { BankWriteInput, RevisionResult } from './types.js';

/**
 * Corrections by people: a bank file (or the synthesis, named SYNTHESIS_FILE) written or deleted,
 * the rules changed, an earlier correction reverted. Each is a compare-and-swap against the version
 * the caller read (so a consolidation that committed in between is never silently overwritten), runs
 * under the space's lease, and commits through consolidation's one protocol (commit.ts, `kind:
 * 'revision'`), keeping every file's previous text in history: `history_list` shows who did what and
 * why, `history_read` the text before, and `bank_revert` puts it back. A correction that says it
 * removed a secret (`secret`) keeps that previous text without the lines it removed. Each kind is a
 * module of its own (write-file, delete-file, update-rules, normalize-line-endings, revert), all
 * committing through revision-commit.ts; this module only binds them to the core's context and corpus.
 */
export function createRevisionService(context: CoreContext, hooks: Omit<RevisionDeps, 'context'>) {
  const deps: RevisionDeps = { context, ...hooks };
  return {
    /** Writes a bank file (or the synthesis) whole (`content`) or by section edits (`edits`); creates it when it does not exist. */
    write: (caller: Caller, input: BankWriteInput): Promise<RevisionResult> => writeFile(deps, caller, input),
    /** Deletes a bank file (its text kept in history: `bank_revert` brings it back). */
    delete: (caller: Caller, input: BankDeleteInput): Promise<RevisionResult> => deleteFile(deps, caller, input),
    /** Replaces the space's rules (which bank files exist and what each holds; budgets, append-only files). */
    updateRules: (caller: Caller, input: RulesUpdateInput): Promise<RevisionResult> => updateRules(deps, caller, input),
    /** Normalises the line endings of a space's Markdown as a revision (`doctor --fix`); says what it normalised. */
    normalizeLineEndings: (caller: Caller, input: { space_id: string; reason?: string }) => normalizeLineEndings(deps, caller, input),
    /** Puts back what a revision changed, as a new revision, while every file is still as it left it. */
    revert: (caller: Caller, input: RevertInput): Promise<RevisionResult> => revert(deps, caller, input),
  };
}

export type RevisionService = ReturnType<typeof createRevisionService>;
