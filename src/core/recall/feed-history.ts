import { firstIndex } from '../../shared/bisect.js';
import { mapLimit } from '../../shared/concurrency.js';
import type { StorageDriver } from '../../storage/types.js';
import { type HistoryRecord, keepsPreimages } from '../commit/history-record.js';
import { toStamp } from '../note-name.js';
import type { Corpus } from '../note/corpus.js';
import { COMMIT_SKEW_MS, stampMs } from '../note/newest.js';
import { noteDocId, noteMeta, preimageDocId, preimageText } from './documents.js';
import type { LiveFeeder } from './feed-live.js';
import { COVERAGE_BYTES, type IndexDocuments, type OnIndexProgress } from './index-documents.js';
import type { SnapshotHeader } from './index-store.js';

/** Consolidations probed for one fresh live name before gathering every history filename instead (lookup). */
const IN_HISTORY_PROBES = 16;
const STAMP = /^\d{8}T\d{6}/;

type PreimageCoverage = NonNullable<SnapshotHeader['preimages']>[string];

/** What the rest of the index does when a forget is met (the feeders and the snapshot writer it does not hold). */
export interface ForgetHooks {
  /** A note document left for good: its parsed description too. */
  forgetId(id: string): void;
  /** After the notes left: summaries read again, live/ listed again, snapshots that predate it deleted. */
  forgotten(): void;
}

/**
 * The history feeder of a space index: consolidations' notes (`h:` documents), compactions'
 * pre-images (`p:`), forgets applied, each history entry read once it is complete.
 */
export class HistoryFeeder {
  /** History ids indexed: consolidations (their notes) and compactions (their pre-images). */
  readonly ids = new Set<string>();
  /** Compaction id → what is indexed of it. */
  readonly preimages = new Map<string, PreimageCoverage>();
  /**
   * Filenames indexed as h:, gathered only when the lookup cannot do without: a million of them took
   * 0.7 s to cut from the ids at each snapshot load, and 100 MB beside the index, for the rare fresh
   * live name that may already be in history.
   */
  filenames: Set<string> | null = null;
  /** A snapshot was loaded and its timeline not yet checked against the history it indexes (place). */
  unplaced = false;

  constructor(
    private readonly docs: IndexDocuments,
    private readonly live: LiveFeeder,
    private readonly corpus: Corpus,
    private readonly storage: StorageDriver,
    private readonly spaceId: string,
    private readonly hooks: ForgetHooks,
  ) {}

  /**
   * What a snapshot says is indexed. One from before compaction existed may list a compaction as
   * indexed (it had no notes to read): there, only consolidations with notes in the index count, and
   * the rest is read again.
   */
  fromSnapshot(header: SnapshotHeader): void {
    this.unplaced = true;
    for (const [cid, coverage] of Object.entries(header.preimages ?? {})) this.preimages.set(cid, coverage);
    const withNotes = header.preimages ? null : this.consolidationsWithNotes();
    for (const cid of header.history) if (!withNotes || withNotes.has(cid)) this.ids.add(cid);
  }

  private consolidationsWithNotes(): Set<string> {
    const found = new Set<string>();
    for (const id of this.docs.index.ids('h:')) found.add(id.slice(2, id.indexOf('/')));
    return found;
  }

  /**
   * Whether a live filename is already indexed from history (consolidated, its live file not yet
   * deleted), for the names of one listing. Without the filenames at hand, only consolidations
   * committed after the note was written (less the clock skew newest.ts allows) may hold it, found by
   * a binary search of their ids (they start with their commit stamp): a note newer than every one,
   * as fresh notes are, costs nothing; past a few candidates, the filenames are gathered once.
   */
  lookup(): (filename: string) => boolean {
    const stamped = [...this.ids].filter((cid) => STAMP.test(cid)).sort();
    const unstamped = [...this.ids].filter((cid) => !STAMP.test(cid));
    return (filename) => {
      if (this.filenames) return this.filenames.has(filename);
      const written = stampMs(filename);
      if (Number.isFinite(written)) {
        const from = toStamp(new Date(written - COMMIT_SKEW_MS));
        const low = firstIndex(stamped.length, (i) => (stamped[i] as string) >= from);
        if (stamped.length - low + unstamped.length <= IN_HISTORY_PROBES)
          return [...stamped.slice(low), ...unstamped].some((cid) => this.docs.index.has(noteDocId(filename, cid)));
      }
      this.filenames = new Set();
      for (const id of this.docs.index.ids('h:')) this.filenames.add(id.slice(id.indexOf('/') + 1));
      return this.filenames.has(filename);
    };
  }

