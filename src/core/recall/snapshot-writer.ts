import type { CoreContext } from '../context.js';
import type { spaceKeys } from '../layout.js';
import type { Corpus } from '../note/corpus.js';
import type { LiveFeeder } from './feed-live.js';
import type { IndexDocuments } from './index-documents.js';
import { encodeSnapshot, type IndexStore, type SnapshotHeader } from './index-store.js';

/**
 * A snapshot is written once this many documents changed since the last one this process knows, and
 * when the process exits (`idle`) with at least as many: a new process replays at most about this
 * many documents an earlier one already read (issue 22: it replayed up to 499 every time)…
 */
export const SNAPSHOT_AFTER_CHANGES = 100;
/** …while running, no more often than this (a burst of notes costs one snapshot, and the exit writes the rest)… */
const SNAPSHOT_MIN_INTERVAL_MS = 10_000;
/** …and after a build from scratch or new embeddings, when the index holds at least this many documents. */
export const SNAPSHOT_MIN_DOCUMENTS = 50;

/**
 * Writes a space index's snapshots to the store, in the background, one after another (`saving`), and
 * deletes those a forget made obsolete. It never blocks a refresh: the snapshot is encoded at once and
 * written later.
 */
export class SnapshotWriter {
  /** When the last snapshot was taken, on the context's monotonic clock (never yet: none this process knows). */
  lastAt = Number.NEGATIVE_INFINITY;
  /** The writes in flight, chained. */
  saving: Promise<void> = Promise.resolve();
  /** Index files this index was loaded from or wrote: deleted when it learns of a forget they predate (they may hold the text). */
  private readonly held: string[] = [];

  constructor(
    private readonly context: CoreContext,
    private readonly docs: IndexDocuments,
    private readonly live: LiveFeeder,
    private readonly corpus: Corpus,
    private readonly store: IndexStore,
    private readonly spaceId: string,
    private readonly keys: ReturnType<typeof spaceKeys>,
    /** The header of a snapshot taken now, the vectors' part aside. */
    private readonly header: () => Omit<SnapshotHeader, 'vectors'>,
  ) {}

  /** The snapshot the index was loaded from, if it was. */
  loadedKey: string | undefined;

  /** A snapshot loaded: it counts as written now, unless it must be written again (`resave`). */
  loaded(key: string): void {
    this.loadedKey = key;
    this.held.push(key);
    if (!this.docs.resave) this.lastAt = this.context.monotonic();
  }

  /** Enough changed since the last snapshot to write one (SNAPSHOT_AFTER_CHANGES, or a first build worth keeping). */
  due(): boolean {
    const docs = this.docs;
    return (
      docs.resave ||
      (docs.changes > 0 && (docs.changes >= SNAPSHOT_AFTER_CHANGES || docs.vectorsUnsaved || (docs.worthSaving && docs.index.size >= SNAPSHOT_MIN_DOCUMENTS)))
    );
  }

  /**
   * Writes a snapshot in the background when enough changed; `now` skips the interval (a process
   * about to exit), `force` every threshold (a repair that wants the store's snapshot current).
   */
  ifDue(now = false, force = false): void {
    if (!force && !this.due()) return;
    const at = this.context.monotonic();
    if (!force && !now && at - this.lastAt < SNAPSHOT_MIN_INTERVAL_MS) return;
    this.lastAt = at;
    const { docs, context } = this;
    docs.worthSaving = false;
    docs.resave = false;
    docs.vectorsUnsaved = false;
    // Encoded now, in one go: the header and the engine must describe the same instant.
    const snapshot = encodeSnapshot(
      this.header(),
      docs.index,
      docs.vectors && docs.vectors.size > 0 && context.embeddings ? { model: context.embeddings.label, buffer: docs.vectors.serialize() } : undefined,
      [docs.timeline.section()],
    );
    const taken = docs.changes;
    const { filenames, version } = this.live.snapshotNames();
    this.saving = this.saving
      .then(async () => {
        // A space deleted meanwhile must not come back as an _index/ folder.
        if (!(await context.storage.stat(this.keys.meta))) return;
        // The texts of the notes it covers (those known: a note read from an older snapshot may have
        // none; live_search reads that one). Notes never change, so a text taken now is as good as one
        // taken at the encoding.
        const liveTexts = await this.live.loadTexts().then(
          () => this.live.encodeTexts(filenames, version),
          () => undefined,
        );
        const written = await this.store.save(this.spaceId, { snapshot, ...(liveTexts ? { live: liveTexts } : {}) });
        this.held.push(...written);
        docs.changes -= Math.min(docs.changes, taken);
        context.logger.debug(`search index of '${this.spaceId}': snapshot ${written.join(', ')} (${docs.index.size} documents)`);
      })
      .catch((error: unknown) => context.logger.warn(`could not write a search index snapshot of '${this.spaceId}'`, { error: String(error) }));
  }

  /**
   * A process that only ran live_search, and read many notes the newest texts file did not cover
   * (none was ever written: no index was ever built): writes their texts alone, for the next process.
   * Only notes still live now go in — a note forgotten meanwhile has left live/.
   */
  async saveTextsIfDue(loaded: boolean): Promise<void> {
    if (loaded || this.live.textsUnsaved < SNAPSHOT_AFTER_CHANGES) return;
    this.live.textsUnsaved = 0;
    try {
      const listing = await this.corpus.liveNames(this.spaceId);
      const filenames = listing.map((name) => name.filename);
      this.live.texts.retain(new Set(filenames));
      if (!(await this.context.storage.stat(this.keys.meta))) return;
      const texts = this.live.encodeTexts(filenames, this.corpus.listingVersion(this.keys.live, listing));
      this.held.push(...(await this.store.save(this.spaceId, { live: texts })));
    } catch (error) {
      this.context.logger.warn(`could not write the live notes' texts of '${this.spaceId}'`, { error: String(error) });
    }
  }

  /** A forget was met: every snapshot written or loaded before it is deleted (it may hold the notes' text). */
  dropHeld(): void {
    this.saving = this.saving.then(async () => {
      const doomed = this.held.splice(0);
      if (doomed.length > 0)
        await this.context.storage
          .deleteMany(doomed)
          .catch((error: unknown) => this.context.logger.warn('could not delete index snapshots', { error: String(error) }));
    });
  }
}
