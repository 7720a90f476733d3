import { mapLimit } from '../../shared/concurrency.js';
import { invalid, LiveMemError } from '../../shared/errors.js';
import { isPlainFileName } from '../../shared/keys.js';
import { isoSeconds } from '../../shared/time.js';
import { listKeys, listPrefixes } from '../../storage/list.js';
import { authorize, type Caller } from '../caller.js';
import { type CommitRecord, historyId } from '../commit/record.js';
import { writeCommit } from '../commit/commit.js';
import { applyForget, sideRecords, summariesCovering } from './roll-forward.js';
import { lockSpace, PERSON_LEASE_WAIT_MS } from '../commit/space-lock.js';
import type { CoreContext } from '../context.js';
import { readBankFiles } from '../bank/bank-files.js';
import { BACKUPS_PREFIX, backupKeys, SYNTHESIS_FILE, spaceKeys, isIndexFile } from '../layout.js';
import { parseNoteName } from '../note-name.js';
import type { Corpus } from '../note/corpus.js';
import { FORGET_ID_SUFFIX, keepsPreimages } from '../commit/history-record.js';
import { noteDocId } from '../recall/documents.js';
import { MAX_SEARCH_LIMIT } from '../recall/recall-service.js';
import { parseManifest } from '../backup-manifest.js';
import type { PurgedBackup } from './purge-backups.js';
import { requireSpace } from '../space-meta.js';
import { quotesOf, quotingLines } from './quotes.js';
import { validateReason, validateSpaceId } from '../validate.js';

type SideRecords = Awaited<ReturnType<typeof sideRecords>>;

const consolidationsOf = (located: readonly Located[]): string[] => [
  ...new Set(located.flatMap((note) => (note.consolidation_id ? [note.consolidation_id] : []))),
];

/** At most this many notes in one forget (refs, or the notes a query selects). */
const MAX_FORGET = 1_000;
/** Notes a query selects by default (at most: what one search answers, MAX_SEARCH_LIMIT). */
const QUERY_LIMIT = 20;

export interface ForgetInput {
  space_id: string;
  /** Note file names (live or consolidated), as history_read, live_read and memory_search give them. */
  refs?: string[];
  /** Or a query: the notes (live and consolidated) it finds, best first, up to `limit`. */
  query?: string;
  limit?: number;
  /** Without it, a dry run: the receipt of what would be removed, nothing changed. */
  confirm?: boolean;
  reason?: string;
  /** Rewrite the space's backups without the notes too (their files and manifest checksums). */
  purge_backups?: boolean;
}

interface Located {
  filename: string;
  /** The consolidation whose notes.json holds it; null: in live/ only. */
  consolidation_id: string | null;
}

/**
 * Forget, with a receipt: notes removed for good, wherever they are kept — live/, the notes.json of the
 * consolidation that took them (its record noting the removal), the summaries covering them, the
 * search index of every process and its snapshots with the vectors — through consolidation's one
 * commit protocol (`kind: 'forget'`, see commit/forget.ts), under the space's lease.
 * What it cannot remove is reported: bank files the consolidations that folded the notes wrote (they
 * may derive from them), and backups that still hold them.
 */
