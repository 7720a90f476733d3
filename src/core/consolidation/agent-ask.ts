import { mapLimit } from '../../shared/concurrency.js';
import { invalid, LiveMemError } from '../../shared/errors.js';
import { isoSeconds } from '../../shared/time.js';
import { parseBankRules } from '../bank/rules.js';
import { bankBudget } from '../bank/budget.js';
import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { estimateTokens } from '../tokens.js';
import { lockForAgent, openSpace, rulesOf } from './space-access.js';
import type { ConsolidationDeps } from './types.js';
import { type Claim, expired, newHandle, readClaim, writeClaim } from './claim.js';
import { PLAN_SCHEMA } from './plan-schema.js';
import { draftWindow, driftOf, MIN_WINDOW_TOKENS, pendingNotes } from './window.js';
import type { Checkout } from '../../shared/checkout.js';

/**
 * The asking half of agent-written consolidation (agent-plan.ts): claims the oldest window of live
 * notes (claim.ts) and answers a work package — the very prompt a model is sent (prompt.ts) within a
 * token budget, and the plan's schema. Its own module because the package's budget arithmetic and
 * the claim it writes are one concept, apart from checking the plan that comes back (agent-submit.ts).
 */

/** Tokens a package may take when the caller says nothing: a window an agent's context takes in easily. */
export const DEFAULT_PACKAGE_TOKENS = 12_000;
/** The fewest tokens a package may be given. */
const MIN_PACKAGE_TOKENS = 2_000;
/** Tokens kept free in a package for its JSON framing and estimation error. */
const PACKAGE_MARGIN_TOKENS = 300;
/** What a note too large for the package is said to be cut to fit (the submitting half cuts it the same way). */
export const PACKAGE = "the package's budget";

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

const nothingToDo = (spaceId: string): NothingToDo => ({
  status: 'ok',
  space_id: spaceId,
  notes_waiting: 0,
  message: `no live note of '${spaceId}' waits to be consolidated`,
});

/** Whether a claim still holds notes that are live (a claim whose window was committed by a run that died before dropping it holds none). */
async function holdsLiveNotes(context: CoreContext, spaceId: string, claim: Claim): Promise<boolean> {
  const { storage } = context;
  return (await mapLimit(claim.notes, storage.parallelism, (note) => storage.stat(spaceKeys(spaceId).note(note.filename)))).some(Boolean);
}

/** Claims the oldest window of `input.space_id`'s live notes and answers its work package; nothing claimed when no note waits. */
export async function askPackage(
  { context, engine, hooks }: ConsolidationDeps,
  caller: Caller,
  input: AskInput,
  options: { checkout?: Checkout } = {},
): Promise<WorkPackage | NothingToDo> {
  const spaceId = await openSpace(context, caller, input.space_id);
  const budgetTokens = input.budget_tokens ?? DEFAULT_PACKAGE_TOKENS;
  if (!Number.isInteger(budgetTokens) || budgetTokens < MIN_PACKAGE_TOKENS) {
    throw invalid(`a work package needs a budget of at least ${MIN_PACKAGE_TOKENS} tokens (it was given ${budgetTokens})`);
  }
  const held = await lockForAgent(context, caller, spaceId);
  try {
    const now = context.clock();
    const current = await readClaim(context, spaceId);
    const all = await pendingNotes(context, spaceId, input.agent);
    if (current && !expired(current.claim, now, context.consolidation.claimTtlMs) && (await holdsLiveNotes(context, spaceId, current.claim))) {
      const { claimer, expires_at, notes } = current.claim;
      throw new LiveMemError(
        'conflict',
        `space '${spaceId}': a consolidation is in progress by ${claimer} until ${expires_at} (${notes.length} notes; ${all.length} live notes wait in all): ask again after that time`,
        { space_id: spaceId, claimer, expires_at },
      );
    }
    if (all.length === 0) return nothingToDo(spaceId);
    const rules = await rulesOf(context, spaceId);
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
      ...driftOf(hooks, spaceId, options.checkout),
    });
    if (!draft) return nothingToDo(spaceId);
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
}
