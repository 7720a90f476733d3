import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { compareNewestFirst, parseNoteName } from '../note-name.js';
import { requireSpace } from '../space-meta.js';
import { isStoredBankFilename, quoteName, validateLimit, validateSpaceId } from '../validate.js';
import { invalid } from '../../shared/errors.js';
import type { Corpus } from '../note/corpus.js';
import type { HistoryRecord } from '../commit/history-record.js';
import { type NoteRetention, noteRetention, type RetentionEntry } from '../retention/record.js';

/**
 * "Why does the bank say this?", answered from the provenance each consolidation keeps in its
 * history record.json (commit/record.ts). The records are immutable and the corpus caches
 * them (a bounded cache, released with the space's index), so this is no index of its own and is
 * never stale: a question reads the listing of history/ and the records it needs. The one place that answers both ways round: the notes that fed
 * a bank section (bank_explain, memory_search's hits), and the bank sections a note fed (what
 * forgetting a note must report).
 */
export interface SectionSource {
  consolidation_id: string;
  committed_at: string;
  filename: string;
  /** The section the consolidation wrote ([] = the whole file). */
  path: string[];
  /** Note file names, oldest first. */
  notes: string[];
}

export interface ExplainInput {
  space_id: string;
  filename: string;
  /** A heading path, "Top > Sub"; empty: the whole file. */
  section?: string;
  limit?: number;
}

export const MAX_EXPLAIN_LIMIT = 100;
/** Content of each note in an explanation, in characters: enough to see why, bounded for a long note. */
const EXPLAIN_NOTE_CHARS = 2_000;

/** Note file names, newest written first (a name that is no note's, from a hand-edited record, last). */
const newestFirst = (names: Iterable<string>): string[] =>
  [...names]
    .map((filename) => ({ filename, name: parseNoteName(filename) }))
    .sort((a, b) => (a.name && b.name ? compareNewestFirst(a.name, b.name) : a.name ? -1 : b.name ? 1 : 0))
    .map((entry) => entry.filename);

const sectionPath = (section: string | undefined): string[] =>
  (section ?? '')
    .split('>')
    .map((part) => part.replace(/^#+\s*/, '').trim())
    .filter(Boolean);

export function createSources(context: CoreContext, corpus: Corpus) {
  /** Consolidations with provenance, newest first. */
  const cited = async (spaceId: string): Promise<HistoryRecord[]> => (await corpus.history(spaceId)).filter((record) => record.provenance.length > 0).reverse();

  const sources = {
    /**
     * The sections of `filename` consolidations wrote from notes, newest consolidation first: all of
     * them, or those bearing on `path` (the section itself, one inside it, or one holding it).
     */
    async ofSection(spaceId: string, filename: string, path: readonly string[] = []): Promise<SectionSource[]> {
      const found: SectionSource[] = [];
      for (const record of await cited(spaceId)) {
        for (const entry of record.provenance) {
          if (entry.filename !== filename || !bearsOn(entry.path, path)) continue;
          found.push({ consolidation_id: record.id, committed_at: record.committed_at, filename, path: entry.path, notes: entry.notes });
        }
      }
      return found;
    },

    /** The bank sections `note` fed, newest consolidation first (a note is in one consolidation; kept general). */
    async ofNote(spaceId: string, note: string): Promise<SectionSource[]> {
      const found: SectionSource[] = [];
      for (const record of await cited(spaceId)) {
        if (!record.notes.includes(note)) continue;
        for (const entry of record.provenance) {
          if (entry.notes.includes(note)) found.push({ consolidation_id: record.id, committed_at: record.committed_at, ...entry });
        }
      }
      return found;
    },

    /** The `limit` newest notes (by when written) that fed a section: what a memory_search hit on it carries. */
    async newestNotes(spaceId: string, filename: string, path: readonly string[], limit: number): Promise<string[]> {
      const notes = new Set((await sources.ofSection(spaceId, filename, path)).flatMap((entry) => entry.notes));
      return newestFirst(notes).slice(0, limit);
    },

    /**
     * bank_explain: the notes that fed a bank file (or one section), newest first, with their text
     * (bounded), time, agent and consolidation, and the sections each fed. A note no longer in
     * history (forgotten) is listed without its text.
     */
    async explain(caller: Caller, input: ExplainInput) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      if (!isStoredBankFilename(input.filename)) throw invalid(`${quoteName(input.filename)} is no bank file name`);
      const limit = validateLimit(input.limit ?? 20, MAX_EXPLAIN_LIMIT);
      await requireSpace(context, spaceId);
      const path = sectionPath(input.section);
      const byNote = new Map<string, { consolidation_id: string; committed_at: string; sections: string[] }>();
      for (const entry of await sources.ofSection(spaceId, input.filename, path)) {
        const section = entry.path.join(' > ');
        for (const note of entry.notes) {
          const known = byNote.get(note) ?? { consolidation_id: entry.consolidation_id, committed_at: entry.committed_at, sections: [] };
          if (!known.sections.includes(section)) known.sections.push(section);
          byNote.set(note, known);
        }
      }
      const newest = newestFirst(byNote.keys()).slice(0, limit);
      const texts = await corpus.read(
        spaceId,
        newest.flatMap((filename) => {
          const name = parseNoteName(filename);
          return name ? [{ ...name, source: 'history' as const, consolidation_id: byNote.get(filename)?.consolidation_id as string }] : [];
        }),
      );
      const text = new Map(texts.map((note) => [note.filename, note]));
      // The records of the notes shown, for what their retention check found (the others are not asked).
      const records = new Map<string, HistoryRecord | null>();
      for (const filename of newest) {
        const cid = byNote.get(filename)?.consolidation_id as string;
        if (!records.has(cid)) records.set(cid, await corpus.record(spaceId, cid));
      }
      const retained = (filename: string, cid: string) => records.get(cid)?.retention.find((e): e is RetentionEntry => 'note' in e && e.note === filename);
      const notes = newest.map((filename) => {
        const found = text.get(filename);
        const where = byNote.get(filename) as { consolidation_id: string; committed_at: string; sections: string[] };
        const content = found?.content ?? null;
        return {
          filename,
          timestamp: found?.timestamp ?? null,
          agent: found?.agent ?? parseNoteName(filename)?.agent ?? null,
          category: found?.category ?? null,
          content: content && content.length > EXPLAIN_NOTE_CHARS ? `${content.slice(0, EXPLAIN_NOTE_CHARS)}…` : content,
          consolidation_id: where.consolidation_id,
          committed_at: where.committed_at,
          sections: where.sections,
          ...retentionField(retained(filename, where.consolidation_id)),
        };
      });
      return {
        status: 'ok' as const,
        space_id: spaceId,
        filename: input.filename,
        section: path.join(' > '),
        notes,
        total: byNote.size,
        has_more: byNote.size > notes.length,
      };
    },
  };
  return sources;
}

export type Sources = ReturnType<typeof createSources>;

/** bank_explain gives every note's retention its consolidation recorded (nothing for a record written before the check). */
const retentionField = (entry: RetentionEntry | undefined): { retention?: NoteRetention } => (entry ? { retention: noteRetention(entry) } : {});

/** Whether a provenance entry's section bears on `path`: the same section, one inside it, or one holding it (a whole file: []). */
export const bearsOn = (entryPath: readonly string[], path: readonly string[]): boolean => {
  const n = Math.min(entryPath.length, path.length);
  for (let i = 0; i < n; i++) if (entryPath[i]?.toLowerCase() !== path[i]?.toLowerCase()) return false;
  return true;
};
