import { invalid, isLiveMemError, LiveMemError } from '../../shared/errors.js';
import type { LlmCalls } from '../../llm/call.js';
import { meteredCalls } from '../spend/meter.js';
import { type ChatMessage, LlmError, type LlmClient } from '../../llm/types.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { requireSpace } from '../space-meta.js';
import { validateBankFilename, validateSpaceId } from '../validate.js';
import { bankBudget, measureTokens, withinBank, type BankBudget } from '../bank/budget.js';
import { parseBankRules } from '../bank/rules.js';
import type { FileWrite } from '../commit/record.js';
import { applyCommit, writeCommit } from '../commit/commit.js';
import { historyId, type CommitRecord, type Preimage } from '../commit/record.js';
import { ReplyFormatError } from '../../llm/reply-json.js';
import { lockSpace } from '../commit/space-lock.js';
import type { ChangedFile } from '../events.js';
import { checkDigests, targetTokens, type Digest } from './guards.js';
import { compactionMessages, parseDigests, retryReminder } from './prompt.js';
import { newNonce, stripFenceEcho } from '../prompt-fence.js';
import { splitSections, type SplitFile } from './sections.js';
import { requireModel } from '../model.js';
import type { SectionRetention } from '../retention/record.js';
import { RETENTION_GUARD, retainedReminder } from './retention-guard.js';
import { isoSeconds } from '../../shared/time.js';
import { readBankFiles } from '../bank/bank-files.js';

export interface CompactInput {
  space_id: string;
  /** Only this file (compacted only if over its budget). */
  file?: string;
  /** Ask the model and check its digests, but write nothing. */
  dry_run?: boolean;
}

export interface CompactOptions {
  /** A model for this call only (e.g. MCP sampling), used when none is configured. */
  llm?: LlmClient;
  /** How long to wait for the space's lease (default: not at all: `conflict`). */
  waitMs?: number;
}

export interface CompactedFile {
  filename: string;
  tokens_before: number;
  tokens_after: number;
  budget_tokens: number;
  sections_digested: number;
  /** Why this file was left as it was: a guard refused the model's digests, or the model failed. */
  refused?: string;
  /** Sections whose digest does not keep every item the section held (core/retention); the pre-image keeps them. */
  retention?: SectionRetention[];
}

export interface CompactionResult {
  status: 'ok' | 'partial' | 'error';
  space_id: string;
  files: CompactedFile[];
  compaction_id?: string;
  dry_run: boolean;
  llm_tokens_used: number;
  message?: string;
  [field: string]: unknown;
}

/**
 * Compaction: a bank file over its budget has its older sections rewritten as digests by the model,
 * under guards checked before anything is written (guards.ts), and commits through consolidation's
 * one protocol (commit.ts) under the space's lease, keeping each rewritten section's pre-image in
 * history. A file whose digests a guard refuses is left exactly as it was; the run says so and is
 * never `ok`.
 */
