import { firstIndex } from '../../shared/bisect.js';
import type { SectionSource } from '../../shared/sections.js';
import { type NoteName, parseNoteName } from '../note-name.js';
import { type NoteRetention, noteRetention, type RetentionEntry, type SectionRetention } from '../retention/record.js';
import { decodeTimeline, EMPTY_RUN, encodeTimeline, type Run, TIMELINE_SECTION, TIMELINE_VERSION } from './timeline-codec.js';

/**
 * Level 0 in the order the ranking walks it — each consolidation's notes (its record's list, oldest
 * first) in the order of the consolidations' ids, then live/'s listing — as places: a note's place is
 * its number in that order, the note before it is the place before. The ranking lends along places
 * (the notes around a hit) and groups them into sittings (runs of places without a pause), so it
 * needs, per note, only its time and how to find it from its name: 8 bytes, kept with the search index
 * and in its snapshot, never the 500 names of every consolidation parsed again per query.
 *
 * A consolidation's notes never change once its record exists, except when a forget takes some out:
 * each is placed once, when the index reads it (or from a snapshot). live/ is the listing the index
 * caught up to. A history entry that moved no note (a compaction, a revision, a forget) is placed
 * empty, so that what is placed says what was read.
 *
 * It also keeps, per consolidation, what the retention check found of the notes it did not find whole
 * in the bank (core/retention; usually none): a search hit on such a note says so without its
 * consolidation's record being read.
 *
 * Derived data like the index it sits with: a snapshot without it (older), or with a damaged one,
 * has its consolidations placed again from their records. The section's encoding is timeline-codec.ts.
 */

export { decodeTimeline, encodeTimeline, type Run, TIMELINE_SECTION };

/** A note of a run, for name resolution (`place.cid` null: live/). */
export interface Located {
  cid: string | null;
  i: number;
}

/** The places of one moment, for one query: valid until the timeline changes. */
export interface Places {
  /** Notes placed, live ones included. */
  readonly size: number;
  /**
   * The place of a note by its document id (what the place is remembered by), its file name and its
   * consolidation (none: live), or -1 when not placed there.
   */
  of(id: string, filename: string, cid: string | undefined): number;
  /** A place's note time, in whole seconds since the epoch. */
  secondsAt(place: number): number;
  /** Which run a place is in, and where. */
  locate(place: number): Located;
  /** The live note at `i` of live/'s listing (locate's `i` for a live place). */
  liveAt(i: number): NoteName;
  /**
   * The sitting of a place — the notes around it written with no pause longer than `pauseMs` from one
   * to the next — named by its first place; -1 for a note in a stretch of more than `reach` notes
   * without a pause (a stream of notes that mixes every subject is no sitting), or for no place.
   * Every place a walk passes is remembered with its sitting for as long as these places hold.
   */
  sittingOf(place: number, pauseMs: number, reach: number): number;
  /** An estimate of the memory these places hold beside the runs, in bytes (counted in the index's). */
  bytes(): number;
}

/** The notes a history entry places: a consolidation's, by name (its record's list, oldest first); none for another entry. */
export const placedNotes = (record: { kind: string; notes: readonly string[] }): string[] =>
  record.kind === 'consolidation' ? record.notes.filter((filename) => parseNoteName(filename) !== null) : [];

/** What a consolidation's retention check found of the notes it did not find whole (partly, not retained, let go), by name. */
export const unretainedNotes = (record: { kind: string; retention: ReadonlyArray<RetentionEntry | SectionRetention> }): Map<string, NoteRetention> =>
  new Map(
    record.kind === 'consolidation'
      ? record.retention
          .filter((entry): entry is RetentionEntry => 'note' in entry && entry.status !== 'retained')
          .map((entry) => [entry.note, noteRetention(entry)])
      : [],
  );

export class Timeline {
  private readonly runs = new Map<string, Run>();
  /** Per consolidation with any, its notes not wholly retained and what the check found of each. */
  private readonly unretainedNotes = new Map<string, Map<string, NoteRetention>>();
  private live: readonly NoteName[] = [];
  private view: Places | null = null;

  /** History entries placed (with notes or without). */
  has(cid: string): boolean {
    return this.runs.has(cid);
  }

