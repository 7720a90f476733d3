import { firstIndex } from '../../shared/bisect.js';
import { type NoteName, parseNoteName } from '../note-name.js';
import { compareOldestFirst, type Corpus, type Level0Note, type Level0Text } from '../note/corpus.js';

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

const NO_NOTES: readonly string[] = [];

/** How far a side is walked looking for the notes `by` keeps (an agent silent for long has none near). */
const MAX_WALK = 64;
/** History entries looked at past a run's edge for the next consolidation with notes (compactions, revisions, forgets have none). */
const MAX_HOPS = 8;

/** A note asked about: its file name, and the consolidation that holds it (none: a live note). */
export interface NotePlace {
  ref: string;
  consolidation_id?: string | undefined;
}

/** A place in a run. */
interface At {
  run: Run;
  i: number;
}

/** Notes in time order that are stored together: live/ (`cid` null), or one consolidation (its record's list). */
interface Run {
  cid: string | null;
  size: number;
  at(i: number): Level0Note;
  /** The name at `i`, without making a Level0Note of it (walks that only look at times). */
  nameAt(i: number): NoteName;
  indexOf(filename: string): number;
}

/**
 * The notes written just before and after a note in the same space, live or consolidated. Notes are
 * stored in runs already in time order — live/ (the corpus's sorted listing) and each consolidation
 * (its record's list of notes, oldest first) — so a side is walked from the note's place in its run,
 * then into the next run (the consolidation before, or after, or live/ after the newest): names only,
 * never level 0 sorted whole; `of` then reads the few texts it returns. A forgotten note is no one's
 * neighbour: the corpus leaves it out of both.
 */
