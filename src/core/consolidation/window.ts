import type { Checkout } from '../../shared/checkout.js';
import { mapLimit } from '../../shared/concurrency.js';
import type { LiveMemError } from '../../shared/errors.js';
import { normalizeLineEndings } from '../../shared/line-endings.js';
import type { ChatMessage } from '../../llm/types.js';
import { listAll } from '../../storage/list.js';
import type { TextIndexEngine } from '../../search/types.js';
import { toAgentName } from '../caller.js';
import type { CoreContext } from '../context.js';
import type { ConsolidationHooks } from './types.js';
import { baseName, spaceKeys } from '../layout.js';
import { readLiveNote } from '../note/corpus.js';
import { parseNoteFile } from '../note/note-file.js';
import { noteText } from '../note/note-text.js';
import { compareNewestFirst, parseNoteName, stampToIso, type NoteName } from '../note-name.js';
import { loadMeta } from '../space-meta.js';
import { readBankFiles } from '../bank/bank-files.js';
import { parseBankRules } from '../bank/rules.js';
import type { BankBudget } from '../bank/budget.js';
import type { BankSnapshot } from '../commit/apply-plan.js';
import { newNonce } from '../prompt-fence.js';
import { estimateTokens } from '../tokens.js';
import { fitBank, viewBankFile } from './bank-view.js';
import { buildMessages, type PromptNote } from './prompt.js';

/**
 * One window of a consolidation, as whoever writes its plan is shown it: the oldest live notes that
 * fit a prompt of `room` tokens beside the rules, the synthesis and the bank (each file whole, or in
 * part when over its allowance). The same window serves a configured model, MCP sampling and an agent
 * that writes the plan itself (agent-plan.ts): only the room differs.
 */

/** Fewest tokens a window of notes may get. */
export const MIN_WINDOW_TOKENS = 500;

/** Tokens a note costs beside its text: its fence and header lines. */
const NOTE_OVERHEAD_TOKENS = 40;

export interface WindowEntry {
  name: NoteName;
  note: PromptNote;
  body: Buffer;
}

export interface DraftWindow {
  /** The bank as read (line endings normalised), each file at the etag it was read. */
  bank: BankSnapshot;
  /** The bank as the plan's writer was shown it: `partial` names what it did not see whole. */
  sent: BankSnapshot;
  synthesis: string;
  synthesisEtag: string | null;
  consolidationNumber: number;
  nonce: string;
  entries: WindowEntry[];
  messages: ChatMessage[];
}

/** Live notes to consolidate, oldest first, optionally one agent's only. */
export async function pendingNotes(context: CoreContext, spaceId: string, agent: string | undefined): Promise<NoteName[]> {
  const agents = agent ? new Set([agent, toAgentName(agent)]) : undefined;
  const names: NoteName[] = [];
  for await (const object of listAll(context.storage, spaceKeys(spaceId).live)) {
    const name = parseNoteName(baseName(object.key));
    if (name && (!agents || agents.has(name.agent))) names.push(name);
  }
  return names.sort((a, b) => compareNewestFirst(b, a));
}

/**
 * The bank as the plan is made from: each file's text with its line endings normalised, as the
 * section model reads and writes it (a Windows file of an older store is compared like with like
 * by the guards, and rewritten normalised only when the plan changes it), at the etag it was read.
 */
export async function readBank(context: CoreContext, spaceId: string, rules: string): Promise<BankSnapshot> {
  const files = await readBankFiles(context, spaceId);
  for (const [filename, file] of files) files.set(filename, { ...file, content: normalizeLineEndings(file.content) });
  const { appendOnly, rewrittenWhole } = parseBankRules(rules);
  return { files, appendOnly, rewrittenWhole };
}

/** A live note as a prompt shows it, from its stored body. */
export function promptNote(name: NoteName, body: Buffer): PromptNote {
  const parsed = parseNoteFile(body.toString('utf8'));
  return {
    timestamp: parsed.timestamp ?? stampToIso(name.stamp),
    agent: parsed.agent ?? name.agent,
    category: parsed.category ?? name.category,
    tags: parsed.tags ?? [],
    content: parsed.content,
  };
}

/** Characters of a note kept when it is too large for the window alone. */
const keptChars = (budget: number): number => Math.max(0, Math.floor((budget - NOTE_OVERHEAD_TOKENS) * 3.5) - 200);

/** A note cut to `keep` characters, with a marker saying so: its full text is kept in history. */
export function cutNote(content: string, keep: number, where: string): string {
  return `${content.slice(0, keep)}\n[… ${content.length - keep} characters cut to fit ${where}; the full note is kept in history]`;
}

