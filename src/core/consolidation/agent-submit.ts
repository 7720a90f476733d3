import { createHash } from 'node:crypto';
import { ReplyFormatError, replyJson } from '../../llm/reply-json.js';
import { createAnalyzer } from '../../search/analyze.js';
import { mapLimit } from '../../shared/concurrency.js';
import { invalid, isLiveMemError, LiveMemError } from '../../shared/errors.js';
import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { readLiveNote } from '../note/corpus.js';
import { type NoteName, parseNoteName } from '../note-name.js';
import { PACKAGE } from './agent-ask.js';
import { commitAgentPlan } from './agent-commit.js';
import { lockForAgent, openSpace, rulesOf } from './space-access.js';
import type { ConsolidationDeps } from './types.js';
import { type Claim, dropClaim, expired, handleSpace, readClaim } from './claim.js';
import { countWords } from './compress.js';
import { parsePlan, type Plan } from './plan.js';
import { type CheckedPlan, checkPlan, planProblems } from './plan-window.js';
import type { ConsolidationResult } from './result.js';
import { cutNote, promptNote, readBank } from './window.js';

/**
 * The submitting half of agent-written consolidation (agent-plan.ts): takes the plan with its
 * package's handle through the same checks a model's plan meets (plan-window.ts checkPlan), then
 * commits it (agent-commit.ts). A refused plan changes nothing — the claim included — and says what
 * to fix, so the agent may submit again until the handle expires; a window that changed under the
 * claim drops it, since no plan for it can be right any more.
 */

/** The token that lets a plan sent back for its accounting or retention be committed as it is, when submitted unchanged. */
const confirmToken = (claim: Claim, plan: Plan): string =>
  createHash('sha256')
    .update(`${claim.handle}\n${claim.nonce}\n${JSON.stringify(plan)}`)
    .digest('hex')
    .slice(0, 16);

/** A refusal, fit to go back to the plan's writer: what to fix, and that nothing changed. */
const refused = (claim: Claim, why: string, data?: Record<string, unknown>) =>
  invalid(
    `the plan was refused and nothing was written: ${why}. Fix this and submit the whole corrected plan again with the same handle (valid until ${claim.expires_at})`,
    data,
  );

/** The claim `handle` names on `spaceId`, still valid; else `conflict` saying why. */
async function claimOf(context: CoreContext, spaceId: string, handle: string): Promise<Claim> {
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
}

/** The claimed window as the package showed it, read again. */
interface ClaimedWindow {
  names: NoteName[];
  bodies: Array<{ body: Buffer }>;
  bank: Awaited<ReturnType<typeof readBank>>;
  synthesis: string;
  /** The notes as the prompt showed them (cut where the package cut them). */
  notes: Array<{ filename: string; content: string }>;
}

/** Reads `claim`'s window again; drops the claim and answers `conflict` when its notes are gone or the bank changed since the package. */
async function readClaimedWindow(context: CoreContext, spaceId: string, claim: Claim): Promise<ClaimedWindow> {
  const { storage } = context;
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
  const rules = await rulesOf(context, spaceId);
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
  return { names, bodies: bodies as Array<{ body: Buffer }>, bank, synthesis, notes };
}

/** `plan` checked against `window`; refused (claim kept) when it breaks a rule, or leaves notes or facts out without `confirm`. */
async function checkAgentPlan(context: CoreContext, claim: Claim, plan: Plan, confirm: unknown, window: ClaimedWindow): Promise<CheckedPlan> {
  const words = countWords(plan.synthesis);
  if (words > context.consolidation.synthesisMaxWords) {
    throw refused(
      claim,
      `the synthesis has ${words} words, more than the ${context.consolidation.synthesisMaxWords} it may keep: write it shorter, keeping every fact, decision and open point`,
    );
  }
  const { notes, synthesis } = window;
  const sent = { ...window.bank, partial: new Map(claim.partial) };
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
  return checked;
}

/**
 * Checks a plan for the window `handle` claimed and commits it. `text` is the plan's JSON. It is
 * model output, not a writer's note, so it is no field of `input` (whose strings the core's boundary
 * masks, redact/stored-text.ts): it meets the model-output gate, which refuses a new secret, so
 * that its writer takes it out.
 */
export async function submitPlan(
  deps: ConsolidationDeps,
  caller: Caller,
  input: { space_id: string; handle: string },
  text: string,
): Promise<ConsolidationResult> {
  const { context } = deps;
  const started = context.monotonic();
  const spaceId = await openSpace(context, caller, input.space_id);
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
  const held = await lockForAgent(context, caller, spaceId);
  try {
    const claim = await claimOf(context, spaceId, input.handle);
    const window = await readClaimedWindow(context, spaceId, claim);
    const checked = await checkAgentPlan(context, claim, plan, confirm, window);
    return await commitAgentPlan(
      deps,
      caller,
      spaceId,
      claim,
      { names: window.names, bodies: window.bodies, checked, synthesis: window.synthesis },
      held,
      started,
    );
  } finally {
    await held.release();
  }
}
