import type { StorageDriver } from '../../storage/types.js';
import type { spaceKeys } from '../layout.js';
import { SYNTHESIS_DOC_ID } from './documents.js';
import type { IndexDocuments } from './index-documents.js';
import type { SnapshotHeader } from './index-store.js';

/** The synthesis's feeder of a space index: one document, read again when its etag changed. */
export class SynthesisFeeder {
  /** The etag indexed (null: none). */
  coverage: SnapshotHeader['synthesis'] = null;

  constructor(
    private readonly docs: IndexDocuments,
    private readonly storage: StorageDriver,
    private readonly keys: ReturnType<typeof spaceKeys>,
  ) {}

  fromSnapshot(header: SnapshotHeader): void {
    this.coverage = header.synthesis;
  }

  async refresh(): Promise<void> {
    const info = await this.storage.stat(this.keys.synthesis);
    if ((info?.etag ?? null) === (this.coverage?.etag ?? null)) return;
    const object = info ? await this.storage.get(this.keys.synthesis) : null;
    this.docs.remove(SYNTHESIS_DOC_ID);
    const text = object?.body.toString('utf8') ?? '';
    if (text.trim()) this.docs.put(SYNTHESIS_DOC_ID, text);
    this.coverage = object ? { etag: object.etag } : null;
  }
}
