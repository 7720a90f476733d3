import { BoundedCache } from '../../shared/bounded-cache.js';
import type { Anchor } from '../anchors/anchor.js';
import type { CoreContext } from '../context.js';
import { parseRecord, type SummaryRecord } from '../derived/summary-record.js';
import { spaceKeys } from '../layout.js';
import { parseNoteName } from '../note-name.js';
import type { Corpus, Level0Note } from '../note/corpus.js';
import { type DocMeta, parsePreimageDocId, summaryText } from './documents.js';
import type { SpaceIndex } from './space-index.js';

/** Summary records kept parsed, by space and id (each about a few kilobytes: their text). */
const SUMMARIES_KEPT = 2_000;

/** The full text of the documents recall finds: what a hit shows and what is embedded. */
export function createDocumentText(context: CoreContext, corpus: Corpus) {
  const { storage } = context;
  const summaryCache = new BoundedCache<{ etag: string; doc: SummaryRecord }>(SUMMARIES_KEPT);

  /** A summary record, read once per version. */
  const readSummary = async (spaceId: string, level: number, id: string): Promise<SummaryRecord | null> => {
    const object = await storage.get(spaceKeys(spaceId).summary(level, id));
    if (!object) return null;
    const cacheKey = `${spaceId}/${id}`;
    const cached = summaryCache.get(cacheKey);
    if (cached?.etag === object.etag) return cached.doc;
    const doc = parseRecord(object.body, { level, id });
    if (doc) summaryCache.set(cacheKey, { etag: object.etag, doc }, 1);
    return doc;
  };

  /** The note a live or history document is (the corpus keeps it read), or undefined when it is gone. */
  const noteOf = async (spaceId: string, meta: DocMeta, source: Level0Note['source']) => {
    const name = parseNoteName(meta.ref);
    if (!name) return undefined;
    const note0: Level0Note = { ...name, source, ...(meta.consolidation_id ? { consolidation_id: meta.consolidation_id } : {}) };
    return (await corpus.read(spaceId, [note0]))[0];
  };

  /** A note's text as indexed (its tags after it), or null when it is gone. */
  const noteText = async (spaceId: string, meta: DocMeta, source: Level0Note['source']): Promise<string | null> => {
    const note = await noteOf(spaceId, meta, source);
    return note ? (note.tags.length > 0 ? `${note.content}\n[tags: ${note.tags.join(', ')}]` : note.content) : null;
  };

  /** The anchors of a note a hit shows (core/anchors/): none for any other document, or a note gone since it was indexed. */
  const anchorsOf = async (spaceId: string, meta: DocMeta): Promise<Anchor[]> => {
    if (meta.source !== 'live' && meta.source !== 'history') return [];
    return (await noteOf(spaceId, meta, meta.source))?.anchors ?? [];
  };

  /** The full text of a document, or null when it is gone since it was indexed. */
  const textOf = async (spaceId: string, index: SpaceIndex, meta: DocMeta): Promise<string | null> => {
    switch (meta.source) {
      case 'live':
      case 'history':
        return noteText(spaceId, meta, meta.source);
      case 'bank':
        return index.sectionText(meta.id) ?? null;
      case 'bank_history': {
        const preimage = parsePreimageDocId(meta.id);
        if (!preimage) return null;
        const sections = await corpus.historyPreimages(spaceId, preimage.compactionId).catch((error: unknown) => corpus.skipDamaged('recall', error, null));
        return sections?.[preimage.i]?.content ?? null;
      }
      case 'synthesis':
        return (await storage.get(spaceKeys(spaceId).synthesis))?.body.toString('utf8') ?? null;
      case 'summary': {
        const doc = await readSummary(spaceId, meta.level as number, meta.ref);
        return doc ? summaryText(doc) : null;
      }
    }
  };

  return { readSummary, textOf, anchorsOf };
}