  /** The history ids placed, in no order. */
  cids(): IterableIterator<string> {
    return this.runs.keys();
  }

  /**
   * Places a consolidation's notes (its record's list, oldest first, forgotten ones left out); [] for
   * any other entry. `unretained`: those of them the retention check did not find whole (unretainedNotes).
   */
  place(cid: string, filenames: readonly string[], unretained: Map<string, NoteRetention> = new Map()): void {
    this.runs.set(cid, runOf(filenames));
    if (unretained.size > 0) this.unretainedNotes.set(cid, unretained);
    else this.unretainedNotes.delete(cid);
    this.view = null;
  }

  /** Places a history entry from its record: a consolidation's notes and what its retention check found of them; none for another entry. */
  placeRecord(cid: string, record: Parameters<typeof placedNotes>[0] & Parameters<typeof unretainedNotes>[0]): void {
    this.place(cid, placedNotes(record), unretainedNotes(record));
  }

  /** What consolidation `cid`'s retention check found of note `filename`, when it did not find it whole. */
  retentionOf(cid: string, filename: string): NoteRetention | undefined {
    return this.unretainedNotes.get(cid)?.get(filename);
  }

  /** A history entry gone from the store. */
  drop(cid: string): void {
    this.unretainedNotes.delete(cid);
    if (this.runs.delete(cid)) this.view = null;
  }

  /** Takes forgotten notes out of the consolidations that held them. */
  forget(filenames: readonly string[], cids: readonly string[]): void {
    const gone = new Set(filenames.map((filename) => `${secondsOfName(filename)}/${keyOf(filename)}`));
    for (const cid of cids) {
      const unretained = this.unretainedNotes.get(cid);
      for (const filename of filenames) unretained?.delete(filename);
      if (unretained?.size === 0) this.unretainedNotes.delete(cid);
      const run = this.runs.get(cid);
      if (!run || run.seconds.length === 0) continue;
      const kept: number[] = [];
      for (let i = 0; i < run.seconds.length; i++) if (!gone.has(`${run.base + (run.seconds[i] as number)}/${run.keys[i]}`)) kept.push(i);
      if (kept.length === run.seconds.length) continue;
      this.runs.set(cid, {
        base: run.base,
        seconds: Uint32Array.from(kept, (i) => run.seconds[i] as number),
        keys: Uint32Array.from(kept, (i) => run.keys[i] as number),
      });
      this.view = null;
    }
  }

  /** live/'s listing, oldest first, as the index caught up to it. */
  setLive(names: readonly NoteName[]): void {
    if (names === this.live) return;
    this.live = names;
    this.view = null;
  }

  /** The places as of now (built once per change: the runs in id order and where each starts). */
  places(): Places {
    this.view ??= placesOf(this.runs, this.live);
    return this.view;
  }

  /** An estimate of the memory held, in bytes (the runs' arrays, a map entry and a string per run). */
  bytes(): number {
    let total = 0;
    for (const [cid, run] of this.runs) total += run.seconds.byteLength + run.keys.byteLength + RUN_BYTES + cid.length;
    for (const notes of this.unretainedNotes.values()) total += RUN_BYTES + notes.size * UNRETAINED_NOTE_BYTES;
    return total + (this.view?.bytes() ?? 0);
  }

  /**
   * The runs as one buffer (a section of the index snapshot, see encodeTimeline: the file of sections
   * checksums it); decodeTimeline throws on anything else.
   */
  encode(): Buffer {
    return encodeTimeline(this.runs, this.unretainedNotes);
  }

  /** The runs as the index snapshot's `timeline` section (index-store.ts `extra`). */
  section(): SectionSource {
    const bytes = this.encode();
    return { name: TIMELINE_SECTION, version: TIMELINE_VERSION, bytes: bytes.length, write: (into) => bytes.copy(into) };
  }

  static decode(buffer: Buffer): Timeline {
    const timeline = new Timeline();
    const { runs, unretained } = decodeTimeline(buffer);
    for (const [cid, run] of runs) timeline.runs.set(cid, run);
    for (const [cid, notes] of unretained) timeline.unretainedNotes.set(cid, notes);
    return timeline;
  }
}