/** A draft's `drift` for a consolidation in `checkout` (none without one, or without the hook). */
export function driftOf(hooks: ConsolidationHooks, spaceId: string, checkout: Checkout | undefined): Pick<DraftOptions, 'drift'> {
  const { codeDrift } = hooks;
  return codeDrift && checkout ? { drift: (files) => codeDrift(spaceId, files, checkout) } : {};
}

export interface DraftOptions {
  spaceId: string;
  rules: string;
  budget: BankBudget;
  /** Live notes still to consolidate, oldest first. */
  names: readonly NoteName[];
  /** Tokens the whole prompt may take. */
  room: number;
  /** What the room is, for messages: "the model's context", "the package's budget". */
  where: string;
  /** What to do when the rules, synthesis and bank alone leave the notes too little room. */
  tooSmall: (fixedTokens: number) => LiveMemError;
  warnings: string[];
  engine: TextIndexEngine;
  /** The bank's statements whose code moved on in the consolidating checkout (prompt.ts shows them, to be repaired). */
  drift?: (files: ReadonlyArray<{ filename: string; content: string }>) => Promise<string[]>;
}

/**
 * The next window and the prompt that shows it; `null` when none of `names` is left to read. A note
 * too large to fit alone is shown cut, with a marker (`cut` says how many characters were kept).
 */
export async function draftWindow(context: CoreContext, options: DraftOptions): Promise<(DraftWindow & { cut?: number }) | null> {
  const { spaceId, rules } = options;
  const keys = spaceKeys(spaceId);
  const [bank, synthesisObject, { meta }] = await Promise.all([
    readBank(context, spaceId, rules),
    context.storage.get(keys.synthesis),
    loadMeta(context, spaceId),
  ]);
  const synthesis = synthesisObject?.body.toString('utf8') ?? '';
  const bankFiles = [...bank.files].map(([filename, file]) => ({ filename, content: file.content })).sort((a, b) => (a.filename < b.filename ? -1 : 1));
  // Each file whole within its allowance, else in part: the bank's share of the prompt is bounded.
  const drift = (await options.drift?.(bankFiles)) ?? [];
  const base = { spaceId, rules, synthesis, consolidationNumber: meta.consolidation_count + 1, nonce: newNonce(), drift };
  const { allowance, fixedTokens } = fitBank(bankFiles, {
    fileTokens: options.budget.fileTokens,
    room: options.room,
    minNotes: MIN_WINDOW_TOKENS,
    measure: (views) => buildMessages({ ...base, notes: [], bank: views }).reduce((sum, m) => sum + estimateTokens(m.content), 0),
    engine: options.engine,
  });
  const noteBudget = options.room - fixedTokens;
  if (noteBudget < MIN_WINDOW_TOKENS) throw options.tooSmall(fixedTokens);
  const { entries, cut } = await nextEntries(context, options, noteBudget);
  if (entries.length === 0) return null;
  const touched = entries.map((w) => noteText(w.note.content, w.note.tags));
  const views = bankFiles.map((file) => viewBankFile(file.filename, file.content, allowance(file.filename), touched, options.engine));
  const sent: BankSnapshot = {
    ...bank,
    partial: new Map(views.flatMap((view) => (view.partial ? [[view.filename, view.partial.elided] as const] : []))),
  };
  const messages = buildMessages({ ...base, notes: entries.map((w) => w.note), bank: views });
  return {
    bank,
    sent,
    synthesis,
    synthesisEtag: synthesisObject?.etag ?? null,
    consolidationNumber: base.consolidationNumber,
    nonce: base.nonce,
    entries,
    messages,
    ...(cut !== undefined ? { cut } : {}),
  };
}

/** As many of the names (oldest first) as fit `budget` tokens; a first note too large alone is cut. */
async function nextEntries(context: CoreContext, options: DraftOptions, budget: number): Promise<{ entries: WindowEntry[]; cut?: number }> {
  const { storage } = context;
  const entries: WindowEntry[] = [];
  let used = 0;
  const batch = storage.parallelism * 4;
  for (let start = 0; start < options.names.length; start += batch) {
    const slice = options.names.slice(start, start + batch);
    const bodies = await mapLimit(slice, storage.parallelism, (name) => readLiveNote(context, options.spaceId, name.filename));
    for (const [i, object] of bodies.entries()) {
      const name = slice[i] as NoteName;
      if (!object) continue; // gone since listed (space deleted?), or no note (too large): nothing to consolidate
      const note = promptNote(name, object.body);
      const cost = estimateTokens(note.content) + NOTE_OVERHEAD_TOKENS;
      if (used + cost > budget) {
        if (entries.length > 0) return { entries };
        const keep = keptChars(budget);
        note.content = cutNote(note.content, keep, options.where);
        options.warnings.push(`note ${name.filename} was too large for ${options.where} and was sent cut`);
        return { entries: [{ name, note, body: object.body }], cut: keep };
      }
      used += cost;
      entries.push({ name, note, body: object.body });
    }
  }
  return { entries };
}
