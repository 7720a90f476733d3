import { createAnalyzer, type Analyzer } from '../../search/analyze.js';
import { wordingReader } from './coverage.js';
import { extractItems, type Item, type ItemKind } from './items.js';
import { haystack, type Haystack } from './lookup.js';
import { documentsOf, rareWords } from './rarity.js';
import { MAX_MISSING_LISTED, type MissingItem, type RetentionEntry, type RetentionStatus, type SectionRetention } from './record.js';

/**
 * The retention check of a consolidation window: does the bank the plan writes still say what each
 * note said? Mechanical, no model call: each note's salient items (items.ts, and its rarest words,
 * rarity.ts) are looked for (lookup.ts) where the plan says the note went.
 *
 * - integrated: in the text the plan cites it for (what the changes citing it write), then anywhere in
 *   the new bank and synthesis (what the cited text holds the bank holds: the cited text decides only
 *   for a small number the bank holds without the word it counts); and, of each change citing it, the
 *   passage saying most of it must hold half its content words (coverage.ts);
 * - superseded by a note of the window: in that note (a value — number, date, time, version — may be
 *   replaced there by another of its kind: that is what superseding means), then in the new bank; by
 *   anything else ("the bank"): in the new bank, values likewise;
 * - discarded: in the new bank; what is not there was let go on purpose, with the plan's reason (`let_go`);
 * - unaccounted (the plan said nothing of it): in the new bank.
 *
 * A note is `retained` (every item found; a note with no item has nothing to lose), `partly_retained`
 * or `not_retained` (no item found). Gaps — a note the plan says it kept (integrated or superseded)
 * with an item missing — are what a retry names and what `refuse` refuses.
 */
export interface WindowNoteText {
  filename: string;
  content: string;
}

/** What the plan says became of a note, as the consolidation's accounting has it (provenance.ts). */
export interface NoteFate {
  note: string;
  status: 'integrated' | 'superseded' | 'discarded' | 'unaccounted';
  /** integrated: where, `file.md` or `file.md#A > B`. */
  into?: string[];
  /** superseded: the note (a file name of the window) or what superseded it. */
  by?: string;
}

export interface WindowRetentionInput {
  notes: readonly WindowNoteText[];
  fates: readonly NoteFate[];
  /** The bank files and the synthesis as the plan read them: the space's statistics (rarity.ts). */
  before: readonly string[];
  /** The bank files and the synthesis as the plan leaves them. */
  after: readonly string[];
  /** The texts the plan cites an integrated note for (what each change citing it writes). */
  cited: (note: string) => readonly string[];
}

export interface WindowRetention {
  entries: RetentionEntry[];
  /** Entries of notes the plan says it kept (integrated or superseded) that are not retained. */
  gaps: RetentionEntry[];
}

/** Kinds a superseding note may carry another value of: a superseded note's `30 s` is replaced by its successor's `60 s`. */
const VALUE_KINDS = new Set<ItemKind>(['number', 'date', 'time', 'version']);