  /** Catches up with history/: new complete entries are read, entries gone leave the index. */
  async refresh(onProgress?: OnIndexProgress): Promise<void> {
    const ids = await this.corpus.historyIds(this.spaceId);
    await this.corpus.sync(this.spaceId, ids);
    if (this.unplaced) await this.place();
    const fresh = ids.filter((cid) => !this.ids.has(cid));
    for (const [done, cid] of fresh.entries()) {
      onProgress?.({ space_id: this.spaceId, phase: 'history', done, total: fresh.length });
      if (await this.indexEntry(cid)) this.ids.add(cid);
    }
    this.dropGone(new Set(ids));
  }

  /**
   * One new entry, once complete (its record written last). A damaged record, notes.json or
   * preimages.json is left out, and not marked as indexed: read again once repaired.
   */
  private indexEntry(cid: string): Promise<boolean> {
    return this.corpus
      .record(this.spaceId, cid, { cache: false })
      .then(async (record) => {
        if (!record) return false;
        const indexed =
          record.kind === 'forget'
            ? this.applyForget(record)
            : keepsPreimages(record)
              ? await this.indexPreimages(cid, record.committed_at)
              : await this.indexNotes(cid);
        this.docs.timeline.placeRecord(cid, record);
        return indexed;
      })
      .catch((error: unknown) => this.corpus.skipDamaged('the search index', error, false));
  }

  private dropGone(present: ReadonlySet<string>): void {
    const gone = [...this.ids].filter((cid) => !present.has(cid));
    if (gone.length === 0) return;
    for (const cid of gone) {
      this.ids.delete(cid);
      this.docs.timeline.drop(cid);
      for (const i of this.preimages.get(cid)?.sections.keys() ?? []) this.docs.remove(preimageDocId(cid, i));
      this.preimages.delete(cid);
    }
    for (const id of [...this.docs.index.ids('h:')]) {
      const meta = noteMeta(id);
      if (meta?.consolidation_id && !present.has(meta.consolidation_id)) {
        this.docs.remove(id);
        this.filenames?.delete(meta.ref);
      }
    }
  }

  /**
   * After a snapshot loads: places the history entries indexed but not in its timeline — all of them
   * for a snapshot written before it had one (or a damaged one) — from their records, and forgets the
   * entries the index does not hold. Past that, history and timeline change together; a record that
   * could not be read (`unplaced` stays set) is tried again at the next catch-up.
   */
  private async place(): Promise<void> {
    const timeline = this.docs.timeline;
    for (const cid of [...timeline.cids()]) if (!this.ids.has(cid)) timeline.drop(cid);
    const missing = [...this.ids].filter((cid) => !timeline.has(cid));
    if (missing.length > 0) {
      await mapLimit(missing, this.storage.parallelism, async (cid) => {
        const record = await this.corpus
          .record(this.spaceId, cid, { cache: false })
          .catch((error: unknown) => this.corpus.skipDamaged('the search index', error, null));
        if (record) timeline.placeRecord(cid, record);
      });
      this.docs.changes++;
      this.docs.worthSaving = true; // a record read per consolidation: the next snapshot carries them
    }
    this.unplaced = [...this.ids].some((cid) => !timeline.has(cid));
  }

  /** A consolidation's notes, moved from `n:` to `h:` documents. */
  private async indexNotes(cid: string): Promise<true> {
    for (const note of await this.corpus.historyNotes(this.spaceId, cid, { cache: false })) {
      this.live.moved(note.filename);
      this.filenames?.add(note.filename);
      this.docs.addNote(noteDocId(note.filename, cid), note.content, note.tags);
    }
    return true;
  }

  /**
   * A forget (its history entry, found like any other): its notes leave the index and their vectors
   * with them; the hooks do the rest (summaries read again, older snapshots deleted).
   */
  private applyForget(record: HistoryRecord): true {
    const names = record.forget?.filenames ?? [];
    const consolidations = record.forget?.consolidations ?? [];
    this.docs.timeline.forget(names, consolidations);
    for (const filename of names) {
      this.live.forgotten(filename);
      this.filenames?.delete(filename);
      for (const id of [noteDocId(filename), ...consolidations.map((cid) => noteDocId(filename, cid))]) {
        this.docs.remove(id);
        this.hooks.forgetId(id);
      }
    }
    this.hooks.forgotten();
    return true;
  }

  /** A compaction's pre-images, each section a `p:` document; its description kept beside (the snapshot carries it). */
  private async indexPreimages(cid: string, committedAt: string): Promise<true> {
    const sections = await this.corpus.historyPreimages(this.spaceId, cid);
    for (const [i, section] of sections.entries()) this.docs.put(preimageDocId(cid, i), preimageText(section));
    this.preimages.set(cid, { committed_at: committedAt, sections: sections.map(({ filename, path }) => ({ filename, path })) });
    return true;
  }

  /** The coverage kept beside the engine (the filenames are counted with the live ones). */
  bytes(): number {
    return (this.preimages.size + this.ids.size) * COVERAGE_BYTES;
  }
}
