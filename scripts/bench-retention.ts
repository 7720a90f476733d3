/**
 * Section 23 of the benchmark (run by bench.ts): the retention check (core/retention) against models
 * whose losses are known.
 *
 * On LoCoMo's turns (the conversations of section 21, the development split unless
 * `--locomo-split` says otherwise), one note per turn written through the core as section 21 writes
 * them, consolidated 30 at a time (LIVE_MEM_CONSOLIDATION_MAX_NOTES=30, LIVE_MEM_RETENTION=report) by
 * a scripted lossy model served over HTTP to the real `openai` client (`fragmentPlan`): it writes
 * each note as a line of its session day's section of progress.md, citing it, and of one note in
 * four (the 4th, 8th… of each window) keeps only a fragment, the day and the first five words of
 * the turn. The model knows which notes it cut; the data's observations (facts stated by a speaker,
 * each with the turns that state it) say which facts a cut took with it: a fact is dropped when one
 * of its turns was cut, and caught when one of those cut turns is flagged (partly or not retained).
 * Figures: the share of notes flagged; the check's precision (flagged notes that were cut) and
 * recall (cut notes flagged; dropped facts caught); kept notes flagged (false flags); and the cost
 * of the check per window of 30 notes, each window's check replayed alone (the bank and synthesis
 * before and after it, what its plan said of its notes), median and p90.
 *
 * The growth model of section 15 (which keeps every note) gives the false-flag rate on a bank at its
 * budget: see bench-growth.ts (figures `growth_retention_*`).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { ownerCaller } from '../src/core/caller.js';
import { windowRetention } from '../src/core/consolidation/retention.js';
import { createCore } from '../src/core/core.js';
import { readFences } from '../src/core/prompt-fence.js';
import { accountPlan, writtenName } from '../src/core/consolidation/provenance.js';
import { parsePlan } from '../src/core/consolidation/plan.js';
import { type Analyzer, createAnalyzer } from '../src/search/analyze.js';
import type { RetentionEntry } from '../src/core/retention/record.js';
import { createMemoryDriver } from '../src/storage/memory/memory-driver.js';
import { startScriptedLlm, type ScriptedLlm } from '../test/helpers/scripted-llm.js';
import { baseName, spaceKeys } from '../src/core/layout.js';
import { listKeys } from '../src/storage/list.js';
import type { StorageDriver } from '../src/storage/types.js';
import { atLeast, atMost, below, figure, percentile, progress, type Figure } from './bench-lib.js';
import { type Conversation, loadLocomo, SPLITS, type Split } from './bench-locomo-data.js';
import { locomoSplit, noteText } from './bench-locomo.js';
import { notesOf } from './bench-locomo-model.js';
import type { Message } from './bench-growth-model.js';

const WINDOW = 30;
const RESULTS_DIR = fileURLToPath(new URL('../.bench/', import.meta.url));
/** One note in this many is cut to a fragment. */
const CUT_EVERY = 4;
const FRAGMENT_WORDS = 5;
const TARGET = { factRecall: 0.9, falseFlags: 0.05, windowMs: 50 } as const;
const caller = ownerCaller('bench');

/** "[8 May 2023] Hey Mel! …" → the day, and the turn's text. */
const dayOf = (content: string): { day: string; text: string } => {
  const match = /^\[([^\]]+)\]\s*([\s\S]*)$/.exec(content);
  return match ? { day: match[1] as string, text: match[2] as string } : { day: 'Undated', text: content };
};

/** What the lossy model keeps of a cut note: its day and the first words of the turn. */
const fragmentOf = (content: string): string => {
  const { day, text } = dayOf(content);
  return `[${day}] ${text.split(/\s+/).slice(0, FRAGMENT_WORDS).join(' ')} …`;
};

/**
 * The plan the lossy model answers: each note a line of its day's section of progress.md (created on
 * the first window, then section edits), citing it; the note at each CUT_EVERY-th place in the
 * window as its fragment only. `cut` receives the texts it cut.
 */