/** A Map entry, the run object, its two typed arrays' headers and the id's string header (V8, 64-bit). */
const RUN_BYTES = 40 + 56 + 2 * 96 + 20;
/** A note not wholly retained: a Map entry, its name, its retention and a few missing items. */
const UNRETAINED_NOTE_BYTES = 40 + 80 + 400;

function runOf(filenames: readonly string[]): Run {
  if (filenames.length === 0) return EMPTY_RUN;
  const times = filenames.map(secondsOfName);
  let base = Number.POSITIVE_INFINITY;
  for (const time of times) if (Number.isFinite(time) && time < base) base = time;
  if (!Number.isFinite(base)) base = 0;
  return {
    base,
    // A name without a readable time (none reaches a run: records are filtered by parseNoteName) counts as the run's first.
    seconds: Uint32Array.from(times, (time) => (Number.isFinite(time) ? Math.min(time - base, 0xffffffff) : 0)),
    keys: Uint32Array.from(filenames, keyOf),
  };
}

/** Places looked up by document id and kept with the places they were found in, past which the memo starts over. */
const MEMO_PLACES = 50_000;
/** A remembered place: a Map entry and its document id's string (about 60 characters). */
const MEMO_ENTRY_BYTES = 40 + 80;
/** A place remembered with its sitting: a Map entry of two small integers. */
const MEMO_SITTING_BYTES = 40;

function placesOf(runs: ReadonlyMap<string, Run>, live: readonly NoteName[]): Places {
  const cids = [...runs.keys()].filter((cid) => (runs.get(cid) as Run).seconds.length > 0).sort();
  const ordered = cids.map((cid) => runs.get(cid) as Run);
  const starts = new Float64Array(ordered.length + 1);
  for (let r = 0; r < ordered.length; r++) starts[r + 1] = (starts[r] as number) + (ordered[r] as Run).seconds.length;
  const history = starts[ordered.length] as number;
  const index = new Map(cids.map((cid, r) => [cid, r]));
  /** Live notes' times, worked out from their stamps when first asked (NaN: not yet). */
  const liveSeconds = new Float64Array(live.length).fill(Number.NaN);
  /** Candidates recur from query to query: each document's place is found once for as long as these places hold. */
  const memo = new Map<string, number>();
  /** Places walked over by sittingOf → their sitting (-1: none), per pause and reach asked. */
  const sittings = new Map<number, Map<number, number>>();
  let sittingEntries = 0;
  /** The run holding a history place: the last whose start is at or before it. */
  const runAt = (place: number): number => firstIndex(ordered.length, (r) => (starts[r + 1] as number) > place);
  const find = (filename: string, cid: string | undefined): number => {
    if (cid === undefined) {
      const i = indexInListing(live, filename);
      return i < 0 ? -1 : history + i;
    }
    const r = index.get(cid);
    if (r === undefined) return -1;
    const i = indexInRun(ordered[r] as Run, filename);
    return i < 0 ? -1 : (starts[r] as number) + i;
  };
  const view: Places = {
    size: history + live.length,
    of(id, filename, cid) {
      let place = memo.get(id);
      if (place === undefined) {
        place = find(filename, cid);
        if (memo.size >= MEMO_PLACES) memo.clear();
        memo.set(id, place);
      }
      return place;
    },
    secondsAt(place) {
      if (place >= history) {
        const i = place - history;
        let seconds = liveSeconds[i] as number;
        if (Number.isNaN(seconds)) liveSeconds[i] = seconds = stampSeconds((live[i] as NoteName).stamp);
        return seconds;
      }
      const r = runAt(place);
      const run = ordered[r] as Run;
      return run.base + (run.seconds[place - (starts[r] as number)] as number);
    },
    locate(place) {
      if (place >= history) return { cid: null, i: place - history };
      const r = runAt(place);
      return { cid: cids[r] as string, i: place - (starts[r] as number) };
    },
    liveAt: (i) => live[i] as NoteName,
    sittingOf(place, pauseMs, reach) {
      if (place < 0 || place >= view.size) return -1;
      const key = pauseMs * 65_536 + reach;
      let placed = sittings.get(key);
      if (placed === undefined) sittings.set(key, (placed = new Map()));
      const known = placed.get(place);
      if (known !== undefined) return known;
      if (sittingEntries >= MEMO_PLACES) {
        placed.clear();
        sittings.clear();
        sittings.set(key, placed);
        sittingEntries = 0;
      }
      const before = placed.size;
      const sitting = walkSitting(view, placed, place, pauseMs, reach);
      sittingEntries += placed.size - before;
      return sitting;
    },
    bytes: () => starts.byteLength + liveSeconds.byteLength + memo.size * MEMO_ENTRY_BYTES + sittingEntries * MEMO_SITTING_BYTES,
  };
  return view;
}