export function checkWindow(input: WindowRetentionInput, analyzer: Analyzer = createAnalyzer()): WindowRetention {
  const extracted = input.notes.map((note) => ({ ...extractItems(note.content), content: note.content }));
  const rare = rareWords(extracted, input.before.flatMap(documentsOf), analyzer);
  const itemsOf = new Map(input.notes.map((note, i) => [note.filename, [...(extracted[i]?.items ?? []), ...(rare[i] ?? [])]]));
  const textOf = new Map(input.notes.map((note) => [note.filename, note.content]));
  const wordsOf = new Map(input.notes.map((note, i) => [note.filename, extracted[i]?.words ?? []]));
  const wording = wordingReader(analyzer);
  const bank = haystack(input.after.join('\n\n'), analyzer);
  const successors = new Map<string, Haystack>();

  const entries = input.fates.map((fate): RetentionEntry => {
    const items = itemsOf.get(fate.note) ?? [];
    let missing: Item[];
    if (fate.status === 'integrated') {
      // What the cited sections hold the whole bank holds: only a small number the bank holds without the
      // word it counts needs them searched (and so their haystack is built only for it).
      const citedTexts = input.cited(fate.note);
      let cited: Haystack | undefined;
      const inCited = (item: Item) => {
        cited ??= haystack(citedTexts.join('\n\n'), analyzer);
        return cited.has(item);
      };
      missing = items.filter((item) => !bank.hasWide(item) && !(bank.has(item) && inCited(item)));
      // The wording test (coverage.ts): the note's content words, as many more items, the rare words among them once.
      const { looked, unsaid } = wording.read(wordsOf.get(fate.note) ?? [], citedTexts);
      const isItem = (word: Item) => items.some((item) => item.key === word.key);
      missing = [...missing, ...unsaid.filter((word) => !isItem(word))];
      return entry(fate, items.length + looked.filter((word) => !isItem(word)).length, missing);
    } else if (fate.status === 'superseded') {
      const text = fate.by !== undefined && fate.by !== fate.note ? textOf.get(fate.by) : undefined;
      const successor = text === undefined ? undefined : (successors.get(fate.by as string) ?? haystack(text, analyzer));
      if (successor) successors.set(fate.by as string, successor);
      const carried = (item: Item) => successor?.has(item) || bank.hasWide(item) || (VALUE_KINDS.has(item.kind) && (successor ?? bank).hasKind(item));
      missing = items.filter((item) => !carried(item));
    } else {
      missing = items.filter((item) => !bank.hasWide(item));
    }
    return entry(fate, items.length, missing);
  });
  return {
    entries,
    gaps: entries.filter((e, i) => e.status !== 'retained' && (input.fates[i]?.status === 'integrated' || input.fates[i]?.status === 'superseded')),
  };
}

function entry(fate: NoteFate, items: number, missing: readonly Item[]): RetentionEntry {
  const status: RetentionStatus =
    missing.length === 0 ? 'retained' : fate.status === 'discarded' ? 'let_go' : missing.length === items ? 'not_retained' : 'partly_retained';
  return { note: fate.note, status, items, ...missingFields(missing) };
}

function missingFields(missing: readonly Item[]): Pick<RetentionEntry, 'missing' | 'missing_count'> {
  if (missing.length === 0) return {};
  const listed: MissingItem[] = missing.slice(0, MAX_MISSING_LISTED).map((item) => ({ kind: item.kind, text: item.text }));
  return { missing: listed, ...(missing.length > listed.length ? { missing_count: missing.length } : {}) };
}

/** A section a compaction rewrote: its text before (heading included) and its digest. */
export interface DigestedSection {
  filename: string;
  path: string[];
  before: string;
  after: string;
}

/**
 * The retention check of a compaction (core/compaction): each digest against the section it
 * replaces, its items looked for in the digest, then anywhere in the file as compacted. Every kind of
 * item but rare words: a digest condenses the wording, not the facts (dated lines, numbers, names,
 * identifiers). Returns each section's entry and the items it lost (compaction/guards.ts decides
 * whether the file had room to keep them).
 */
export function checkDigested(
  sections: readonly DigestedSection[],
  fileAfter: string,
  analyzer: Analyzer = createAnalyzer(),
): Array<{ entry: SectionRetention; lost: Item[] }> {
  const file = haystack(fileAfter, analyzer);
  return sections.map((section) => {
    const items = extractItems(section.before).items;
    const digest = haystack(section.after, analyzer);
    const lost = items.filter((item) => !digest.has(item) && !file.hasWide(item));
    const status = lost.length === 0 ? 'retained' : lost.length === items.length ? 'not_retained' : 'partly_retained';
    return { entry: { filename: section.filename, path: section.path, status, items: items.length, ...missingFields(lost) }, lost };
  });
}