function fragmentPlan(prompt: string, cut: Set<string>, fragments: Map<string, string>): string {
  const notes = notesOf(prompt);
  // A turn that reads as an order to the model (section 21's data has a few) is refused by the directive
  // check (docs/control.md); told so, the model leaves that note out, and it counts as cut.
  const refused = [...prompt.matchAll(/the plan writes ("(?:[^"\\]|\\.)*")/g)].map((m) => (JSON.parse(m[1] as string) as string).replace(/^- [^:]+: /, ''));
  const progressShown = readFences(prompt, 'file').find((file) => file.label === 'progress.md')?.text;
  const days = new Map<string, { lines: string[]; sources: number[] }>();
  for (const [i, note] of notes.entries()) {
    const lossy = (i + 1) % CUT_EVERY === 0;
    const left = refused.some((line) => note.content.startsWith(line.replace(/\s+$/, '')));
    if (lossy || left) {
      cut.add(note.content);
      fragments.set(note.content, left ? '' : fragmentOf(note.content));
    }
    const { day } = dayOf(note.content);
    const entry = days.get(day) ?? { lines: [], sources: [] };
    if (!left) entry.lines.push(`- ${note.agent}: ${lossy ? fragmentOf(note.content) : note.content}`);
    entry.sources.push(i + 1);
    days.set(day, entry);
  }
  const has = (day: string) => progressShown?.split('\n').some((line) => line === `## ${day}`) === true;
  const files =
    progressShown === undefined
      ? [
          {
            filename: 'progress.md',
            action: 'create',
            content: `# Progress\n\n${[...days].map(([day, { lines }]) => `## ${day}\n\n${lines.join('\n')}\n`).join('\n')}`,
            sources: notes.map((_, i) => i + 1),
          },
        ]
      : [
          {
            filename: 'progress.md',
            action: 'edit',
            edits: [...days].map(([day, { lines, sources }]) =>
              has(day)
                ? { op: 'append', section: `Progress > ${day}`, content: lines.join('\n'), sources }
                : { op: 'add', section: 'Progress', title: day, content: lines.join('\n'), sources },
            ),
          },
        ];
  return JSON.stringify({ files, synthesis: `The speakers talked over ${days.size} more session day(s).` });
}

const factAnalyzer = createAnalyzer();
const stems = (text: string, names: ReadonlySet<string>): Set<string> =>
  new Set(
    (text.match(/[\p{L}\p{N}']+/gu) ?? [])
      .filter((word) => !names.has(word.toLowerCase().replace(/'s$/, '')))
      .flatMap((word) => factAnalyzer.termsOf(word).slice(0, 1)),
  );

/**
 * Whether a cut took a fact with it: of the fact's words (the data's observation, stemmed, the
 * speakers' names aside) that its turn states, more than half are not in what the model kept of the
 * turn. A fact the turn's first words already state ("Family time matters to me") was not dropped.
 */
function factDropped(fact: string, turn: string, kept: string, names: ReadonlySet<string>): boolean {
  const inTurn = stems(turn, names);
  const stated = [...stems(fact, names)].filter((stem) => inTurn.has(stem));
  if (stated.length === 0) return false;
  const left = stems(kept, names);
  return stated.filter((stem) => !left.has(stem)).length * 2 > stated.length;
}

/** A window replayed for timing: what its check was given. */
interface Replay {
  notes: Array<{ filename: string; content: string }>;
  before: { files: Map<string, string>; synthesis: string };
  after: { files: Map<string, string>; synthesis: string };
  /** The model's reply that was committed. */
  reply: string;
}

interface ConversationOutcome {
  entries: RetentionEntry[];
  /** What the model kept of each cut turn (its fragment; nothing for a note left out). */
  kept: Map<string, string>;
  /** Note file name → turn. */
  turnOf: Map<string, string>;
  /** Turns cut to a fragment. */
  cutTurns: Set<string>;
  replays: Replay[];
  /** The final bank: every bank file and the synthesis, whitespace collapsed (see heldVerbatim). */
  finalBank: string;
}

/** Runs of whitespace as one space: a note's line in the bank may wrap where the note did not. */
const collapsed = (text: string): string => text.replace(/\s+/g, ' ').trim();

/**
 * The mechanical check of the final bank: a note is held when its whole text (its turn's day, words and
 * caption, as written), whitespace collapsed, is in a bank file or the synthesis. Not a paraphrase, not
 * the words spread over lines: the lossy model keeps every note it did not cut verbatim, so a kept note
 * found and a cut one not are exactly what the check tells apart.
 */
const heldVerbatim = (content: string, finalBank: string): boolean => finalBank.includes(collapsed(content));

/** The bank files and the synthesis as they are now. */
async function bankState(storage: StorageDriver, spaceId: string): Promise<{ files: Map<string, string>; synthesis: string }> {
  const keys = spaceKeys(spaceId);
  const files = new Map<string, string>();
  for (const key of await listKeys(storage, keys.bank)) files.set(baseName(key), (await storage.get(key))?.body.toString('utf8') ?? '');
  return { files, synthesis: (await storage.get(keys.synthesis))?.body.toString('utf8') ?? '' };
}

async function runConversation(
  conversation: Conversation,
  llm: ScriptedLlm,
  cut: Set<string>,
  replies: string[],
  fragments: ReadonlyMap<string, string>,
): Promise<ConversationOutcome> {
  const spaceId = `retention-${conversation.id}`;
  const storage = createMemoryDriver();
  const core = createCore({
    storage,
    llm: llm.client({ contextWindow: 1_000_000, maxTokens: 16_000 }),
    consolidation: { maxNotes: WINDOW, retryBackoffMs: 5 },
    budgets: { fileTokens: 10_000_000, bankTokens: 10_000_000 },
    retention: 'report',
  });
  await core.spaces.create(caller, { space_id: spaceId });
  const days = new Map(conversation.sessions.map((session) => [session.number, session.day]));
  const turnOfText = new Map<string, string>();
  const turnOf = new Map<string, string>();
  for (const turn of conversation.turns) {
    const content = noteText(turn, days.get(turn.session) as string);
    turnOfText.set(content, turn.diaId);
    const { filename } = await core.notes.write(caller, { space_id: spaceId, agent: turn.speaker, category: 'observation', content });
    turnOf.set(filename as string, turn.diaId);
  }
  const entries: RetentionEntry[] = [];
  const replays: Replay[] = [];
  for (;;) {
    const before = await bankState(storage, spaceId);
    const answered = replies.length;
    const result = await core.consolidation.consolidate(caller, { space_id: spaceId });
    if (result.status !== 'ok') throw new Error(`consolidation of ${spaceId} ended ${result.status}: ${result.message}`);
    if (result.notes_processed === 0) break;
    const after = await bankState(storage, spaceId);
    for (const id of result.consolidations) {
      const read = await core.history.read(caller, { space_id: spaceId, consolidation_id: id });
      entries.push(...(read.consolidation.retention as RetentionEntry[]));
      if (replies.length <= answered) throw new Error(`consolidation ${id} of ${spaceId} asked the model nothing`);
      replays.push({ notes: read.notes.map((note) => ({ filename: note.filename, content: note.content })), before, after, reply: replies.at(-1) as string });
    }
    if (result.notes_remaining === 0) break;
  }
  const final = await bankState(storage, spaceId);
  const finalBank = collapsed([...final.files.values(), final.synthesis].join('\n'));
  const cutTurns = new Set([...cut].flatMap((content) => turnOfText.get(content) ?? []));
  const kept = new Map(
    [...cut].flatMap((content) => (turnOfText.has(content) ? [[turnOfText.get(content) as string, fragments.get(content) ?? ''] as const] : [])),
  );
  return { entries, turnOf, cutTurns, replays, kept, finalBank };
}

/**
 * The CPU time of one window's check, alone, as the consolidation ran it (consolidation/retention.ts:
 * the plan parsed and accounted for as plan-window.ts does, then checked), with the run's analyser.
 * CPU time, not wall time: the figure is the check's cost, whatever else the machine runs.
 */
function timeCheck(replay: Replay, analyzer: Analyzer): number {
  const bank = { files: new Map([...replay.before.files].map(([filename, content]) => [filename, { content, etag: '' }])), appendOnly: new Set<string>() };
  const writes = [...replay.after.files]
    .filter(([filename, content]) => replay.before.files.get(filename) !== content)
    .map(([filename, content]) => ({ filename, content, expectedEtag: null, kind: 'updated' as const }));
  const started = process.cpuUsage();
  const plan = parsePlan(replay.reply);
  const accounting = accountPlan(
    plan,
    replay.notes.map((note) => note.filename),
    writtenName({ writes }),
  );
  windowRetention({ notes: replay.notes, synthesis: replay.before.synthesis }, bank, { writes }, plan, accounting, replay.after.synthesis, analyzer);
  const used = process.cpuUsage(started);
  return (used.user + used.system) / 1000;
}

/**
 * `split` (default: `--locomo-split`), optionally only some of its conversations (the benchmark page's small
 * run), and whether the dropped facts go to .bench/ (default true).
 */
export async function benchRetention(options: { split?: Split; ids?: readonly string[]; save?: boolean } = {}): Promise<Figure[]> {
  const split = options.split ?? locomoSplit();
  const conversations = loadLocomo(options.ids ?? SPLITS[split]);
  const cut = new Set<string>();
  const fragments = new Map<string, string>();
  const replies: string[] = [];
  const server = await startScriptedLlm([
    {
      dynamic: (messages: Message[]) => {
        const reply = fragmentPlan(messages.map((m) => m.content).join('\n'), cut, fragments);
        replies.push(reply);
        return reply;
      },
    },
  ]);
  const flagged = (entry: RetentionEntry) => entry.status === 'partly_retained' || entry.status === 'not_retained';
  let notes = 0;
  let flags = 0;
  let flaggedCut = 0;
  let cutNotes = 0;
  let keptFlagged = 0;
  let facts = 0;
  let factsCaught = 0;
  const windowMs: number[] = [];
  const windowSizes: number[] = [];
  /** The mechanical check: notes written and held verbatim in the final bank; the data's facts whose every evidence turn is. */
  const held = { notes: 0, written: 0, facts: 0, factsWritten: 0, consolidations: 0 };
  /** Each dropped fact and what the check said of its cut turns: for error analysis (.bench/retention-<split>.json). */
  const dropped: Array<{ fact: string; caught: boolean; turns: Array<{ turn: string; text: string; entry: RetentionEntry | undefined }> }> = [];
  try {
    for (const conversation of conversations) {
      const outcome = await runConversation(conversation, server, cut, replies, fragments);
      const turnText = new Map(conversation.turns.map((turn) => [turn.diaId, turn.text]));
      const names = new Set(conversation.speakers.map((name) => name.toLowerCase()));
      const flaggedTurns = new Set(outcome.entries.filter(flagged).flatMap((entry) => outcome.turnOf.get(entry.note) ?? []));
      const days = new Map(conversation.sessions.map((session) => [session.number, session.day]));
      const heldTurns = new Set(
        conversation.turns.filter((turn) => heldVerbatim(noteText(turn, days.get(turn.session) as string), outcome.finalBank)).map((turn) => turn.diaId),
      );
      held.written += conversation.turns.length;
      held.notes += heldTurns.size;
      held.consolidations += outcome.replays.length;
      for (const fact of conversation.facts.filter((f) => f.evidence.length > 0)) {
        held.factsWritten++;
        if (fact.evidence.every((id) => heldTurns.has(id))) held.facts++;
      }
      for (const entry of outcome.entries) {
        const turn = outcome.turnOf.get(entry.note) as string;
        const wasCut = outcome.cutTurns.has(turn);
        notes++;
        if (flagged(entry)) flags++;
        if (wasCut) cutNotes++;
        if (flagged(entry) && wasCut) flaggedCut++;
        if (flagged(entry) && !wasCut) keptFlagged++;
      }
      for (const fact of conversation.facts) {
        const cutEvidence = fact.evidence.filter(
          (id) => outcome.cutTurns.has(id) && factDropped(fact.text, turnText.get(id) ?? '', outcome.kept.get(id) ?? '', names),
        );
        if (cutEvidence.length === 0) continue;
        facts++;
        const caught = cutEvidence.some((id) => flaggedTurns.has(id));
        if (caught) factsCaught++;
        dropped.push({
          fact: fact.text,
          caught,
          turns: cutEvidence.map((id) => ({
            turn: id,
            text: turnText.get(id) ?? '',
            entry: outcome.entries.find((entry) => outcome.turnOf.get(entry.note) === id),
          })),
        });
      }
      // The windows in order, as a run checks them: one analyser, its stems worked out as the bank grows.
      const analyzer = createAnalyzer();
      for (const replay of outcome.replays) {
        windowMs.push(timeCheck(replay, analyzer));
        windowSizes.push(replay.notes.length);
      }
      progress(`  conversation ${conversation.id}: ${outcome.entries.length} notes, ${flaggedTurns.size} flagged, ${outcome.cutTurns.size} cut`);
    }
  } finally {
    await server.close();
  }
  if (options.save !== false) {
    await mkdir(RESULTS_DIR, { recursive: true });
    const ids = conversations.map((conversation) => conversation.id);
    await writeFile(path.join(RESULTS_DIR, `retention-${split}.json`), `${JSON.stringify({ split, conversations: ids, dropped }, null, 1)}\n`);
  }
  const ratio = (a: number, b: number) => (b > 0 ? a / b : null);
  const label = `LoCoMo ${split}, lossy model keeping a fragment of one note in ${CUT_EVERY}`;
  return [
    figure('retention_locomo_notes', `retention, ${label}: notes checked`, notes, 'ratio'),
    figure('retention_locomo_flagged_share', '  share of notes flagged (partly or not retained)', ratio(flags, notes), 'ratio'),
    figure('retention_locomo_precision', '  precision: flagged notes that the model cut', ratio(flaggedCut, flags), 'ratio'),
    figure('retention_locomo_note_recall', '  recall: cut notes flagged', ratio(flaggedCut, cutNotes), 'ratio'),
    figure(
      'retention_locomo_fact_recall',
      `  recall: dropped facts caught (${facts} of the data's observations)`,
      ratio(factsCaught, facts),
      'ratio',
      atLeast(TARGET.factRecall),
    ),
    figure('retention_locomo_false_flags', '  kept notes flagged', ratio(keptFlagged, notes - cutNotes), 'ratio', atMost(TARGET.falseFlags)),
    figure(
      'retention_window_ms_p50',
      `  check per window (${Math.max(...windowSizes)} notes, ${windowMs.length} windows), median`,
      percentile(windowMs, 50),
      'ms',
      below(TARGET.windowMs),
    ),
    figure('retention_window_ms_p90', '  check per window, p90', percentile(windowMs, 90), 'ms', below(TARGET.windowMs)),
    figure(
      'retention_locomo_held_notes',
      `final bank after ${held.consolidations} consolidations: notes held verbatim (of ${held.written} written)`,
      held.notes,
      'ratio',
    ),
    figure('retention_locomo_held_share', '  share of the notes written held verbatim', ratio(held.notes, held.written), 'ratio'),
    figure(
      'retention_locomo_held_vs_cut',
      '  notes not held − notes the model cut or left out (0: the check and the model agree)',
      held.written - held.notes - cutNotes,
      'ratio',
      atMost(0),
    ),
    figure(
      'retention_locomo_held_facts',
      `  the data's facts whose every evidence turn is held (of ${held.factsWritten})`,
      ratio(held.facts, held.factsWritten),
      'ratio',
    ),
  ];
}
