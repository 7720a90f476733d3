import type { LlmCalls } from '../../llm/call.js';
import { LlmError, type LlmClient } from '../../llm/types.js';
import { isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { readBankFiles } from '../bank/bank-files.js';
import { type BankBudget, measureTokens } from '../bank/budget.js';
import type { Caller } from '../caller.js';
import { applyCommit, commitAndApply } from '../commit/commit.js';
import { type CommitRecord, type FileWrite, noteFreeRecord, type Preimage } from '../commit/record.js';
import { lockSpace, type SpaceLock } from '../commit/space-lock.js';
import type { CoreContext } from '../context.js';
import { requireModel } from '../model.js';
import type { SectionRetention } from '../retention/record.js';
import { meteredCalls } from '../spend/meter.js';
import { digestFile } from './digest-file.js';
import { readBudget } from './over-budget.js';
import { splitSections } from './sections.js';
import type { CompactedFile, CompactInput, CompactionHooks, CompactionResult, CompactOptions } from './types.js';

/**
 * A compaction run under the space's lease (compaction-service.ts checks the call first): the files
 * over budget looked at again, each digested by the model (digest-file.ts), and the accepted ones
 * committed together through consolidation's one protocol (commit.ts), each rewritten section's
 * pre-image kept in history. A file a guard refuses is left as it was, and the run is then never `ok`.
 */

/** The bank as the run found it, and the files to compact (none: `result.message` says why). */
async function selectFiles(context: CoreContext, spaceId: string, input: CompactInput, result: CompactionResult) {
  const bank = await readBankFiles(context, spaceId);
  const budget = await readBudget(context, spaceId, bank);
  const over = (filename: string) => measureTokens(bank.get(filename)?.content ?? '') > budget.fileTokens(filename);
  let names = [...bank.keys()].filter(over).sort();
  if (input.file !== undefined) {
    const file = bank.get(input.file);
    if (!file)
      throw new LiveMemError('not_found', `bank file '${input.file}' does not exist in space '${spaceId}'`, { space_id: spaceId, filename: input.file });
    names = over(input.file) ? [input.file] : [];
    if (names.length === 0) {
      result.message = `${input.file} is ${measureTokens(file.content)} tokens, within its budget of ${budget.fileTokens(input.file)}: nothing to compact`;
    }
  }
  return { bank, budget, names };
}

/** What the files' digests give the commit, and what refused the others. */
interface Digested {
  writes: FileWrite[];
  preimages: Preimage[];
  retention: SectionRetention[];
  refusals: string[];
  refusalCode: string | undefined;
}

/** Digests each of `names`, adding an entry per file to `result`; a refused file is recorded, not thrown (unless the error is no refusal). */
async function digestFiles(
  context: CoreContext,
  calls: LlmCalls,
  model: LlmClient,
  files: { bank: ReadonlyMap<string, { content: string; etag: string }>; budget: BankBudget; names: string[] },
  result: CompactionResult,
): Promise<Digested> {
  const digested: Digested = { writes: [], preimages: [], retention: [], refusals: [], refusalCode: undefined };
  for (const filename of files.names) {
    const stored = files.bank.get(filename) as { content: string; etag: string };
    const file = splitSections(filename, stored.content, files.budget.fileTokens(filename));
    const entry: CompactedFile = { filename, tokens_before: file.tokens, tokens_after: file.tokens, budget_tokens: file.budget, sections_digested: 0 };
    result.files.push(entry);
    try {
      const checked = await digestFile(context, calls, model, file);
      entry.tokens_after = checked.tokens;
      entry.sections_digested = checked.digested.length;
      digested.writes.push({ filename, content: checked.content, expectedEtag: stored.etag, kind: 'updated' });
      digested.retention.push(...checked.retention);
      const lost = checked.retention.filter((section) => section.status !== 'retained');
      if (lost.length > 0) entry.retention = lost;
      for (const { section } of checked.digested) digested.preimages.push({ filename, path: section.path, content: section.text });
    } catch (error) {
      if (!isLiveMemError(error) && !(error instanceof LlmError)) throw error;
      entry.refused = error.message;
      digested.refusals.push(error.message);
      digested.refusalCode ??= isLiveMemError(error) ? error.code : 'llm_error';
    }
  }
  return digested;
}

/** Commits the accepted digests under `held`; `pending.id` names the record while it is written and not yet applied. */
async function commitDigests(
  context: CoreContext,
  caller: Caller,
  spaceId: string,
  model: LlmClient,
  held: SpaceLock,
  { writes, preimages, retention }: Digested,
  pending: { id?: string | undefined },
): Promise<string> {
  const record: CommitRecord = {
    ...noteFreeRecord(context, spaceId, 'compaction'),
    writes,
    metrics: { files: writes.length, sections: preimages.length, by: caller.agent, model: model.label },
    preimages,
    retention,
  };
  await commitAndApply(
    context,
    held,
    record,
    () => applyCommit(context, record),
    (id) => {
      pending.id = id;
    },
  );
  return record.id;
}

/** Fills the result's failure fields from `error`; an error that is neither the core's nor the model's is logged with its stack. */
function recordFailure(context: CoreContext, spaceId: string, result: CompactionResult, error: unknown, committed: string | undefined): void {
  result.status = 'error';
  const outcome = committed
    ? `; compaction ${committed} is committed but not yet applied: the next consolidation, compaction, backup or export of '${spaceId}' finishes it`
    : '; nothing was changed';
  result.message = `${error instanceof Error ? error.message : String(error)}${outcome}`;
  if (committed) result.pending = committed;
  if (isLiveMemError(error)) result.code = error.code;
  else if (error instanceof LlmError) result.code = 'llm_error';
  else context.logger.error('compaction failed', { error: String((error as Error)?.stack ?? error) });
}

/** `llm` may be absent when nothing looked over budget (the run then only finishes what a killed one left). */
export async function runCompaction(
  context: CoreContext,
  hooks: CompactionHooks,
  caller: Caller,
  spaceId: string,
  input: CompactInput,
  llm: LlmClient | undefined,
  options: CompactOptions,
): Promise<CompactionResult> {
  const dryRun = input.dry_run === true;
  const result: CompactionResult = { status: 'ok', space_id: spaceId, files: [], dry_run: dryRun, llm_tokens_used: 0 };
  const held = await lockSpace(context, spaceId, caller, 'compaction', options.waitMs !== undefined ? { waitMs: options.waitMs } : {});
  let calls: LlmCalls | undefined;
  const pending: { id?: string | undefined } = {};
  try {
    if (held.recovered) result.recovered = held.recovered;
    if (held.warnings.length > 0) result.warnings = [...held.warnings];
    const files = await selectFiles(context, spaceId, input, result);
    if (files.names.length === 0) {
      result.message ??= 'every bank file is within its budget: nothing to compact';
      return result;
    }
    const model = requireModel(context, llm, 'compaction');
    calls = meteredCalls(context, model, { spaceId, purpose: 'compaction' });
    const digested = await digestFiles(context, calls, model, files, result);
    const { writes, refusals } = digested;
    if (writes.length > 0 && !dryRun) {
      result.compaction_id = await commitDigests(context, caller, spaceId, model, held, digested, pending);
      pending.id = undefined;
      hooks.onCommitted?.(
        spaceId,
        writes.map((w) => ({ filename: w.filename, kind: w.kind })),
      );
    }
    if (refusals.length > 0) {
      result.status = writes.length > 0 ? 'partial' : 'error';
      result.code = digested.refusalCode;
      result.message = `${refusals.join('; ')}; ${writes.length > 0 ? 'the other files were compacted' : 'nothing was changed'}`;
    } else if (dryRun) {
      result.message = 'dry run: nothing was written';
    }
  } catch (error) {
    recordFailure(context, spaceId, result, error, pending.id);
  } finally {
    result.llm_tokens_used = calls ? calls.usage.promptTokens + calls.usage.completionTokens : 0;
    await held.release();
  }
  context.logger.info(`compaction of '${spaceId}': ${result.status}`, { files: result.files.length, message: result.message });
  return result;
}
