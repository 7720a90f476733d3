import { mapLimit } from '../../shared/concurrency.js';
import { listPrefixes } from '../../storage/list.js';
import { type Manifest, type ManifestFile, parseManifest, sha256, totalSize } from '../backup-manifest.js';
import type { CoreContext } from '../context.js';
import { decodeHistoryNotes, encodeHistoryNotes } from '../commit/history.js';
import { BACKUPS_PREFIX, backupKeys } from '../layout.js';
import { recordWithout, recordWithoutSynthesis } from '../commit/history-record.js';
import { coveringSummaries, parseRecord } from '../derived/summary-record.js';

export interface PurgedBackup {
  backup_id: string;
  /** Files taken out of the backup (the notes' live files, summaries covering them). */
  removed: string[];
  /** Files rewritten without the notes (a consolidation's notes.json and record.json). */
  rewritten: string[];
}

const SUMMARY_PATH = /^_summaries\/L([1-6])\/([^/]+)\.json$/;
const RECORD_PATH = /^history\/([^/]+)\/record\.json$/;

/**
 * Rewrites every backup of a space without the forgotten notes (a forget with `purge_backups`): their
 * live files and the summaries covering them (and those above) taken out, the notes.json of the
 * consolidation holding each rewritten without it (its record.json's `notes` too), the copy of the
 * synthesis taken out of that record and every later one, then the manifest
 * with the new sizes and checksums, last. Idempotent: run again after a cut, it finds the files done
 * and writes the manifest from what the backup holds. Runs under the space's lease, as backups are taken.
 */
export async function purgeForgotten(
  context: CoreContext,
  spaceId: string,
  notes: ReadonlyArray<{ filename: string; consolidation_id: string | null }>,
  removal: { forget_id: string; at: string },
): Promise<PurgedBackup[]> {
  const { storage } = context;
  const root = `${BACKUPS_PREFIX}${spaceId}/`;
  const stamps = (await listPrefixes(storage, root)).map((prefix) => prefix.slice(root.length, -1));
  const names = new Set(notes.map((note) => note.filename));
  const byConsolidation = new Map<string, Set<string>>();
  for (const note of notes) {
    if (note.consolidation_id) byConsolidation.set(note.consolidation_id, new Set([...(byConsolidation.get(note.consolidation_id) ?? []), note.filename]));
  }
  const purged: PurgedBackup[] = [];
  for (const stamp of stamps) {
    const keys = backupKeys(spaceId, stamp);
    const manifestObject = await storage.get(keys.manifest);
    if (!manifestObject) continue; // unfinished: no restore reads it (backup deletion sweeps it)
    let manifest: Manifest;
    try {
      manifest = parseManifest(manifestObject.body.toString('utf8'), `backup ${spaceId}/${stamp}`);
    } catch (error) {
      context.logger.warn(`${error instanceof Error ? error.message : String(error)}; not purged`); // no restore reads it either
      continue;
    }
    const paths = new Set(manifest.files.map((file) => file.path));
    const removed = new Set<string>([...names].map((name) => `live/${name}`).filter((path) => paths.has(path)));
    // Summaries as the backup holds them: those covering a note, and those above; a missing one was taken out by an earlier run.
    const summaries = await mapLimit(
      manifest.files.filter((file) => SUMMARY_PATH.test(file.path)),
      storage.parallelism,
      async (file) => {
        const [, level, id] = SUMMARY_PATH.exec(file.path) as RegExpExecArray;
        const object = await storage.get(keys.file(file.path));
        if (!object) return { path: file.path, level: Number(level), id: id as string, covers: null };
        return {
          path: file.path,
          level: Number(level),
          id: id as string,
          covers: parseRecord(object.body, { level: Number(level), id: id as string })?.covers ?? null,
        };
      },
    );
    const doomed = new Set(coveringSummaries(summaries, names).map(({ level, id }) => `_summaries/L${level}/${id}.json`));
    for (const path of doomed) removed.add(path);
    const rewritten = new Set<string>();
    for (const [cid, gone] of byConsolidation) {
      const notesPath = `history/${cid}/notes.json`;
      if (!paths.has(notesPath)) continue;
      const object = await storage.get(keys.file(notesPath));
      if (object) {
        const held = decodeHistoryNotes(object.body, keys.file(notesPath));
        const kept = held.filter((note) => !gone.has(note.filename));
        if (kept.length < held.length) await storage.put(keys.file(notesPath), encodeHistoryNotes(kept), { contentType: 'application/json' });
      }
      rewritten.add(notesPath);
      const recordPath = `history/${cid}/record.json`;
      const record = paths.has(recordPath) ? await storage.get(keys.file(recordPath)) : null;
      if (record) {
        try {
          const raw = JSON.parse(record.body.toString('utf8')) as Record<string, unknown>;
          if (Array.isArray(raw.notes) && raw.notes.some((name) => gone.has(String(name)))) {
            const next = recordWithout(raw, gone);
            await storage.put(keys.file(recordPath), `${JSON.stringify(next, null, 2)}\n`, { contentType: 'application/json' });
          }
          rewritten.add(recordPath);
        } catch {
          // a damaged record in a backup: left as it is (its notes.json is what holds the text)
        }
      }
    }
    // Every consolidation record from the first holding a note on: its copy of the synthesis may carry their text.
    const first = [...byConsolidation.keys()].sort()[0];
    for (const file of manifest.files) {
      const cid = RECORD_PATH.exec(file.path)?.[1];
      if (first === undefined || cid === undefined || cid < first) continue;
      const object = await storage.get(keys.file(file.path));
      let raw: Record<string, unknown> | null = null;
      try {
        raw = object ? (JSON.parse(object.body.toString('utf8')) as Record<string, unknown>) : null;
      } catch {
        // damaged: left as it is
      }
      const next = raw && typeof raw === 'object' ? recordWithoutSynthesis(raw, removal) : null;
      if (!next) continue;
      await storage.put(keys.file(file.path), `${JSON.stringify(next, null, 2)}\n`, { contentType: 'application/json' });
      rewritten.add(file.path);
    }
    if (removed.size === 0 && rewritten.size === 0) continue;
    await storage.deleteMany([...removed].map((path) => keys.file(path)));
    // The manifest last: sizes and checksums of what the backup holds now, so a restore verifies it.
    const files: ManifestFile[] = [];
    for (const file of manifest.files) {
      if (removed.has(file.path)) continue;
      if (!rewritten.has(file.path)) {
        files.push(file);
        continue;
      }
      const object = await storage.get(keys.file(file.path));
      files.push(object ? { path: file.path, size: object.body.length, sha256: sha256(object.body) } : file);
    }
    const next = `${JSON.stringify({ ...manifest, files, total_size: totalSize(files) }, null, 2)}\n`;
    if (next === manifestObject.body.toString('utf8')) continue; // purged by an earlier run
    await storage.put(keys.manifest, next, { contentType: 'application/json' });
    purged.push({ backup_id: `${spaceId}/${stamp}`, removed: [...removed], rewritten: [...rewritten] });
  }
  return purged;
}