/**
 * Walks from `place` back to the pause before it and on to the pause after, and places every note
 * passed in `placed` with the sitting found (its first place, or -1 past `reach` notes); a place an
 * earlier walk placed ends the walk with its answer. A sitting is the same whichever of its notes
 * the walk starts from, so what `placed` remembers holds for any later walk.
 */
function walkSitting(places: Places, placed: Map<number, number>, place: number, pauseMs: number, reach: number): number {
  const within = (from: number, to: number) => Math.abs(to - from) * 1000 <= pauseMs;
  let first = place;
  let sitting: number | undefined;
  let walked = 1;
  for (let seconds = places.secondsAt(first); first > 0; first--) {
    const before = places.secondsAt(first - 1);
    if (!within(before, seconds)) break;
    const known = placed.get(first - 1);
    if (known !== undefined) {
      sitting = known;
      break;
    }
    if (++walked > reach) {
      sitting = -1;
      break;
    }
    seconds = before;
  }
  let last = place;
  if (sitting === undefined) {
    sitting = first;
    for (let seconds = places.secondsAt(last); last + 1 < places.size; last++) {
      const after = places.secondsAt(last + 1);
      if (!within(seconds, after)) break;
      if (++walked > reach) {
        sitting = -1;
        break;
      }
      seconds = after;
    }
  }
  for (let q = first; q <= last; q++) placed.set(q, sitting);
  return sitting;
}

/** A note's index in a run: found by its time (runs are oldest first), told apart by its key; a linear look if the run is not in order. */
function indexInRun(run: Run, filename: string): number {
  const time = secondsOfName(filename) - run.base;
  const key = keyOf(filename);
  const { seconds, keys } = run;
  const low = firstIndex(seconds.length, (i) => (seconds[i] as number) >= time);
  for (let i = low; i < seconds.length && seconds[i] === time; i++) if (keys[i] === key) return i;
  for (let i = 0; i < seconds.length; i++) if (seconds[i] === time && keys[i] === key) return i;
  return -1;
}

/** A live note's index in the listing (sorted oldest first), by a binary search on its stamp. */
function indexInListing(names: readonly NoteName[], filename: string): number {
  const stamp = filename.slice(0, 15);
  const low = firstIndex(names.length, (i) => (names[i] as NoteName).stamp >= stamp);
  for (let i = low; i < names.length && (names[i] as NoteName).stamp === stamp; i++) if ((names[i] as NoteName).filename === filename) return i;
  return -1;
}

/** FNV-1a of a file name. */
function keyOf(filename: string): number {
  let hash = 0x811c9dc5;
  for (let i = 0; i < filename.length; i++) hash = Math.imul(hash ^ filename.charCodeAt(i), 0x01000193);
  return hash >>> 0;
}

/** A note name's time (it starts YYYYMMDDTHHMMSS, UTC) in whole seconds; NaN for anything else. */
export function secondsOfName(filename: string): number {
  return /^\d{8}T\d{6}/.test(filename) ? stampSeconds(filename) : Number.NaN;
}

/** A stamp's time (YYYYMMDDTHHMMSS, checked by the caller) in whole seconds, without parsing a date string. */
export function stampSeconds(stamp: string): number {
  return (
    Date.UTC(digitsAt(stamp, 0, 4), digitsAt(stamp, 4, 2) - 1, digitsAt(stamp, 6, 2), digitsAt(stamp, 9, 2), digitsAt(stamp, 11, 2), digitsAt(stamp, 13, 2)) /
    1000
  );
}

/** The number the `count` decimal digits of `text` from `from` write. */
function digitsAt(text: string, from: number, count: number): number {
  let value = 0;
  for (let k = from; k < from + count; k++) value = value * 10 + text.charCodeAt(k) - 48;
  return value;
}
