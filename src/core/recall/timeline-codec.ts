import type { NoteRetention } from '../retention/record.js';

/**
 * The timeline's section of an index snapshot (timeline.ts, index-store.ts `extra`): the runs of note
 * times and keys as one buffer, and back. Apart from the timeline because it is cold code — run when a
 * snapshot is written or loaded, never per query — and a format of its own, with its own version.
 */

/** One history entry's notes, as the timeline keeps them: 8 bytes a note. */
export interface Run {
  /** The note times, as whole seconds after `base` (second precision, as note names carry them). */
  base: number;
  seconds: Uint32Array;
  /** FNV-1a of each note's file name: with its time, which note of the run a name is. */
  keys: Uint32Array;
}

/** A history entry without notes (one for all of them). */
export const EMPTY_RUN: Run = { base: 0, seconds: new Uint32Array(0), keys: new Uint32Array(0) };

/** The timeline's section in an index snapshot: one a snapshot without it (older, or damaged) is placed again from the records. */
export const TIMELINE_SECTION = 'timeline';
const MAGIC = Buffer.from('LMTL', 'latin1');
/** 2: the notes not wholly retained, after the ids. A section of another version is placed again from the records. */
export const TIMELINE_VERSION = 2;
const HEAD_BYTES = 20;
const pad4 = (n: number): number => (n + 3) & ~3;

/**
 * The timeline section of an index snapshot (index-store.ts), little-endian:
 *
 *   "LMTL" | u32 version (2) | u32 runs | u32 notes (all runs) | u32 id bytes
 *   | u32 size of each run [runs] | f64 base of each run, seconds since the epoch [runs]
 *   | u32 seconds after its run's base, each note [notes] | u32 FNV-1a of its file name, each note [notes]
 *   | the runs' history ids joined by "\n", UTF-8, padded to 4
 *   | u32 bytes of the notes not wholly retained, JSON, UTF-8: [[history id, [[note name, its retention]…]]…], padded to 4
 *
 * Runs in any order (places sort them by id); a run of size 0 is a history entry without notes.
 * About 8 bytes a note: 8 MB for a million.
 */
export function encodeTimeline(runs: ReadonlyMap<string, Run>, unretained: ReadonlyMap<string, ReadonlyMap<string, NoteRetention>> = new Map()): Buffer {
  const entries = [...runs];
  const notes = entries.reduce((sum, [, run]) => sum + run.seconds.length, 0);
  const ids = Buffer.from(entries.map(([cid]) => cid).join('\n'), 'utf8');
  const arraysAt = HEAD_BYTES + entries.length * 12;
  const idsAt = arraysAt + notes * 8;
  const flaggedAt = idsAt + pad4(ids.length);
  const flagged = [...unretained].filter(([cid, notes]) => runs.has(cid) && notes.size > 0).map(([cid, notes]) => [cid, [...notes]]);
  const json = flagged.length === 0 ? Buffer.alloc(0) : Buffer.from(JSON.stringify(flagged), 'utf8');
  const total = flaggedAt + 4 + pad4(json.length);
  const out = Buffer.alloc(total);
  MAGIC.copy(out, 0);
  out.writeUInt32LE(TIMELINE_VERSION, 4);
  out.writeUInt32LE(entries.length, 8);
  out.writeUInt32LE(notes, 12);
  out.writeUInt32LE(ids.length, 16);
  let at = arraysAt;
  for (const [r, [, run]] of entries.entries()) {
    out.writeUInt32LE(run.seconds.length, HEAD_BYTES + r * 4);
    out.writeDoubleLE(run.base, HEAD_BYTES + entries.length * 4 + r * 8);
    for (const value of run.seconds) at = out.writeUInt32LE(value, at);
  }
  for (const [, run] of entries) for (const value of run.keys) at = out.writeUInt32LE(value, at);
  ids.copy(out, idsAt);
  out.writeUInt32LE(json.length, flaggedAt);
  json.copy(out, flaggedAt + 4);
  return out;
}

/**
 * The runs of a timeline section; throws on a foreign or inconsistent one (its checksum is the
 * snapshot's, per section: shared/sections.ts).
 */
export function decodeTimeline(input: Buffer): { runs: Map<string, Run>; unretained: Map<string, Map<string, NoteRetention>> } {
  const fail = (why: string): never => {
    throw new Error(`timeline section rejected: ${why}`);
  };
  if (input.length < HEAD_BYTES || !input.subarray(0, 4).equals(MAGIC)) fail('not a timeline');
  if (input.readUInt32LE(4) !== TIMELINE_VERSION) fail(`version ${input.readUInt32LE(4)}, this code reads ${TIMELINE_VERSION}`);
  const count = input.readUInt32LE(8);
  const notes = input.readUInt32LE(12);
  const idBytes = input.readUInt32LE(16);
  const arraysAt = HEAD_BYTES + count * 12;
  const idsAt = arraysAt + notes * 8;
  const flaggedAt = idsAt + pad4(idBytes);
  if (flaggedAt + 4 > input.length) fail('sizes do not add up');
  // The arrays are copied out in one piece (8 bytes a note, 8 MB at a million): views on the section
  // would keep the whole snapshot's buffer (140 MB at a million notes) alive once the engine compacts
  // away from it.
  const arrays = new Uint32Array(notes * 2);
  new Uint8Array(arrays.buffer).set(input.subarray(arraysAt, idsAt));
  const ids = idBytes === 0 && count === 0 ? [] : input.toString('utf8', idsAt, idsAt + idBytes).split('\n');
  if (ids.length !== count) fail(`${ids.length} ids for ${count} runs`);
  const runs = new Map<string, Run>();
  let at = 0;
  for (let r = 0; r < count; r++) {
    const size = input.readUInt32LE(HEAD_BYTES + r * 4);
    if (at + size > notes) fail('run sizes overrun the notes');
    const base = input.readDoubleLE(HEAD_BYTES + count * 4 + r * 8);
    runs.set(
      ids[r] as string,
      size === 0
        ? EMPTY_RUN
        : {
            base,
            seconds: arrays.subarray(at, at + size),
            keys: arrays.subarray(notes + at, notes + at + size),
          },
    );
    at += size;
  }
  if (at !== notes) fail('run sizes do not add up to the notes');
  const jsonBytes = input.readUInt32LE(flaggedAt);
  if (flaggedAt + 4 + pad4(jsonBytes) !== input.length) fail('sizes do not add up');
  const unretained = new Map<string, Map<string, NoteRetention>>();
  if (jsonBytes > 0) {
    let parsed: unknown;
    try {
      parsed = JSON.parse(input.toString('utf8', flaggedAt + 4, flaggedAt + 4 + jsonBytes));
    } catch {
      fail('the notes not wholly retained are not JSON');
    }
    if (!Array.isArray(parsed)) fail('the notes not wholly retained are not a list');
    for (const [cid, notes] of parsed as Array<[string, Array<[string, NoteRetention]>]>) {
      if (typeof cid !== 'string' || !runs.has(cid) || !Array.isArray(notes)) fail('a run of notes not wholly retained is not placed');
      unretained.set(cid, new Map(notes));
    }
  }
  return { runs, unretained };
}
