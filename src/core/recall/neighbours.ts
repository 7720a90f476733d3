import { parseNoteName } from '../note-name.js';
import type { Corpus, Level0Note, Level0Text } from '../note/corpus.js';
import type { HistoryRecord } from '../commit/history-record.js';
import { noteDocId } from './documents.js';
import { placedNotes, type Places } from './timeline.js';

/** The most neighbours a memory_search hit carries on each side. */
export const MAX_HIT_NEIGHBOURS = 5;
/** A neighbour note longer than this comes as its beginning (`truncated`). */
const NEIGHBOUR_CHARS = 600;

/** Which notes count as a note's neighbours. */
export interface NeighbourOptions {
  /** How many notes written before it (0 for none). */
  before: number;
  /** How many notes written after it. */
  after: number;
  /**
   * `any`: the notes written around it whoever wrote them (a conversation: the answer to a question
   * is the other speaker's next turn); `agent`: only the notes of the note's own agent.
   */
  by: 'any' | 'agent';
  /**
   * Stop at a gap: a side ends at a note written more than this many milliseconds from the one before
   * it (in another sitting: its first words answer nothing of the note asked about). None: no limit.
   */
  gapMs?: number;
}

export interface NoteNeighbours {
  /** Oldest first, the nearest last. */
  before: Level0Text[];
  /** Oldest first, the nearest first. */
  after: Level0Text[];
}

/** How far a side is walked looking for the notes `by` keeps (an agent silent for long has none near). */
const MAX_WALK = 64;

/** A note asked about: its file name, and the consolidation that holds it (none: a live note). */
export interface NotePlace {
  ref: string;
  consolidation_id?: string | undefined;
}

/** Whether the notes at two places were written more than `gapMs` apart. */
const apart = (places: Places, a: number, b: number, gapMs: number): boolean => Math.abs(places.secondsAt(a) - places.secondsAt(b)) * 1000 > gapMs;

/** The places up to `reach` on each side of `place` (fewer at the edges of the space): the notes written just before and after it. */
export function placesAround(places: Places, place: number, reach: number): number[] {
  const around: number[] = [];
  for (let q = Math.max(0, place - reach); q <= Math.min(places.size - 1, place + reach); q++) if (q !== place) around.push(q);
  return around;
}

/** A consolidation's placed notes (placedNotes), parsed once per record the corpus holds, not per answer that walks it. */
const placedOf = new WeakMap<HistoryRecord, string[]>();
const placedNotesOf = (record: HistoryRecord): string[] => {
  let placed = placedOf.get(record);
  if (!placed) placedOf.set(record, (placed = placedNotes(record)));
  return placed;
};

export function createNeighbours(corpus: Corpus, placesOf: (spaceId: string) => Promise<Places>) {
  /** The note at a place, named from its run: a consolidation's record (cached by the corpus) or live/'s listing. */
  const namer = (spaceId: string, places: Places) => {
    const runs = new Map<string, Promise<readonly string[] | null>>();
    return async (place: number): Promise<Level0Note | null> => {
      const { cid, i } = places.locate(place);
      if (cid === null) return { ...places.liveAt(i), source: 'live' };
      let run = runs.get(cid);
      if (!run) {
        run = corpus
          .record(spaceId, cid)
          .then((record) => (record ? placedNotesOf(record) : null))
          .catch((error: unknown) => corpus.skipDamaged('neighbours', error, null));
        runs.set(cid, run);
      }
      const filename = (await run)?.[i];
      // A record that no longer says what the timeline placed (rewritten since) names nothing.
      const name = filename !== undefined && places.of(noteDocId(filename, cid), filename, cid) === place ? parseNoteName(filename) : null;
      return name ? { ...name, source: 'history', consolidation_id: cid } : null;
    };
  };

  /**
   * The notes around each note asked about (a note not where its ref says, or forgotten, has none):
   * up to `before` and `after` notes on each side, counted among the notes `by` keeps, stopping at a
   * pause longer than `gapMs`; the edges of the space give fewer. No text is read.
   */
  const around = async (
    spaceId: string,
    refs: readonly NotePlace[],
    options: NeighbourOptions,
  ): Promise<Map<string, { before: Level0Note[]; after: Level0Note[] }>> => {
    const picked = new Map<string, { before: Level0Note[]; after: Level0Note[] }>();
    if ((options.before <= 0 && options.after <= 0) || refs.length === 0) return picked; // no index opened for nothing
    const places = await placesOf(spaceId);
    const nameAt = namer(spaceId, places);
    for (const { ref, consolidation_id: cid } of refs) {
      if (picked.has(ref)) continue;
      const place = places.of(noteDocId(ref, cid), ref, cid);
      const note = place < 0 ? null : await nameAt(place);
      if (!note) continue;
      const side = async (step: 1 | -1, count: number): Promise<Level0Note[]> => {
        const taken: Level0Note[] = [];
        for (let q = place + step, walked = 0; q >= 0 && q < places.size && taken.length < count && walked < MAX_WALK; q += step, walked++) {
          if (options.gapMs !== undefined && apart(places, q - step, q, options.gapMs)) break;
          const other = await nameAt(q);
          if (other && (options.by === 'any' || other.agent === note.agent)) taken.push(other);
        }
        return step === 1 ? taken : taken.reverse();
      };
      picked.set(ref, { before: await side(-1, options.before), after: await side(1, options.after) });
    }
    return picked;
  };

  return {
    /** The sitting of each note asked about (Places.sittingOf), named by its first note's file name. */
    async sittings(spaceId: string, refs: readonly NotePlace[], gapMs: number, reach: number): Promise<Map<string, string>> {
      if (refs.length === 0) return new Map();
      const places = await placesOf(spaceId);
      const nameAt = namer(spaceId, places);
      const found = new Map<string, string>();
      for (const { ref, consolidation_id: cid } of refs) {
        const sitting = places.sittingOf(places.of(noteDocId(ref, cid), ref, cid), gapMs, reach);
        const first = sitting < 0 ? null : await nameAt(sitting);
        if (first) found.set(ref, first.filename);
      }
      return found;
    },

    /** `around`, with each neighbour's text (read through the corpus's caches). */
    async of(spaceId: string, refs: readonly NotePlace[], options: NeighbourOptions): Promise<Map<string, NoteNeighbours>> {
      const picked = await around(spaceId, refs, options);
      const wanted = new Map<string, Level0Note>();
      for (const entry of picked.values()) for (const other of [...entry.before, ...entry.after]) wanted.set(other.filename, other);
      const texts = new Map((await corpus.read(spaceId, [...wanted.values()])).map((text) => [text.filename, text]));
      const withText = (list: Level0Note[]) => list.flatMap((note) => texts.get(note.filename) ?? []);
      const found = new Map<string, NoteNeighbours>();
      for (const [ref, entry] of picked) found.set(ref, { before: withText(entry.before), after: withText(entry.after) });
      return found;
    },
  };
}

export type Neighbours = ReturnType<typeof createNeighbours>;

/** A note's text, whole when short, else its beginning cut at a word and marked with "…". */
export function clipNote(text: string): { text: string; truncated: boolean } {
  if (text.length <= NEIGHBOUR_CHARS) return { text, truncated: false };
  return { text: `${text.slice(0, NEIGHBOUR_CHARS).replace(/\s+\S*$/, '')}…`, truncated: true };
}