export function createForgetService(
  context: CoreContext,
  deps: {
    corpus: Corpus;
    search: (
      caller: Caller,
      input: { space_id: string; query: string; sources: string[]; limit: number },
    ) => Promise<{ results: Array<{ source: string; ref: string }> }>;
    onForgotten?: (spaceId: string) => Promise<void>;
    /** Section-level provenance (recall/sources.ts): the bank sections each note fed. */
    sectionsOf?: (spaceId: string, note: string) => Promise<Array<{ filename: string; path: string[] }>>;
  },
) {
  const { storage } = context;
  const { corpus } = deps;

  /** The names to forget: the refs given (each must be a note file name), or what the query finds among notes. */
  const select = async (caller: Caller, spaceId: string, input: ForgetInput): Promise<string[]> => {
    const hasRefs = Array.isArray(input.refs) && input.refs.length > 0;
    const hasQuery = typeof input.query === 'string' && input.query.trim() !== '';
    if (hasRefs === hasQuery) throw invalid('give either refs (note file names) or a query, not both and not neither');
    if (hasQuery) {
      const limit = input.limit ?? QUERY_LIMIT;
      if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SEARCH_LIMIT) throw invalid(`limit must be an integer from 1 to ${MAX_SEARCH_LIMIT}`);
      const found = await deps.search(caller, { space_id: spaceId, query: (input.query as string).trim(), sources: ['live', 'history'], limit });
      const names = [...new Set(found.results.map((hit) => hit.ref))];
      if (names.length === 0)
        throw new LiveMemError('not_found', `no note of '${spaceId}' matches ${JSON.stringify(input.query)}: nothing was forgotten`, { space_id: spaceId });
      return names;
    }
    const refs = [...new Set((input.refs as unknown[]).map((ref) => (typeof ref === 'string' ? ref.trim() : '')))];
    if (refs.length > MAX_FORGET) throw invalid(`at most ${MAX_FORGET} notes at once, got ${refs.length}`);
    const bad = refs.filter((ref) => !isPlainFileName(ref) || !parseNoteName(ref));
    if (bad.length > 0)
      throw invalid(
        `not a note file name: ${bad.map((ref) => JSON.stringify(ref)).join(', ')} (history_read, live_read and memory_search give them, e.g. 20260220T180000_alice_observation_1a2b3c4d.md)`,
      );
    return refs;
  };

  /** Where each note is kept now; `not_found` naming those that are nowhere (nothing changes). */
  const locate = async (spaceId: string, names: readonly string[]): Promise<Located[]> => {
    const level0 = new Map((await corpus.level0(spaceId)).map((note) => [note.filename, note]));
    const missing = names.filter((name) => !level0.has(name));
    if (missing.length > 0) {
      throw new LiveMemError('not_found', `no note ${missing.join(', ')} in space '${spaceId}' (live or consolidated): nothing was forgotten`, {
        space_id: spaceId,
        missing,
      });
    }
    return names.map((filename) => ({ filename, consolidation_id: level0.get(filename)?.consolidation_id ?? null }));
  };

  /** Backups of the space whose files hold one of the notes: its live file, its consolidation's notes.json, a summary covering it. */
  const backupsHolding = async (spaceId: string, located: readonly Located[], summaries: ReadonlyArray<{ level: number; id: string }>) => {
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
  };

  /**
   * Bank text that may derive from the notes, by provenance, read before the forget rewrites it: the
   * sections that cite them (`basis: 'citation'`, with `sections`), or, for a consolidation that cited
   * nothing (older ones, the Python reply format), the bank files it wrote and the synthesis
   * (`basis: 'consolidation'`).
   */
  const bankReview = async (spaceId: string, located: readonly Located[]) => {
    const cids = [...new Set(located.flatMap((note) => (note.consolidation_id ? [note.consolidation_id] : [])))];
    const records = (await Promise.all(cids.map((cid) => corpus.record(spaceId, cid)))).filter((record) => record !== null);
    return Promise.all(
      records.map(async (record) => {
        const notes = located.filter((note) => note.consolidation_id === record.id).map((note) => note.filename);
        const cited = (await Promise.all(notes.map((note) => deps.sectionsOf?.(spaceId, note) ?? []))).flat();
        const sections = [...new Map(cited.map((s) => [`${s.filename}#${s.path.join(' > ')}`, { filename: s.filename, path: s.path }])).values()];
        return {
          consolidation_id: record.id,
          basis: sections.length > 0 ? ('citation' as const) : ('consolidation' as const),
          bank_files: sections.length > 0 ? [...new Set(sections.map((s) => s.filename))] : record.bank_files.map((file) => file.filename),
          ...(sections.length > 0 ? { sections } : {}),
          synthesis: record.kind === 'consolidation',
          notes,
        };
      }),
    );
  };

  /**
   * Where the notes' words are still found, verbatim, by line (quotes.ts), read before the forget
   * takes the notes away: the synthesis, the bank files, earlier bank text (pre-images of corrections
   * and compactions). A forget rewrites none of them: a person does (`bank_write`, with `secret`).
   * Lines, not text: the receipt repeats nothing of what is forgotten.
   */
  const textHits = async (spaceId: string, located: readonly Located[]) => {
    const names = new Set(located.map((note) => note.filename));
    const notes = (await corpus.level0(spaceId)).filter((note) => names.has(note.filename));
    const quotes = quotesOf((await corpus.read(spaceId, notes)).map((note) => note.content));
    const hits: Array<{ where: 'synthesis' | 'bank' | 'bank_history'; file: string; lines: number[]; consolidation_id?: string; path?: string[] }> = [];
    const synthesis = await storage.get(spaceKeys(spaceId).synthesis);
    const synthesisLines = synthesis ? quotingLines(synthesis.body.toString('utf8'), quotes) : [];
    if (synthesisLines.length > 0) hits.push({ where: 'synthesis', file: SYNTHESIS_FILE, lines: synthesisLines });
    for (const [filename, file] of await readBankFiles(context, spaceId)) {
      const lines = quotingLines(file.content, quotes);
      if (lines.length > 0) hits.push({ where: 'bank', file: filename, lines });
    }
    for (const record of (await corpus.history(spaceId)).filter(keepsPreimages)) {
      const preimages = await corpus.historyPreimages(spaceId, record.id).catch((error: unknown) => corpus.skipDamaged('forget', error, []));
      for (const preimage of preimages) {
        const lines = quotingLines(preimage.content, quotes);
        if (lines.length > 0) hits.push({ where: 'bank_history', consolidation_id: record.id, file: preimage.filename, path: preimage.path, lines });
      }
    }
    return hits;
  };

  /** The receipt: every place the notes are removed (or would be) from, and what still may hold them. */
  const receipt = async (
    spaceId: string,
    located: readonly Located[],
    removed: { summaries: Array<{ level: number; id: string }>; snapshots: string[]; live: string[]; backups?: PurgedBackup[] } & SideRecords,
    purge: boolean,
    review: Awaited<ReturnType<typeof bankReview>>,
    hits: Awaited<ReturnType<typeof textHits>>,
  ) => {
    const byConsolidation = new Map<string, string[]>();
    for (const note of located)
      if (note.consolidation_id) byConsolidation.set(note.consolidation_id, [...(byConsolidation.get(note.consolidation_id) ?? []), note.filename]);
    const holding = await backupsHolding(spaceId, located, removed.summaries);
    const purged = purge ? removed.backups : undefined; // absent on a dry run: it says what would be rewritten
    return {
      notes: located.map((note) => ({ filename: note.filename, source: note.consolidation_id ? 'history' : 'live', consolidation_id: note.consolidation_id })),
      notes_count: located.length,
      live: removed.live,
      history: [...byConsolidation].map(([cid, notes]) => ({ consolidation_id: cid, file: spaceKeys(spaceId).historyNotes(cid), notes })),
      index_documents: located.flatMap((note) => [
        noteDocId(note.filename),
        ...(note.consolidation_id ? [noteDocId(note.filename, note.consolidation_id)] : []),
      ]),
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
  };

  return {
    async forget(caller: Caller, input: ForgetInput) {
      const spaceId = validateSpaceId(input.space_id);
      authorize(caller, 'admin', spaceId);
      const reason = validateReason(input.reason);
      await requireSpace(context, spaceId);
      const names = await select(caller, spaceId, input);

      if (input.confirm !== true) {
        const located = await locate(spaceId, names);
        const summaries = await summariesCovering(context, spaceId, new Set(names));
        const snapshots = (await listKeys(storage, spaceKeys(spaceId).index)).filter(isIndexFile);
        const live = (await corpus.liveNames(spaceId)).map((name) => name.filename).filter((name) => names.includes(name));
        const sides = await sideRecords(context, spaceId, new Set(names), consolidationsOf(located));
        return {
          status: 'ok' as const,
          space_id: spaceId,
          dry_run: true as const,
          message: `nothing was changed: this is what forgetting ${names.length} note(s) would remove; pass confirm=true (CLI: --yes) to forget them`,
          reason,
          ...(await receipt(
            spaceId,
            located,
            { summaries, snapshots, live, ...sides },
            input.purge_backups === true,
            await bankReview(spaceId, located),
            await textHits(spaceId, located),
          )),
        };
      }

      const held = await lockSpace(context, spaceId, caller, 'forget', { waitMs: PERSON_LEASE_WAIT_MS });
      let record: CommitRecord;
      let located: Located[];
      let applied: Awaited<ReturnType<typeof applyForget>>;
      let review: Awaited<ReturnType<typeof bankReview>>;
      let hits: Awaited<ReturnType<typeof textHits>>;
      try {
        // Located under the lease: no consolidation moves a note between here and the commit.
        located = await locate(spaceId, names);
        review = await bankReview(spaceId, located); // before the forget takes the notes out of the provenance
        hits = await textHits(spaceId, located); // and their text away
        const now = context.clock();
        record = {
          id: `${historyId(context, now)}${FORGET_ID_SUFFIX}`,
          space_id: spaceId,
          kind: 'forget',
          committed_at: isoSeconds(now),
          notes: [],
          time_range: { oldest: null, newest: null },
          writes: [],
          metrics: { by: caller.agent, notes: located.length },
          forget: { by: caller.agent, reason, notes: located, ...(input.purge_backups === true ? { purge_backups: true } : {}) },
        };
        await context.fault('before-commit');
        await held.stillHeld();
        await writeCommit(context, record);
        await context.fault('after-commit');
        applied = await applyForget(context, record);
      } finally {
        await held.release();
      }
      // This process's own index learns it now (others when they next read the space), and writes a clean snapshot.
      await deps.onForgotten?.(spaceId);
      context.logger.info(`forget ${record.id} of '${spaceId}' by ${caller.agent}: ${located.length} note(s)`);
      return {
        status: 'ok' as const,
        space_id: spaceId,
        dry_run: false as const,
        forget_id: record.id,
        message: `forgot ${located.length} note(s) of '${spaceId}': removed from every place listed; history_list shows the forget (never the text)`,
        reason,
        ...(await receipt(spaceId, located, applied, input.purge_backups === true, review, hits)),
      };
    },
  };
}

export type ForgetService = ReturnType<typeof createForgetService>;
