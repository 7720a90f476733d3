import { createHash } from 'node:crypto';
import { mapLimit } from '../../shared/concurrency.js';
import { invalid, isLiveMemError, LiveMemError } from '../../shared/errors.js';
import { ReplyFormatError, replyJson } from '../../llm/reply-json.js';
import type { TextIndexEngine } from '../../search/types.js';
import { createAnalyzer } from '../../search/analyze.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { readLiveNote } from '../note/corpus.js';
import { parseNoteName, type NoteName } from '../note-name.js';
import { requireSpace } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';
import { parseBankRules } from '../bank/rules.js';
import { bankBudget } from '../bank/budget.js';
import { overBudgetWithoutModel } from './unbudgeted.js';
import { writeCommit } from '../commit/commit.js';
import { rollForwardConsolidation } from './commit-kind.js';
import { lockSpace, PERSON_LEASE_WAIT_MS } from '../commit/space-lock.js';
import { estimateTokens } from '../tokens.js';
import { isoSeconds } from '../../shared/time.js';
import { type Claim, dropClaim, expired, handleSpace, newHandle, readClaim, writeClaim } from './claim.js';
import { countWords } from './compress.js';
import type { ConsolidationHooks } from './consolidation-service.js';
import { parsePlan, type Plan } from './plan.js';
import { PLAN_SCHEMA } from './plan-schema.js';
import { type CheckedPlan, checkPlan, planProblems } from './plan-window.js';
import { accountingWarnings } from './provenance.js';
import { addToSummary, retentionWarning } from './retention.js';
import type { ConsolidationResult } from './result.js';
import { cutNote, draftWindow, MIN_WINDOW_TOKENS, pendingNotes, promptNote, readBank } from './window.js';
import { windowRecord } from './window-record.js';

/**
 * Consolidation whose plan the calling agent writes itself — the third path beside a configured model
 * and MCP sampling, for the many clients that offer neither. `ask` claims the oldest window of live
 * notes (claim.ts) and answers a work package: the very prompt a model is sent (prompt.ts) within a
 * token budget, and the plan's schema. `submit` takes the plan with the package's handle through the
 * same checks a model's plan meets (plan-window.ts checkPlan) and the one commit protocol
 * (commit/commit.ts), the agent named as its author. A refused plan changes nothing (the claim
 * included) and says what to fix; the agent may submit again until the handle expires.
 */

/** Tokens a package may take when the caller says nothing: a window an agent's context takes in easily. */
export const DEFAULT_PACKAGE_TOKENS = 12_000;
/** The fewest tokens a package may be given. */
const MIN_PACKAGE_TOKENS = 2_000;
/** Tokens kept free in a package for its JSON framing and estimation error. */
const PACKAGE_MARGIN_TOKENS = 300;
/** What a note too large for the package is said to be cut to fit. */
const PACKAGE = "the package's budget";

export interface AskInput {
  space_id: string;
  /** Only this agent's notes. */
  agent?: string;
  /** Tokens the package may take (default DEFAULT_PACKAGE_TOKENS). */
  budget_tokens?: number;
}

/** A work package: what the plan's writer needs, and how to hand the plan back. A type, not an interface: answers are records. */
export type WorkPackage = {
  status: 'ok';
  space_id: string;
  handle: string;
  expires_at: string;
  notes_in_window: number;
  /** Live notes left once this window is committed. */
  notes_waiting: number;
  package_tokens: number;
  budget_tokens: number;
  /** The model prompt's system part: the task and the rule about fenced data. */
  instructions: string;
  /** The rules, the synthesis, the fenced notes, the bank (in part when large) and the reply format. */
  prompt: string;
  plan_schema: typeof PLAN_SCHEMA;
  synthesis_max_words: number;
  next: string;
  warnings?: string[];
};

/** No notes wait: nothing is claimed. */
export type NothingToDo = {
  status: 'ok';
  space_id: string;
  notes_waiting: 0;
  message: string;
};

