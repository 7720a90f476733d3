import { mapLimit } from '../../shared/concurrency.js';
import type { Logger } from '../../shared/log.js';
import { listAll, listPrefixes } from '../../storage/list.js';
import type { StorageDriver } from '../../storage/types.js';
import { MAX_LEVEL, parseRecord } from '../derived/summary-record.js';
import type { spaceKeys } from '../layout.js';
import type { Corpus } from '../note/corpus.js';
import { summaryDocId, summaryText } from './documents.js';
import { COVERAGE_BYTES, type IndexDocuments } from './index-documents.js';
import type { SnapshotHeader, SummaryCoverage } from './index-store.js';

/**
 * The summaries' feeder of a space index: each summary an `m:` document, level by level, read again
 * when its etag changed (a sealed one never changes), with its coverage kept beside.
 */
export class SummariesFeeder {
  /** Summaries indexed, by id (level, range, whether sealed). */
  readonly coverage = new Map<string, SummaryCoverage>();
  private readonly lastListings = new Map<number, unknown>();

  constructor(
    private readonly docs: IndexDocuments,
    private readonly corpus: Corpus,
    private readonly storage: StorageDriver,
    private readonly logger: Logger,
    private readonly keys: ReturnType<typeof spaceKeys>,
  ) {}

  fromSnapshot(header: SnapshotHeader): void {
    for (const [id, coverage] of Object.entries(header.summaries)) this.coverage.set(id, coverage);
  }

  /** Every summary leaves, to be read again (a forget: those covering its notes were deleted, and a sealed one is otherwise never re-read). */
  reset(): void {
    for (const id of this.coverage.keys()) this.docs.remove(summaryDocId(id));
    this.coverage.clear();
    this.lastListings.clear();
  }

  /** The level folders that exist (one listing), then each of them: a space without summaries costs one request. */
  async refresh(): Promise<void> {
    const folders = new Set(await this.corpus.cachedListing(this.keys.summaries, () => listPrefixes(this.storage, this.keys.summaries)));
    for (let level = 1; level <= MAX_LEVEL; level++) {
      const folder = this.keys.summaryLevel(level);
      if (!folders.has(folder) && ![...this.coverage.values()].some((coverage) => coverage.level === level)) continue;
      await this.refreshLevel(level, folder);
    }
  }

  private async refreshLevel(level: number, folder: string): Promise<void> {
    const listing = await this.corpus.cachedListing(folder, async () => {
      const found: string[] = [];
      for await (const object of listAll(this.storage, folder, { delimiter: '/' })) if (object.key.endsWith('.json')) found.push(object.key);
      return found;
    });
    if (listing === this.lastListings.get(level)) return;
    const ids = new Set<string>();
    await mapLimit(listing, this.storage.parallelism, async (key) => {
      const id = key.slice(folder.length, -'.json'.length);
      ids.add(id);
      await this.readSummary(key, level, id);
    });
    for (const [id, coverage] of [...this.coverage]) {
      if (coverage.level !== level || ids.has(id)) continue;
      this.coverage.delete(id);
      this.docs.remove(summaryDocId(id));
    }
    this.lastListings.set(level, listing);
  }

  private async readSummary(key: string, level: number, id: string): Promise<void> {
    const known = this.coverage.get(id);
    if (known?.sealed) return; // a sealed summary never changes
    const object = await this.storage.get(key);
    if (!object || object.etag === known?.etag) return;
    const record = parseRecord(object.body, { level, id });
    if (!record) {
      this.logger.warn(`summary ${key} is unreadable; left out of the search index`);
      return;
    }
    this.docs.put(summaryDocId(id), summaryText(record));
    this.coverage.set(id, { etag: object.etag, level: record.level, sealed: record.sealed, range_start: record.range_start, range_end: record.range_end });
  }

  /** The snapshot header's part. */
  header(): SnapshotHeader['summaries'] {
    return Object.fromEntries(this.coverage);
  }

  bytes(): number {
    return this.coverage.size * COVERAGE_BYTES;
  }
}