export function createCompactionService(context: CoreContext, hooks: { onCommitted?: (spaceId: string, files: ChangedFile[]) => void } = {}) {
  const { storage } = context;

  const readBank = (spaceId: string) => readBankFiles(context, spaceId);

  /** Each file's budget, lowered for the largest files while the bank as a whole is over its own (budget.ts). */
  const readBudget = async (spaceId: string, bank: ReadonlyMap<string, { content: string }>): Promise<BankBudget> => {
    const rules = (await storage.get(spaceKeys(spaceId).rules))?.body.toString('utf8') ?? '';
    const sizes = new Map([...bank].map(([filename, file]) => [filename, measureTokens(file.content)]));
    return withinBank(bankBudget(parseBankRules(rules), context.budgets), sizes);
  };

  /** Asks for digests; a cut or malformed reply gets one more chance with a reminder. `after`: what was said since the prompt. */
  const askDigests = async (calls: LlmCalls, file: SplitFile, nonce: string, after: ChatMessage[] = []): Promise<Digest[]> => {
    const messages = [...compactionMessages(file, targetTokens(file.budget), nonce), ...after];
    let problem = '';
    for (let attempt = 1; attempt <= 2; attempt++) {
      const response = await calls.chat({ messages: attempt === 1 ? messages : [...messages, retryReminder(problem, nonce)], json: true });
      try {
        if (response.truncated) throw new ReplyFormatError('the reply was cut by the token limit');
        // The prompt's own fence lines copied into the reply are an echo: dropped (prompt-fence.ts).
        return parseDigests(stripFenceEcho(response.text, nonce));
      } catch (error) {
        if (!(error instanceof ReplyFormatError)) throw error;
        problem = error.message;
      }
    }
    throw new LiveMemError('llm_error', `the model returned no usable digests twice (${problem})`);
  };

  /** One file: its digests, checked. Throws what refuses them. */
  const compactFile = async (calls: LlmCalls, llm: LlmClient, file: SplitFile) => {
    if (file.sections.length === 0) throw invalid(`${file.filename} has no section under a heading to digest`);
    const promptTokens = compactionMessages(file, 0).reduce((sum, m) => sum + measureTokens(m.content), 0);
    if (promptTokens + llm.maxOutputTokens > llm.contextWindow) {
      throw invalid(
        `${file.filename} (${file.tokens} tokens) does not fit the model's context in one request (${llm.contextWindow} tokens, ${llm.maxOutputTokens} reserved for the reply): raise LIVE_MEM_LLM_CONTEXT_WINDOW or use a model with a larger one`,
      );
    }
    const nonce = newNonce();
    const guards = { nonce, redact: context.redact, retention: context.retention };
    try {
      return checkDigests(file, await askDigests(calls, file, nonce), guards);
    } catch (error) {
      // Digests that drop facts the file had room for are asked for once more (LIVE_MEM_RETENTION=retry), told which.
      if (context.retention !== 'retry' || !isLiveMemError(error, 'invalid_input') || error.data.guard !== RETENTION_GUARD) throw error;
      return checkDigests(file, await askDigests(calls, file, nonce, [retainedReminder(error.message, nonce)]), guards);
    }
  };

  /** `llm` may be absent when nothing looked over budget (the run then only finishes what a killed one left). */
  const run = async (caller: Caller, spaceId: string, input: CompactInput, llm: LlmClient | undefined, options: CompactOptions): Promise<CompactionResult> => {
    const dryRun = input.dry_run === true;
    const result: CompactionResult = { status: 'ok', space_id: spaceId, files: [], dry_run: dryRun, llm_tokens_used: 0 };
    const held = await lockSpace(context, spaceId, caller, 'compaction', options.waitMs !== undefined ? { waitMs: options.waitMs } : {});
    let calls: LlmCalls | undefined;
    let committed: string | undefined;
    try {
      if (held.recovered) result.recovered = held.recovered;
      if (held.warnings.length > 0) result.warnings = [...held.warnings];
      const bank = await readBank(spaceId);
      const budget = await readBudget(spaceId, bank);
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
      if (names.length === 0) {
        result.message ??= 'every bank file is within its budget: nothing to compact';
        return result;
      }

      const model = requireModel(context, llm, 'compaction');
      calls = meteredCalls(context, model, { spaceId, purpose: 'compaction' });
      const writes: FileWrite[] = [];
      const preimages: Preimage[] = [];
      const retention: SectionRetention[] = [];
      const refusals: string[] = [];
      let refusalCode: string | undefined;
      for (const filename of names) {
        const stored = bank.get(filename) as { content: string; etag: string };
        const file = splitSections(filename, stored.content, budget.fileTokens(filename));
        const entry: CompactedFile = { filename, tokens_before: file.tokens, tokens_after: file.tokens, budget_tokens: file.budget, sections_digested: 0 };
        result.files.push(entry);
        try {
          const checked = await compactFile(calls, model, file);
          entry.tokens_after = checked.tokens;
          entry.sections_digested = checked.digested.length;
          writes.push({ filename, content: checked.content, expectedEtag: stored.etag, kind: 'updated' });
          retention.push(...checked.retention);
          const lost = checked.retention.filter((section) => section.status !== 'retained');
          if (lost.length > 0) entry.retention = lost;
          for (const { section } of checked.digested) preimages.push({ filename, path: section.path, content: section.text });
        } catch (error) {
          if (!isLiveMemError(error) && !(error instanceof LlmError)) throw error;
          entry.refused = error.message;
          refusals.push(error.message);
          refusalCode ??= isLiveMemError(error) ? error.code : 'llm_error';
        }
      }

      if (writes.length > 0 && !dryRun) {
        const now = context.clock();
        const record: CommitRecord = {
          id: historyId(context, now),
          space_id: spaceId,
          kind: 'compaction',
          committed_at: isoSeconds(now),
          notes: [],
          time_range: { oldest: null, newest: null },
          writes,
          metrics: { files: writes.length, sections: preimages.length, by: caller.agent, model: model.label },
          preimages,
          retention,
        };
        await context.fault('before-commit');
        await held.stillHeld();
        await writeCommit(context, record);
        committed = record.id;
        await context.fault('after-commit');
        await applyCommit(context, record);
        result.compaction_id = record.id;
        committed = undefined;
        hooks.onCommitted?.(
          spaceId,
          writes.map((w) => ({ filename: w.filename, kind: w.kind })),
        );
      }
      if (refusals.length > 0) {
        result.status = writes.length > 0 ? 'partial' : 'error';
        result.code = refusalCode;
        result.message = `${refusals.join('; ')}; ${writes.length > 0 ? 'the other files were compacted' : 'nothing was changed'}`;
      } else if (dryRun) {
        result.message = 'dry run: nothing was written';
      }
    } catch (error) {
      result.status = 'error';
      const outcome = committed
        ? `; compaction ${committed} is committed but not yet applied: the next consolidation, compaction, backup or export of '${spaceId}' finishes it`
        : '; nothing was changed';
      result.message = `${error instanceof Error ? error.message : String(error)}${outcome}`;
      if (committed) result.pending = committed;
      if (isLiveMemError(error)) result.code = error.code;
      else if (error instanceof LlmError) result.code = 'llm_error';
      else context.logger.error('compaction failed', { error: String((error as Error)?.stack ?? error) });
    } finally {
      result.llm_tokens_used = calls ? calls.usage.promptTokens + calls.usage.completionTokens : 0;
      await held.release();
    }
    context.logger.info(`compaction of '${spaceId}': ${result.status}`, { files: result.files.length, message: result.message });
    return result;
  };

  /** Which of `filenames` (default: every bank file) are over their budget now, the bank's own budget counted. */
  const overBudget = async (spaceId: string, filenames?: readonly string[]): Promise<string[]> => {
    const bank = await readBank(spaceId);
    const budget = await readBudget(spaceId, bank);
    return (filenames ?? [...bank.keys()]).filter((filename) => measureTokens(bank.get(filename)?.content ?? '') > budget.fileTokens(filename));
  };

  return {
    /** Compacts the space's files over their budget (or the one named); `conflict` if its lease is held. */
    async compact(caller: Caller, input: CompactInput, options: CompactOptions = {}): Promise<CompactionResult> {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'write', spaceId);
      const file = input.file === undefined || input.file === '' ? undefined : validateBankFilename(input.file);
      await requireSpace(context, spaceId);
      if (file !== undefined && !(await storage.stat(spaceKeys(spaceId).bankFile(file)))) {
        throw new LiveMemError('not_found', `bank file '${file}' does not exist in space '${spaceId}'`, { space_id: spaceId, filename: file });
      }
      // A look without the lease (the run looks again under it): with nothing over budget and nothing a killed
      // run left, there is nothing to do, and no model is needed; a model is needed only for files over budget.
      const needed = await overBudget(spaceId, file !== undefined ? [file] : undefined);
      if (needed.length === 0 && !(await storage.stat(spaceKeys(spaceId).pending))) {
        const message = file !== undefined ? `${file} is within its budget: nothing to compact` : 'every bank file is within its budget: nothing to compact';
        return { status: 'ok', space_id: spaceId, files: [], dry_run: input.dry_run === true, llm_tokens_used: 0, message };
      }
      const llm = needed.length > 0 ? requireModel(context, options.llm, 'compaction') : (context.llm ?? options.llm);
      return run(caller, spaceId, { space_id: spaceId, ...(file !== undefined ? { file } : {}), dry_run: input.dry_run === true }, llm, options);
    },

    overBudget,
  };
}

export type CompactionService = ReturnType<typeof createCompactionService>;