const NEXT =
  'Write the plan as the instructions say: one JSON object matching plan_schema, citing the notes by number. ' +
  'Then submit it with this handle (MCP: bank_consolidate with handle and plan; CLI: live-mem consolidate SPACE --handle HANDLE --plan FILE). ' +
  'A refused plan changes nothing: fix what the answer says and submit again with the same handle.';

const packageOverhead = estimateTokens(JSON.stringify(PLAN_SCHEMA)) + estimateTokens(NEXT) + PACKAGE_MARGIN_TOKENS;

/** The token that lets a plan sent back for its accounting or retention be committed as it is, when submitted unchanged. */
const confirmToken = (claim: Claim, plan: Plan): string =>
  createHash('sha256')
    .update(`${claim.handle}\n${claim.nonce}\n${JSON.stringify(plan)}`)
    .digest('hex')
    .slice(0, 16);

export function createAgentConsolidation(context: CoreContext, hooks: ConsolidationHooks, engine: TextIndexEngine) {
  const { storage } = context;

  const open = async (caller: Caller, rawSpaceId: string) => {
    const spaceId = validateSpaceId(rawSpaceId);
    authorize(caller, 'write', spaceId);
    await requireSpace(context, spaceId);
    return spaceId;
  };
  /** The space's lease, for a moment: claims are made and plans committed one at a time per space. */
  const lock = (caller: Caller, spaceId: string) =>
    lockSpace(context, spaceId, caller, 'agent-consolidation', {
      waitMs: PERSON_LEASE_WAIT_MS,
      waitFor: (holder) => holder === 'agent-consolidation' || holder === 'compaction',
    });
  const rulesOf = async (spaceId: string) => (await storage.get(spaceKeys(spaceId).rules))?.body.toString('utf8') ?? '';

  /** Whether a claim still holds notes that are live (a claim whose window was committed by a run that died before dropping it holds none). */
  const holdsLiveNotes = async (spaceId: string, claim: Claim) =>
    (await mapLimit(claim.notes, storage.parallelism, (note) => storage.stat(spaceKeys(spaceId).note(note.filename)))).some(Boolean);

  const ask = async (caller: Caller, input: AskInput): Promise<WorkPackage | NothingToDo> => {
    const spaceId = await open(caller, input.space_id);
    const budgetTokens = input.budget_tokens ?? DEFAULT_PACKAGE_TOKENS;
    if (!Number.isInteger(budgetTokens) || budgetTokens < MIN_PACKAGE_TOKENS) {
      throw invalid(`a work package needs a budget of at least ${MIN_PACKAGE_TOKENS} tokens (it was given ${budgetTokens})`);
    }
    const held = await lock(caller, spaceId);
    try {
      const now = context.clock();
      const current = await readClaim(context, spaceId);
      const all = await pendingNotes(context, spaceId, input.agent);
      if (current && !expired(current.claim, now, context.consolidation.claimTtlMs) && (await holdsLiveNotes(spaceId, current.claim))) {
        const { claimer, expires_at, notes } = current.claim;
        throw new LiveMemError(
          'conflict',
          `space '${spaceId}': a consolidation is in progress by ${claimer} until ${expires_at} (${notes.length} notes; ${all.length} live notes wait in all): ask again after that time`,
          { space_id: spaceId, claimer, expires_at },
        );
      }
      if (all.length === 0) return { status: 'ok', space_id: spaceId, notes_waiting: 0, message: `no live note of '${spaceId}' waits to be consolidated` };
      const rules = await rulesOf(spaceId);
      const warnings = [...held.warnings];
      const draft = await draftWindow(context, {
        spaceId,
        rules,
        budget: bankBudget(parseBankRules(rules), context.budgets),
        names: all.slice(0, context.consolidation.maxNotes),
        room: budgetTokens - packageOverhead,
        where: PACKAGE,
        tooSmall: (fixed) =>
          invalid(
            `a package of ${budgetTokens} tokens cannot hold a window: the rules, the synthesis and the bank (files over their budget shown in part) take ${fixed} tokens ` +
              `and the plan's format ${packageOverhead}, leaving less than the ${MIN_WINDOW_TOKENS} a window of notes needs: ask with at least ${fixed + packageOverhead + MIN_WINDOW_TOKENS} tokens, or lower the bank files' budgets`,
          ),
        warnings,
        engine,
      });
      if (!draft) return { status: 'ok', space_id: spaceId, notes_waiting: 0, message: `no live note of '${spaceId}' waits to be consolidated` };
      const [first] = draft.entries;
      const claim: Claim = {
        handle: newHandle(spaceId),
        space_id: spaceId,
        claimer: caller.agent,
        claimed_at: isoSeconds(now),
        expires_at: isoSeconds(new Date(now.getTime() + context.consolidation.claimTtlMs)),
        notes: draft.entries.map((entry) => ({
          filename: entry.name.filename,
          ...(draft.cut !== undefined && entry === first ? { keep: draft.cut } : {}),
        })),
        bank: Object.fromEntries([...draft.bank.files].map(([filename, file]) => [filename, file.etag])),
        synthesis_etag: draft.synthesisEtag,
        partial: [...(draft.sent.partial ?? [])],
        nonce: draft.nonce,
      };
      await held.stillHeld();
      await writeClaim(context, claim, current?.etag);
      const [system, user] = draft.messages;
      const instructions = system?.content ?? '';
      const prompt = user?.content ?? '';
      return {
        status: 'ok',
        space_id: spaceId,
        handle: claim.handle,
        expires_at: claim.expires_at,
        notes_in_window: draft.entries.length,
        notes_waiting: all.length - draft.entries.length,
        package_tokens: estimateTokens(instructions) + estimateTokens(prompt) + packageOverhead - PACKAGE_MARGIN_TOKENS,
        budget_tokens: budgetTokens,
        instructions,
        prompt,
        plan_schema: PLAN_SCHEMA,
        synthesis_max_words: context.consolidation.synthesisMaxWords,
        next: NEXT,
        ...(warnings.length > 0 ? { warnings } : {}),
      };
    } finally {
      await held.release();
    }
  };

  /** The claim `handle` names on `spaceId`, still valid; else `conflict` saying why. */
  const claimOf = async (spaceId: string, handle: string): Promise<Claim> => {
    const stored = await readClaim(context, spaceId);
    if (!stored || stored.claim.handle !== handle) {
      throw new LiveMemError(
        'conflict',
        `handle ${handle} holds no window of '${spaceId}' any more: it expired and another agent claimed the space, or its plan was committed; ask for a new package`,
        { space_id: spaceId },
      );
    }
    if (expired(stored.claim, context.clock(), context.consolidation.claimTtlMs)) {
      throw new LiveMemError('conflict', `handle ${handle} expired at ${stored.claim.expires_at}: ask for a new package (the notes are still live)`, {
        space_id: spaceId,
        expires_at: stored.claim.expires_at,
      });
    }
    return stored.claim;
  };

  /** A refusal, fit to go back to the plan's writer: what to fix, and that nothing changed. */
  const refused = (claim: Claim, why: string, data?: Record<string, unknown>) =>
    invalid(
      `the plan was refused and nothing was written: ${why}. Fix this and submit the whole corrected plan again with the same handle (valid until ${claim.expires_at})`,
      data,
    );

  /**
   * Checks a plan for the window `handle` claimed and commits it. `text` is the plan's JSON. It is
   * model output, not a writer's note, so it is no field of `input` (whose strings the core's boundary
   * masks, redact/stored-text.ts): it meets the model-output gate, which refuses a new secret, so
   * that its writer takes it out.
   */
  const submit = async (caller: Caller, input: { space_id: string; handle: string }, text: string): Promise<ConsolidationResult> => {
    const started = context.monotonic();
    const spaceId = await open(caller, input.space_id);
    const given = handleSpace(input.handle);
    if (given === undefined)
      throw invalid(`${JSON.stringify(input.handle.slice(0, 80))} is no handle: ask for a work package first, then submit its handle with the plan`);
    if (given !== spaceId) throw invalid(`handle ${input.handle} was given for space '${given}', not '${spaceId}'`);
    let plan: Plan;
    let confirm: unknown;
    try {
      plan = parsePlan(text);
      confirm = (replyJson(text) as { confirm?: unknown }).confirm;
    } catch (error) {
      if (!(error instanceof ReplyFormatError)) throw error;
      throw invalid(`the plan is not usable (${error.message}): submit one JSON object matching the package's plan_schema; nothing was written`);
    }
    const held = await lock(caller, spaceId);
    try {
      const claim = await claimOf(spaceId, input.handle);
      const names = claim.notes.map((note) => parseNoteName(note.filename)).filter((name): name is NoteName => name !== null);
      const bodies = await mapLimit(names, storage.parallelism, (name) => readLiveNote(context, spaceId, name.filename));
      const gone = names.filter((_, i) => !bodies[i]);
      if (gone.length === names.length) {
        await dropClaim(context, spaceId, claim.handle);
        throw new LiveMemError(
          'conflict',
          `the window of handle ${claim.handle} is already consolidated (its plan committed before an interruption, or another run took its notes): nothing is left to do with it; ask for the next window`,
          { space_id: spaceId },
        );
      }
      if (gone.length > 0 || names.length !== claim.notes.length) {
        await dropClaim(context, spaceId, claim.handle);
        throw new LiveMemError(
          'conflict',
          `${gone.length} note(s) of the window are no longer live (${gone[0]?.filename ?? '?'}…: consolidated meanwhile): ask for a new package`,
          {
            space_id: spaceId,
          },
        );
      }
      const rules = await rulesOf(spaceId);
      const [bank, synthesisObject] = await Promise.all([readBank(context, spaceId, rules), storage.get(spaceKeys(spaceId).synthesis)]);
      const now = Object.fromEntries([...bank.files].map(([filename, file]) => [filename, file.etag]));
      if (
        JSON.stringify(Object.entries(now).sort()) !== JSON.stringify(Object.entries(claim.bank).sort()) ||
        (synthesisObject?.etag ?? null) !== claim.synthesis_etag
      ) {
        await dropClaim(context, spaceId, claim.handle);
        throw new LiveMemError(
          'conflict',
          `the bank of '${spaceId}' changed since the package was made (a correction or another consolidation): ask for a new package`,
          {
            space_id: spaceId,
          },
        );
      }
      const synthesis = synthesisObject?.body.toString('utf8') ?? '';
      const notes = names.map((name, i) => {
        const content = promptNote(name, (bodies[i] as { body: Buffer }).body).content;
        const keep = claim.notes[i]?.keep;
        return { filename: name.filename, content: keep === undefined ? content : cutNote(content, keep, PACKAGE) };
      });
      const words = countWords(plan.synthesis);
      if (words > context.consolidation.synthesisMaxWords) {
        throw refused(
          claim,
          `the synthesis has ${words} words, more than the ${context.consolidation.synthesisMaxWords} it may keep: write it shorter, keeping every fact, decision and open point`,
        );
      }
      const sent = { ...bank, partial: new Map(claim.partial) };
      let checked: CheckedPlan;
      try {
        checked = await checkPlan(context, plan, claim.nonce, sent, { notes, synthesis, analyzer: createAnalyzer() });
      } catch (error) {
        if (!isLiveMemError(error, 'invalid_input')) throw error;
        throw refused(claim, error.message, error.data);
      }
      const filenames = notes.map((note) => note.filename);
      const { problem, gaps } = planProblems(context, checked, filenames);
      const token = confirmToken(claim, plan);
      if (gaps && context.retention === 'refuse') throw refused(claim, `(LIVE_MEM_RETENTION=refuse) ${gaps}`, { retention: checked.retention.gaps });
      if ((problem || gaps) && confirm !== token) {
        const why = [problem ? `it does not account for every note: ${problem}` : '', gaps ?? ''].filter(Boolean).join('; ');
        throw refused(
          claim,
          `${why}. Cite in "sources" the notes each change comes from, list every other note in "notes" (superseded or discarded, with the reason), and write each missing fact where its note belongs, as the note states it. ` +
            `If the plan is right as it is, submit it unchanged with "confirm": "${token}" to commit it; what it leaves out is recorded`,
          { confirm: token },
        );
      }
      return await commit(caller, spaceId, claim, { names, bodies: bodies as Array<{ body: Buffer }>, checked, synthesis }, held, started);
    } finally {
      await held.release();
    }
  };

  const commit = async (
    caller: Caller,
    spaceId: string,
    claim: Claim,
    window: { names: NoteName[]; bodies: Array<{ body: Buffer }>; checked: CheckedPlan; synthesis: string },
    held: Awaited<ReturnType<typeof lock>>,
    started: number,
  ): Promise<ConsolidationResult> => {
    const { plan, applied, accounting, retention } = window.checked;
    const record = windowRecord(context, {
      spaceId,
      entries: window.names.map((name) => ({ name })),
      applied,
      synthesis: { content: plan.synthesis, expectedEtag: claim.synthesis_etag },
      accounting,
      retention,
      by: caller.agent,
      model: `agent:${caller.agent}`,
    });
    await context.fault('before-commit');
    await held.stillHeld();
    await writeCommit(context, record);
    await context.fault('after-commit');
    await rollForwardConsolidation(context, record, new Map(window.names.map((name, i) => [name.filename, (window.bodies[i] as { body: Buffer }).body])));
    await dropClaim(context, spaceId, claim.handle);
    hooks.onCommitted?.(spaceId, {
      files: applied.writes.map((w) => ({ filename: w.filename, kind: w.kind })),
      synthesis: plan.synthesis !== window.synthesis,
    });
    const warnings = [...held.warnings, ...accountingWarnings(accounting, plan, 'the window')];
    const lost = retentionWarning(retention.entries, 'the window', context.retention);
    if (lost) warnings.push(lost);
    warnings.push(...(await overBudgetWithoutModel(context, spaceId, applied.writes)));
    const remaining = (await pendingNotes(context, spaceId, undefined)).length;
    context.logger.info(`consolidation of '${spaceId}' by agent ${caller.agent}: ok`, { notes_processed: window.names.length, consolidation_id: record.id });
    return {
      status: 'ok',
      space_id: spaceId,
      by: caller.agent,
      notes_processed: window.names.length,
      notes_remaining: remaining,
      bank_files_created: applied.writes.filter((w) => w.kind === 'created').length,
      bank_files_updated: applied.writes.filter((w) => w.kind === 'updated').length,
      bank_files_unchanged: applied.unchanged,
      operations_applied: applied.operations,
      operations_failed: 0,
      synthesis_size: Buffer.byteLength(plan.synthesis),
      synthesis_compressed: false,
      llm_prompt_tokens: 0,
      llm_completion_tokens: 0,
      llm_tokens_used: 0,
      llm_calls: 0,
      duration_seconds: Math.round(context.monotonic() - started) / 1000,
      windows: 1,
      consolidations: [record.id],
      retention: addToSummary(undefined, context.retention, retention.entries),
      ...(accounting.unaccounted.length > 0 ? { unaccounted_notes: accounting.unaccounted } : {}),
      ...(held.recovered ? { recovered: held.recovered } : {}),
      ...(warnings.length > 0 ? { warnings } : {}),
      next:
        remaining > 0
          ? `${remaining} live notes still wait: ask for the next window when you can (bank_consolidate), or leave them for later`
          : 'no live note waits: the bank is up to date',
    };
  };

  return { ask, submit };
}

export type AgentConsolidation = ReturnType<typeof createAgentConsolidation>;
