import { mapLimit } from '../../shared/concurrency.js';
import type { StorageDriver } from '../../storage/types.js';
import type { spaceKeys } from '../layout.js';
import { diffListings, type NoteName, parseNoteName, sortOldestFirst } from '../note-name.js';
import type { Corpus } from '../note/corpus.js';
import { type LiveTextsLookup, searchableTexts } from '../note/note-text.js';
import { noteDocId } from './documents.js';
import type { IndexDocuments, OnIndexProgress } from './index-documents.js';
import type { IndexStore } from './index-store.js';
import { createLiveTexts, encodeLiveTexts } from './live-texts.js';

/**
 * The live notes' feeder of a space index: the `n:` documents, the listing of live/ it last caught
 * up to, and what live_search matches of each note (live-texts.ts: from the newest `.live` file, then
 * from the notes read).
 */
export class LiveFeeder {
  /** Live filenames indexed as `n:`. */
  readonly names = new Set<string>();
  readonly texts = createLiveTexts();
  /** The listing of live/ the index caught up to (undefined: read every name again). */
  lastListing: readonly NoteName[] | undefined;
  /** Texts read by a process that never loaded the index (it only ran live_search): no snapshot will carry them. */
  textsUnsaved = 0;
  private textsLoading: Promise<void> | null = null;

  constructor(
    private readonly docs: IndexDocuments,
    private readonly corpus: Corpus,
    private readonly store: IndexStore,
    private readonly storage: StorageDriver,
    private readonly spaceId: string,
    private readonly keys: ReturnType<typeof spaceKeys>,
  ) {}

  /** Loads the newest `.live` file once (tried again after a failure); no engine, no catch-up. */
  loadTexts(): Promise<void> {
    this.textsLoading ??= this.store.loadNewestLive(this.spaceId).then(
      (file) => {
        if (!file) return;
        this.texts.load(file);
        if (file.listingVersion === undefined) return;
        const names = file.filenames.map(parseNoteName);
        if (names.every((name) => name !== null)) this.corpus.primeListing(this.keys.live, file.listingVersion, sortOldestFirst(names));
      },
      (error: unknown) => {
        this.textsLoading = null;
        throw error;
      },
    );
    return this.textsLoading;
  }

  /**
   * The texts file of these live notes, oldest first. With the version of live/ they were listed at
   * (the corpus's listing, whole: no tombstone filtered out of it) when every one of them has its
   * texts here: the next process then takes the file's names for live/ while the folder is at it.
   */
  encodeTexts(filenames: readonly string[], listingVersion: string | undefined): Buffer {
    const entries = [...this.texts.of(filenames)];
    return encodeLiveTexts(this.spaceId, entries, entries.length === filenames.length ? listingVersion : undefined);
  }

  /** The live names a snapshot loaded holds (only the live notes' ids are made strings: the engine compares the others' bytes). */
  fromSnapshot(): void {
    for (const id of this.docs.index.ids('n:')) this.names.add(id.slice(2));
  }

  /** The names a snapshot taken now covers: the listing caught up to, with its version while the corpus still holds it as read at one. */
  snapshotNames(): { filenames: string[]; version: string | undefined } {
    const version = this.lastListing && this.corpus.listingVersion(this.keys.live, this.lastListing);
    const filenames = version !== undefined && this.lastListing ? this.lastListing.map((name) => name.filename) : [...this.names];
    return { filenames, version };
  }

  /** A note consolidated: its `n:` document leaves (history indexes it as `h:`). */
  moved(filename: string): void {
    this.docs.remove(noteDocId(filename));
    this.names.delete(filename);
    this.texts.delete(filename);
  }

  /** A note forgotten (its documents are removed by the history feeder). */
  forgotten(filename: string): void {
    this.names.delete(filename);
    this.texts.delete(filename);
  }

  /**
   * Catches up with live/: reads only the notes added since the listing it last caught up to (all of
   * them the first time), leaving out those history already indexes (`inHistory`).
   */
  async refresh(inHistory: () => (filename: string) => boolean, onProgress?: OnIndexProgress): Promise<void> {
    const names = await this.corpus.liveNames(this.spaceId);
    if (names === this.lastListing) return; // the same listing: the folder did not change
    const { added, removed } = this.lastListing ? diffListings(this.lastListing, names) : { added: names, removed: null };
    const fresh = [];
    let lookup: ((filename: string) => boolean) | undefined;
    for (const name of added) {
      if (this.names.has(name.filename)) continue;
      lookup ??= inHistory();
      if (!lookup(name.filename)) fresh.push(name);
    }
    let done = 0;
    await mapLimit(fresh, this.storage.parallelism, async (name) => {
      const note = await this.corpus.liveNote(this.spaceId, name);
      onProgress?.({ space_id: this.spaceId, phase: 'live', done: ++done, total: fresh.length });
      if (!note) return; // consolidated since listed: history brings it
      this.names.add(name.filename);
      this.texts.set(name.filename, searchableTexts(note));
      this.docs.addNote(noteDocId(name.filename), note.content, note.tags);
    });
    if (removed) this.dropRemoved(removed);
    else this.dropUnlisted(names);
    this.lastListing = names;
    this.docs.timeline.setLive(names);
  }

  private dropRemoved(removed: readonly NoteName[]): void {
    for (const { filename } of removed) {
      if (this.names.delete(filename)) this.docs.remove(noteDocId(filename));
      this.texts.delete(filename);
    }
  }

  private dropUnlisted(names: readonly NoteName[]): void {
    const listed = new Set(names.map((name) => name.filename));
    for (const filename of [...this.names]) {
      if (listed.has(filename)) continue;
      this.names.delete(filename);
      this.docs.remove(noteDocId(filename));
    }
    this.texts.retain(listed);
  }

  /**
   * What live_search matches, by filename: loads the newest `.live` file once, and nothing else.
   * `remember` keeps the texts of a note the caller read; the next snapshot carries them. `loaded`:
   * whether the index itself was loaded (else only a texts file written alone carries them).
   */
  async lookup(loaded: () => boolean): Promise<LiveTextsLookup> {
    await this.loadTexts();
    return {
      matcher: (needle) => this.texts.matcher(needle),
      remember: (filename, entry) => {
        if (this.texts.get(filename)) return;
        this.texts.set(filename, entry);
        if (this.names.has(filename))
          this.docs.changes++; // indexed without its texts (an older snapshot): worth the next one
        else if (!loaded()) this.textsUnsaved++;
      },
    };
  }
}
