/**
 * The store layout, in one place. It is the Python Live Memory server's bucket layout, so live-mem
 * opens its buckets as they are:
 *
 *   {space}/_meta.json        space metadata
 *   {space}/_rules.md         the rules (structure of the bank)
 *   {space}/_synthesis.md     the cumulative synthesis
 *   {space}/live/{note}.md    live notes, {YYYYMMDDTHHMMSS}_{agent}_{category}_{id8}.md
 *   {space}/bank/{file}.md    the memory bank
 *   _system/…                 store-wide state
 *
 * and what live-mem adds beside it (the Python server has no such keys, so its buckets are unaffected):
 *
 *   {space}/history/{cid}/record.json        one consolidation: its id, the notes it covered, their time
 *                                            range, the bank files it wrote, its metrics
 *   {space}/history/{cid}/notes.json         the notes it consolidated, moved out of live/, byte for byte
 *   {space}/history/{cid}/preimages.json     a compaction's instead of notes.json: the sections it rewrote, as they were
 *   {space}/_summaries/L{k}/{id}.json         a summary of level k ≥ 1 (recall/summaries): what it covers, its time
 *                                            range, content hash and text; written by the LLM, kept by backups
 *   {space}/_summaries/lock.json             the lease: one summaries runner per space at a time
 *   {space}/_summaries/jobs/{job}.json       background summary runs and their state
 *   {space}/_index/{stamp}.snapshot|.live    search index snapshots, live notes' texts: derived data, rebuilt from the rest when
 *                                            missing or corrupt, never backed up (recall/index-store.ts)
 *   {space}/_consolidation/lock.json         the lease: one consolidation per space at a time
 *   {space}/_consolidation/pending.json      a committed consolidation not yet fully applied
 *   {space}/_consolidation/claim.json        an agent's claim on the window it writes the plan of (handle, expiry)
 *   {space}/_consolidation/quarantine/{id}-{hash}.json
 *                                            a pending record refused when found (malformed, naming another
 *                                            space, a file no system can hold…): moved here, byte for byte,
 *                                            never applied, its notes left in live/; `doctor` reports it
 *   {space}/_consolidation/jobs/{job}.json   background consolidations and their state
 *   {space}/_spend/{YYYY-MM-DD}/{stamp}-{id}.json
 *                                            one model call paid for this space (its purpose, model, tokens), by
 *                                            UTC day, create-only (spend/ledger.ts); internal: never backed up
 *   _system/changes/{space}.json             a space's change marker: rewritten after each write its watchers are told
 *                                            of, on a store of objects without folders (S3; feed/change-marker.ts)
 *   _system/changes.json                     the store's: spaces made or removed
 *   _backups/{space}/{stamp}/manifest.json   a backup: every file with its size and SHA-256 (written last)
 *   _backups/{space}/{stamp}/files/{path}    the space's files, as they were
 */
import { SYNTHESIS_FILE } from './validate.js';

export { SYNTHESIS_FILE };
export const SYSTEM_PREFIX = '_system/';
/** The store's change marker (feed/change-marker.ts): rewritten when a space is made or removed. */
export const STORE_CHANGES = `${SYSTEM_PREFIX}changes.json`;
/** A space's change marker (feed/change-marker.ts), outside its folder: a space's deletion never leaves it behind, nor brings the folder back. */
export const spaceChanges = (spaceId: string): string => `${SYSTEM_PREFIX}changes/${spaceId}.json`;
/** Folder sentinels the Python server created; never listed as notes or bank files. */
export const KEEP_FILE = '.keep';

/** A live note's key: what spaceKeys(spaceId).note(filename) gives, without building every key of the space (each note's write asks for it). */
export const liveNoteKey = (spaceId: string, filename: string): string => `${spaceId}/live/${filename}`;

export function spaceKeys(spaceId: string) {
  const root = `${spaceId}/`;
  return {
    root,
    meta: `${root}_meta.json`,
    rules: `${root}_rules.md`,
    synthesis: `${root}${SYNTHESIS_FILE}`,
    live: `${root}live/`,
    bank: `${root}bank/`,
    note: (filename: string) => liveNoteKey(spaceId, filename),
    bankFile: (filename: string) => `${root}bank/${filename}`,
    history: `${root}history/`,
    historyRecord: (cid: string) => `${root}history/${cid}/record.json`,
    historyNotes: (cid: string) => `${root}history/${cid}/notes.json`,
    historyPreimages: (cid: string) => `${root}history/${cid}/preimages.json`,
    summaries: `${root}_summaries/`,
    summaryLevel: (level: number) => `${root}_summaries/L${level}/`,
    summary: (level: number, id: string) => `${root}_summaries/L${level}/${id}.json`,
    summariesLock: `${root}_summaries/lock.json`,
    summaryJobs: `${root}_summaries/jobs/`,
    summaryJob: (jobId: string) => `${root}_summaries/jobs/${jobId}.json`,
    index: `${root}_index/`,
    lock: `${root}_consolidation/lock.json`,
    pending: `${root}_consolidation/pending.json`,
    claim: `${root}_consolidation/claim.json`,
    quarantine: `${root}_consolidation/quarantine/`,
    quarantined: (name: string) => `${root}_consolidation/quarantine/${name}.json`,
    jobs: `${root}_consolidation/jobs/`,
    job: (jobId: string) => `${root}_consolidation/jobs/${jobId}.json`,
    spend: `${root}_spend/`,
    spendDay: (day: string) => `${root}_spend/${day}/`,
  };
}

/** The files of a search index in `{space}/_index/`: a snapshot, and the live notes' texts (recall/index-store.ts). */
export const INDEX_SNAPSHOT = '.snapshot';
export const INDEX_LIVE_TEXTS = '.live';

/** A file of the index in `_index/`: derived from the notes, so deleted with them when they are forgotten. */
export const isIndexFile = (key: string): boolean => key.endsWith(INDEX_SNAPSHOT) || key.endsWith(INDEX_LIVE_TEXTS);

/** The last path segment of a key. */
export const baseName = (key: string): string => key.slice(key.lastIndexOf('/') + 1);

export const BACKUPS_PREFIX = '_backups/';

/** A backup's keys; its id is `{space}/{stamp}`. */
export function backupKeys(spaceId: string, stamp: string) {
  const root = `${BACKUPS_PREFIX}${spaceId}/${stamp}/`;
  return { root, manifest: `${root}manifest.json`, file: (path: string) => `${root}files/${path}` };
}
