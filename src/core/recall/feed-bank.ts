import { mapLimit } from '../../shared/concurrency.js';
import { listAll } from '../../storage/list.js';
import type { StorageDriver } from '../../storage/types.js';
import type { spaceKeys } from '../layout.js';
import { bankSections } from '../markdown/sections.js';
import type { Corpus } from '../note/corpus.js';
import { isStoredBankFilename } from '../validate.js';
import { COVERAGE_BYTES, type IndexDocuments } from './index-documents.js';
import type { SnapshotHeader } from './index-store.js';

/**
 * The bank's feeder of a space index: each bank file's sections as `b:` documents, read again only
 * when the file's etag changed; their text and heading path kept beside (the bank is small).
 */
export class BankFeeder {
  /** Bank files by etag, with their sections (the snapshot carries them). */
  files: SnapshotHeader['bank'] = {};
  private lastListing: unknown;
  private readonly sections = new Map<string, { file: string; path: string[]; text: string }>();

  constructor(
    private readonly docs: IndexDocuments,
    private readonly corpus: Corpus,
    private readonly storage: StorageDriver,
    private readonly keys: ReturnType<typeof spaceKeys>,
  ) {}

  fromSnapshot(header: SnapshotHeader): void {
    this.files = header.bank;
    for (const [file, entry] of Object.entries(this.files))
      for (const section of entry.sections) this.sections.set(section.id, { file, path: section.path, text: section.text });
  }

  /** A bank section's file, heading path and text, from memory. */
  section(id: string): { file: string; path: string[]; text: string } | undefined {
    return this.sections.get(id);
  }

  async refresh(): Promise<void> {
    const files = await this.corpus.cachedListing(this.keys.bank, async () => {
      const found: string[] = [];
      for await (const object of listAll(this.storage, this.keys.bank, { delimiter: '/' })) {
        const name = object.key.slice(this.keys.bank.length);
        if (isStoredBankFilename(name)) found.push(name);
      }
      return found;
    });
    if (files === this.lastListing) return;
    const next: SnapshotHeader['bank'] = {};
    await mapLimit(files, this.storage.parallelism, async (file) => {
      const entry = await this.readFile(file);
      if (entry) next[file] = entry;
    });
    for (const [file, entry] of Object.entries(this.files)) {
      if (next[file]) continue;
      for (const section of entry.sections) {
        this.docs.remove(section.id);
        this.sections.delete(section.id);
      }
    }
    this.files = next;
    this.lastListing = files;
  }

  /** One bank file's entry: as known when its etag did not change, else read and indexed again (null: gone). */
  private async readFile(file: string): Promise<SnapshotHeader['bank'][string] | null> {
    const known = this.files[file];
    const info = await this.storage.stat(this.keys.bankFile(file));
    if (!info) return null;
    if (known && known.etag === info.etag) return known;
    const object = await this.storage.get(this.keys.bankFile(file));
    if (!object) return null;
    for (const section of known?.sections ?? []) this.docs.remove(section.id);
    const sections = bankSections(file, object.body.toString('utf8'));
    for (const section of sections) {
      this.docs.put(section.id, `${section.path.join(' ')}\n${section.text}`);
      this.sections.set(section.id, { file, path: section.path, text: section.text });
    }
    return { etag: object.etag, sections: sections.map(({ id, path, text }) => ({ id, path, text })) };
  }

  bytes(): number {
    let total = 0;
    for (const section of this.sections.values()) total += COVERAGE_BYTES + section.text.length;
    return total;
  }
}
