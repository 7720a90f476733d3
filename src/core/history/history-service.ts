import { mapLimit } from '../../shared/concurrency.js';
import { invalid, LiveMemError } from '../../shared/errors.js';
import { authorize, type Caller } from '../caller.js';
import { type HistoryRecord, keepsPreimages } from '../commit/history-record.js';
import type { CoreContext } from '../context.js';
import type { Corpus } from '../note/corpus.js';
import { requireSpace } from '../space-meta.js';
import { validateLimit, validateSpaceId } from '../validate.js';

/** One entry of history_list: a consolidation (time range, notes), a compaction or a revision (pre-images). */
export interface HistoryEntry {
  consolidation_id: string;
  kind: 'consolidation' | 'compaction' | 'revision' | 'forget';
  committed_at: string;
  time_range?: { oldest: string | null; newest: string | null };
  notes_count?: number;
  preimages_count?: number | undefined;
  bank_files: Array<{ filename: string; kind: string }>;
  by: string | undefined;
  model: string | undefined;
  /** A revision: what a person did (write, delete, rules, revert), why, and the revision it reverts; a forget: `forget`. */
  action?: string;
  reason?: string | null;
  reverts?: string;
  /** A forget: the consolidations whose notes it removed. */
  consolidations?: string[];
}

/** A record as history_list shows it: a compaction moved no note, it says how many sections it kept the earlier text of instead. */
function entryOf(record: HistoryRecord): HistoryEntry {
  return {
    consolidation_id: record.id,
    kind: record.kind,
    committed_at: record.committed_at,
    ...(keepsPreimages(record) ? { preimages_count: record.preimages } : { time_range: record.time_range, notes_count: record.notes.length }),
    bank_files: record.bank_files,
    by: record.revision?.by ?? (typeof record.metrics.by === 'string' ? record.metrics.by : undefined),
    model: typeof record.metrics.model === 'string' ? record.metrics.model : undefined,
    ...(record.revision
      ? {
          action: record.revision.action,
          reason: record.revision.reason,
          ...(record.revision.reverts ? { reverts: record.revision.reverts } : {}),
          ...(record.revision.secret === true ? { secret: true } : {}),
        }
      : {}),
    // A forget: how many notes, from which consolidations; never what they said.
    ...(record.forget
      ? {
          action: 'forget',
          by: record.forget.by,
          reason: record.forget.reason,
          notes_count: record.forget.notes_count,
          consolidations: record.forget.consolidations,
        }
      : {}),
  };
}

/**
 * Reading a space's history (history_list, history_read): the records of consolidations,
 * compactions, revisions and forgets, and what each moved or replaced. Read from the store through
 * the corpus; no index.
 */
export function createHistoryService(context: CoreContext, corpus: Corpus) {
  /**
   * Up to `count` complete history entries, newest first, older than `before` when given: only the
   * records of the page are read (a damaged or unfinished one is passed over, as corpus.history does),
   * not every record of the space.
   */
  const page = async (spaceId: string, before: string | undefined, count: number): Promise<HistoryRecord[]> => {
    const ids = await corpus.historyIds(spaceId);
    await corpus.sync(spaceId, ids);
    const newer = (before === undefined ? ids : ids.filter((cid) => cid < before)).reverse();
    const found: HistoryRecord[] = [];
    for (let at = 0; at < newer.length && found.length < count; ) {
      const batch = newer.slice(at, at + count - found.length);
      at += batch.length;
      const read = await mapLimit(batch, context.storage.parallelism, (cid) =>
        corpus.record(spaceId, cid).catch((error: unknown) => corpus.skipDamaged('the history', error, null)),
      );
      for (const record of read) if (record) found.push(record);
    }
    return found;
  };

  return {
    /** Consolidations, newest first, `limit` at a time; `before` continues after a page's last id. */
    async list(caller: Caller, input: { space_id: string; limit?: number; before?: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      const limit = validateLimit(input.limit ?? 20, 1000);
      await requireSpace(context, spaceId);
      const found = await page(spaceId, input.before, limit + 1);
      const consolidations = found.slice(0, limit).map(entryOf);
      const hasMore = found.length > limit;
      return {
        status: 'ok' as const,
        space_id: spaceId,
        consolidations,
        total: consolidations.length,
        has_more: hasMore,
        ...(hasMore ? { next_before: consolidations[consolidations.length - 1]?.consolidation_id } : {}),
      };
    },

    /**
     * One history entry: its record and, for a consolidation, the notes it moved out of live/, oldest
     * first; for a compaction, the sections it rewrote as they were (`preimages`). `total` counts what it holds.
     */
    async read(caller: Caller, input: { space_id: string; consolidation_id: string }) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'read', spaceId);
      const cid = typeof input.consolidation_id === 'string' ? input.consolidation_id : '';
      if (!/^[0-9A-Za-z][0-9A-Za-z_-]{0,127}$/.test(cid)) throw invalid(`invalid consolidation_id ${JSON.stringify(cid)}`);
      await requireSpace(context, spaceId);
      await corpus.sync(spaceId); // a forget committed by another process since: its notes are not returned
      const record = await corpus.record(spaceId, cid, { fresh: true });
      if (!record) throw new LiveMemError('not_found', `no consolidation '${cid}' in space '${spaceId}'`, { space_id: spaceId, consolidation_id: cid });
      if (keepsPreimages(record)) {
        const preimages = await corpus.historyPreimages(spaceId, cid);
        return { status: 'ok' as const, space_id: spaceId, consolidation: record, notes: [], preimages, total: preimages.length };
      }
      const notes = (await corpus.historyNotes(spaceId, cid)).map(({ filename, timestamp, agent, category, tags, content }) => ({
        filename,
        timestamp,
        agent,
        category,
        tags,
        content,
      }));
      return { status: 'ok' as const, space_id: spaceId, consolidation: record, notes, preimages: [], total: notes.length };
    },
  };
}

export type HistoryService = ReturnType<typeof createHistoryService>;
