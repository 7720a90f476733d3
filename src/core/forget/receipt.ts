import { mapLimit } from '../../shared/concurrency.js';
import { listPrefixes } from '../../storage/list.js';
import { parseManifest } from '../backup-manifest.js';
import type { CoreContext } from '../context.js';
import { BACKUPS_PREFIX, backupKeys, SYNTHESIS_FILE, spaceKeys } from '../layout.js';
import { noteDocId } from '../recall/documents.js';
import type { PurgedBackup } from './purge-backups.js';
import type { BankReview, TextHit } from './review.js';
import type { sideRecords } from './roll-forward.js';
import type { Located } from './types.js';

/**
 * A forget's receipt, the same for a dry run and a confirmed forget: every place the notes are
 * removed (or would be) from, what may still derive from them or quote them, and the backups that
 * hold them — or were rewritten without them. Never a word of the notes themselves.
 */

/** What was (or would be) removed, as the roll-forward (roll-forward.ts) or the dry run found it. */
export type Removed = {
  summaries: Array<{ level: number; id: string }>;
  snapshots: string[];
  live: string[];
  backups?: PurgedBackup[];
} & Awaited<ReturnType<typeof sideRecords>>;

/** Backups of the space whose files hold one of the notes: its live file, its consolidation's notes.json, a summary covering it. */
async function backupsHolding(context: CoreContext, spaceId: string, located: readonly Located[], summaries: ReadonlyArray<{ level: number; id: string }>) {
  const { storage } = context;
  const paths = new Set<string>([
    ...located.map((note) => `live/${note.filename}`),
    ...located.flatMap((note) => (note.consolidation_id ? [`history/${note.consolidation_id}/notes.json`] : [])),
    ...summaries.map(({ level, id }) => `_summaries/L${level}/${id}.json`),
  ]);
  const root = `${BACKUPS_PREFIX}${spaceId}/`;
  const stamps = (await listPrefixes(storage, root)).map((prefix) => prefix.slice(root.length, -1));
  const found = await mapLimit(stamps, storage.parallelism, async (stamp) => {
    const object = await storage.get(backupKeys(spaceId, stamp).manifest);
    if (!object) return null; // unfinished: holds nothing a restore would bring back
    try {
      const holds = parseManifest(object.body.toString('utf8'), `backup ${spaceId}/${stamp}`)
        .files.map((file) => file.path)
        .filter((path) => paths.has(path));
      return holds.length > 0 ? { backup_id: `${spaceId}/${stamp}`, holds } : null;
    } catch {
      return { backup_id: `${spaceId}/${stamp}`, holds: [], problem: 'its manifest is unreadable: it may hold them' };
    }
  });
  return found.filter((entry) => entry !== null);
}

/** The receipt: every place the notes are removed (or would be) from, and what still may hold them. */
export async function receipt(
  context: CoreContext,
  spaceId: string,
  located: readonly Located[],
  removed: Removed,
  purge: boolean,
  review: BankReview,
  hits: TextHit[],
) {
  const byConsolidation = new Map<string, string[]>();
  for (const note of located)
    if (note.consolidation_id) byConsolidation.set(note.consolidation_id, [...(byConsolidation.get(note.consolidation_id) ?? []), note.filename]);
  const holding = await backupsHolding(context, spaceId, located, removed.summaries);
  const purged = purge ? removed.backups : undefined; // absent on a dry run: it says what would be rewritten
  return {
    notes: located.map((note) => ({ filename: note.filename, source: note.consolidation_id ? 'history' : 'live', consolidation_id: note.consolidation_id })),
    notes_count: located.length,
    live: removed.live,
    history: [...byConsolidation].map(([cid, notes]) => ({ consolidation_id: cid, file: spaceKeys(spaceId).historyNotes(cid), notes })),
    index_documents: located.flatMap((note) => [noteDocId(note.filename), ...(note.consolidation_id ? [noteDocId(note.filename, note.consolidation_id)] : [])]),
    vectors: 'removed with their index documents',
    snapshots: removed.snapshots,
    summaries: removed.summaries,
    synthesis_copies: removed.synthesis_copies,
    jobs: removed.jobs,
    quarantined: removed.quarantined,
    temp_files: removed.temp_files,
    bank_review: review.map((entry) => ({
      ...entry,
      note: 'may derive from these notes (so may the synthesis it wrote, since rewritten by later consolidations): review with bank_read, correct with bank_write',
    })),
    text_hits: hits,
    text_hits_note:
      hits.length === 0
        ? 'no line of the synthesis, the bank or earlier bank text quotes these notes'
        : `${hits.length} text(s) still quote these notes (the lines listed): a forget does not rewrite them; correct each with bank_write (the synthesis as ${SYNTHESIS_FILE}) and secret=true (CLI: --secret), which keeps the removed lines out of history too`,
    ...(purged
      ? {
          backups: [],
          backups_purged: purged,
          backups_note:
            purged.length > 0
              ? `${purged.length} backup(s) of '${spaceId}' rewritten without these notes (files, then manifest sizes and checksums): a restore no longer brings them back; archives downloaded or exported before are out of live-mem's reach`
              : `no backup of '${spaceId}' held these notes`,
        }
      : {
          backups: holding,
          backups_purged: false,
          backups_note:
            holding.length === 0
              ? `no backup of '${spaceId}' holds these notes`
              : purge
                ? `${holding.length} backup(s) of '${spaceId}' hold these notes: with confirm they are rewritten without them (purge_backups)`
                : `${holding.length} backup(s) of '${spaceId}' still hold these notes and were not changed: a restore brings them back; forget with purge_backups (CLI: --purge-backups) to rewrite them, or delete them (backup_delete)`,
        }),
  };
}