export function createNeighbours(corpus: Corpus) {
  /**
   * live/ as a run: the listing the caller ranks from when it has one (a search's index, caught up a
   * moment ago: listing again would read the whole folder a second time), else the corpus's. A note
   * is found by a binary search of its name: the listing is sorted oldest first, and building a map
   * of a few thousand names per new note cost more than the search it served.
   */
  const liveRun = async (spaceId: string, listing?: readonly NoteName[]): Promise<Run> => {
    const names = listing ?? (await corpus.liveNames(spaceId));
    return {
      cid: null,
      size: names.length,
      at: (i) => ({ ...(names[i] as NoteName), source: 'live' }),
      nameAt: (i) => names[i] as NoteName,
      indexOf: (filename) => {
        const name = parseNoteName(filename);
        if (!name) return -1;
        const at = firstIndex(names.length, (i) => compareOldestFirst(names[i] as NoteName, name) >= 0);
        return names[at]?.filename === filename ? at : -1;
      },
    };
  };

  /**
   * A consolidation's notes by name, from its record (oldest first, forgotten ones left out): no
   * notes.json read. Empty for another kind of entry; null for a damaged or unfinished record (passed
   * over, as everywhere in recall).
   */
  const historyNames = new WeakMap<readonly string[], { names: Level0Note[]; positions: Map<string, number> }>();
  const historyRun = async (spaceId: string, cid: string): Promise<Run | null> => {
    const record = await corpus.record(spaceId, cid).catch((error: unknown) => corpus.skipDamaged('neighbours', error, null));
    if (!record) return null; // damaged, or still being written
    const filenames = record.kind === 'consolidation' ? record.notes : NO_NOTES;
    let known = historyNames.get(filenames);
    if (!known) {
      const names = filenames.flatMap((filename): Level0Note[] => {
        const name = parseNoteName(filename);
        return name ? [{ ...name, source: 'history', consolidation_id: cid }] : [];
      });
      known = { names, positions: new Map(names.map((name, i) => [name.filename, i])) };
      historyNames.set(filenames, known);
    }
    const { names, positions } = known;
    return {
      cid,
      size: names.length,
      at: (i) => names[i] as Level0Note,
      nameAt: (i) => names[i] as Level0Note,
      indexOf: (filename) => positions.get(filename) ?? -1,
    };
  };

  /** The run next to `run` in time (`step` -1: older), or null at the edge of the space. */
  const nextRun = async (spaceId: string, run: Run, step: 1 | -1, live: () => Promise<Run>): Promise<Run | null> => {
    if (run.cid === null && step === 1) return null;
    const ids = await corpus.historyIds(spaceId);
    let i = run.cid === null ? ids.length : ids.indexOf(run.cid);
    if (i < 0) return null;
    for (let hops = 0; hops < MAX_HOPS; hops++) {
      i += step;
      if (i < 0) return null;
      if (i >= ids.length) return live();
      const next = await historyRun(spaceId, ids[i] as string);
      if (next && next.size > 0) return next;
    }
    return null;
  };

  /** Each run read once per call, however many of the notes asked about it holds. */
  const runsOf = (spaceId: string, liveListing: readonly NoteName[] | undefined) => {
    const runs = new Map<string | null, Promise<Run | null>>();
    return (cid: string | null): Promise<Run | null> => {
      let run = runs.get(cid);
      if (!run) {
        run = cid === null ? liveRun(spaceId, liveListing) : historyRun(spaceId, cid);
        runs.set(cid, run);
      }
      return run;
    };
  };

  /**
   * The sitting of each note asked about — the notes around it written with no pause longer than
   * `gapMs` from one to the next — named by its first note's filename; none for a note in a stretch of
   * more than `reach` notes without a pause (a stream of notes that mixes every subject is no sitting).
   * Walked by name (times only), oldest note first; every note walked over is placed, so a later walk
   * stops at it.
   */
  const sittings = async (
    spaceId: string,
    refs: readonly NotePlace[],
    gapMs: number,
    reach: number,
    liveListing?: readonly NoteName[],
  ): Promise<Map<string, string>> => {
    const runOf = runsOf(spaceId, liveListing);
    const live = () => runOf(null) as Promise<Run>;
    const placed = new Map<string, string | null>(); // a note walked over → its sitting (null: none)
    /**
     * The note next to run[i] on `step`'s side, unless a pause or the space's edge comes first. Within a
     * run it answers at once (a promise only where it crosses into the next run: a walk takes hundreds).
     */
    const close = (run: Run, i: number, other: Run, j: number): At | null =>
      Math.abs(stampTime(other.nameAt(j).stamp) - stampTime(run.nameAt(i).stamp)) > gapMs ? null : { run: other, i: j };
    const next = (run: Run, i: number, step: 1 | -1): At | null | Promise<At | null> => {
      const j = i + step;
      if (j >= 0 && j < run.size) return close(run, i, run, j);
      return nextRun(spaceId, run, step, live).then((other) => (other && other.size > 0 ? close(run, i, other, step === 1 ? 0 : other.size - 1) : null));
    };
    /** Walks from `from` on `step`'s side, note by note without a pause, while `visit` says to go on. */
    const walk = async (from: At, step: 1 | -1, visit: (at: At) => boolean): Promise<void> => {
      for (let at = from; ; ) {
        let following = next(at.run, at.i, step);
        if (following instanceof Promise) following = await following;
        if (!following || !visit(following)) return;
        at = following;
      }
    };
    const ordered = refs.flatMap((place) => {
      const name = parseNoteName(place.ref);
      return name ? [{ place, name }] : [];
    });
    ordered.sort((a, b) => compareOldestFirst(a.name, b.name));
    for (const { place } of ordered) {
      if (placed.has(place.ref)) continue;
      const run = await runOf(place.consolidation_id ?? null);
      const i = run?.indexOf(place.ref) ?? -1;
      if (!run || i < 0) continue;
      const origin = { run, i };
      const walked = [place.ref];
      let sitting: string | null | undefined;
      // Back to the pause before it (its sitting's first note), or to a note an earlier walk placed.
      let first: At = origin;
      await walk(origin, -1, (at) => {
        const filename = at.run.nameAt(at.i).filename;
        const known = placed.get(filename);
        if (known !== undefined) sitting = known;
        else if (walked.push(filename) > reach) sitting = null;
        else first = at;
        return sitting === undefined;
      });
      // On to the pause after it: a sitting is no longer than the reach.
      if (sitting === undefined) {
        let ends: string | null = first.run.nameAt(first.i).filename;
        await walk(origin, 1, (at) => {
          if (walked.push(at.run.nameAt(at.i).filename) <= reach) return true;
          ends = null;
          return false;
        });
        sitting = ends;
      }
      for (const filename of walked) placed.set(filename, sitting);
    }
    const found = new Map<string, string>();
    for (const { ref } of refs) {
      const sitting = placed.get(ref);
      if (sitting) found.set(ref, sitting);
    }
    return found;
  };

  /**
   * The notes around each note asked about (a note not where its ref says, or forgotten, has none):
   * up to `before` and `after` notes on each side, counted among the notes `by` keeps; the edges of
   * the space give fewer. Names only: no text is read. `liveListing`: live/'s listing the caller
   * already holds (a search's index, just caught up), so live/ is not listed again.
   */
  const around = async (
    spaceId: string,
    refs: readonly NotePlace[],
    options: NeighbourOptions,
    liveListing?: readonly NoteName[],
  ): Promise<Map<string, { before: Level0Note[]; after: Level0Note[] }>> => {
    const picked = new Map<string, { before: Level0Note[]; after: Level0Note[] }>();
    if (options.before <= 0 && options.after <= 0) return picked;
    const runOf = runsOf(spaceId, liveListing);
    for (const { ref, consolidation_id: cid } of refs) {
      if (picked.has(ref)) continue;
      const run = await runOf(cid ?? null);
      const at = run?.indexOf(ref) ?? -1;
      if (!run || at < 0) continue;
      const note = run.at(at);
      const keep = (other: Level0Note) => options.by === 'any' || other.agent === note.agent;
      const side = async (step: 1 | -1, count: number): Promise<Level0Note[]> => {
        const taken: Level0Note[] = [];
        let current: Run | null = run;
        let last = note.stamp;
        for (let i = at + step, walked = 0; current && taken.length < count && walked < MAX_WALK; i += step) {
          if (i < 0 || i >= current.size) {
            current = await nextRun(spaceId, current, step, () => runOf(null) as Promise<Run>);
            i = current === null ? 0 : step === 1 ? -1 : current.size;
            continue;
          }
          walked++;
          const other = current.at(i);
          if (options.gapMs !== undefined && Math.abs(stampTime(other.stamp) - stampTime(last)) > options.gapMs) break;
          last = other.stamp;
          if (keep(other)) taken.push(other);
        }
        return step === 1 ? taken : taken.reverse();
      };
      picked.set(ref, { before: await side(-1, options.before), after: await side(1, options.after) });
    }
    return picked;
  };

  return {
    around,
    sittings,

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

/** A note name's stamp (YYYYMMDDTHHMMSS, checked by parseNoteName) as epoch milliseconds, without parsing a date string. */
function stampTime(stamp: string): number {
  return Date.UTC(
    digitsAt(stamp, 0, 4),
    digitsAt(stamp, 4, 2) - 1,
    digitsAt(stamp, 6, 2),
    digitsAt(stamp, 9, 2),
    digitsAt(stamp, 11, 2),
    digitsAt(stamp, 13, 2),
  );
}

/** The number the `count` decimal digits of `text` from `from` write. */
function digitsAt(text: string, from: number, count: number): number {
  let value = 0;
  for (let k = from; k < from + count; k++) value = value * 10 + text.charCodeAt(k) - 48;
  return value;
}
