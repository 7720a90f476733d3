import { mapLimit } from '../../shared/concurrency.js';
import { isLiveMemError } from '../../shared/errors.js';
import { acquireLease, inspectLease } from '../../storage/lease.js';
import { listKeys, listPrefixes } from '../../storage/list.js';
import type { Caller } from '../caller.js';
import { decodeHistoryNotes } from '../commit/history.js';
import { listQuarantined, readPending, type PendingState } from '../commit/pending.js';
import { lockSpace } from '../commit/space-lock.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import type { RecallOptions } from '../recall/recall-service.js';
import type { SnapshotHeader } from '../recall/index-store.js';
import { claimNewSpace } from '../space/claim.js';

/** What one of doctor's checks found (doctor.ts), and what to do about it. */
export interface Finding {
  check: string;
  status: 'ok' | 'warn' | 'error';
  message: string;
  /** What `fix` does about it, when it can. */
  fix?: string;
  fixable: boolean;
  /** Set when `fix` repaired it (then `status` is the state after the repair). */
  fixed?: boolean;
  space_id?: string;
  /** What to do about it by hand. */
  hint?: string;
}

/**
 * The doctor's checks of one space folder (see doctor.ts). Each returns its findings — problems,
 * and states worth saying (a run in progress) — and, when `fix` is set, repairs what it safely can
 * and says so on the finding. A check with nothing to say returns an empty list.
 */
export interface SpaceCheckDeps {
  context: CoreContext;
  caller: Caller;
  fix: boolean;
  snapshots(spaceId: string): Promise<Array<{ key: string; header: SnapshotHeader | null; problem?: string }>>;
  rebuildIndex(spaceId: string, options: RecallOptions): Promise<void>;
  onIndexProgress?: RecallOptions['onProgress'];
  /** Normalises the line endings of a space's Markdown as a revision (revision/normalize-line-endings.ts); what it normalised. */
  normalizeLineEndings?(caller: Caller, spaceId: string): Promise<LineEndingsFixed>;
}

export interface LineEndingsFixed {
  files: string[];
  rules: boolean;
  synthesis: boolean;
  revision_id?: string;
}

/** Consolidation ids of a space, and which of them are complete (their record.json written last). */
export async function historyState(context: CoreContext, spaceId: string): Promise<{ ids: string[]; complete: Set<string> }> {
  const keys = spaceKeys(spaceId);
  const ids = (await listPrefixes(context.storage, keys.history)).map((prefix) => prefix.slice(keys.history.length, -1)).sort();
  const complete = new Set<string>();
  await mapLimit(ids, context.storage.parallelism, async (cid) => {
    if (await context.storage.stat(keys.historyRecord(cid))) complete.add(cid);
  });
  return { ids, complete };
}

/** An error's message, for a finding's text. */
export const failure = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** "1 file", "3 files". */
export const plural = (count: number, word: string): string => `${count} ${word}${count === 1 ? '' : 's'}`;

/**
 * A consolidation committed (pending.json) but not fully applied: its process was killed or its
 * store failed. A record that does not check out (commit/pending.ts) is quarantined by the next run, or by
 * `--fix`; records quarantined earlier are reported until someone has looked at them.
 */
export async function checkPending(deps: SpaceCheckDeps, spaceId: string): Promise<Finding[]> {
  const quarantined = (await listQuarantined(deps.context, spaceId)).map(
    (entry): Finding => ({
      check: 'pending-commit',
      space_id: spaceId,
      status: 'warn',
      fixable: false,
      message: `a pending consolidation record of '${spaceId}'${entry.id ? ` (${entry.id})` : ''} was refused (${entry.problem}) and quarantined at ${entry.key}: it is not applied, and the notes it covered stayed in live/`,
      hint: `nothing is lost (the next consolidation takes those notes); look at ${entry.key}, then delete it`,
    }),
  );
  return [...quarantined, ...(await checkPendingRecord(deps, spaceId))];
}

async function checkPendingRecord(deps: SpaceCheckDeps, spaceId: string): Promise<Finding[]> {
  const { context, caller, fix } = deps;
  const keys = spaceKeys(spaceId);
  const check = 'pending-commit';
  let pending: PendingState;
  try {
    pending = await readPending(context, spaceId);
  } catch (error) {
    return [
      {
        check,
        space_id: spaceId,
        status: 'error',
        fixable: false,
        message: `${keys.pending} could not be read (${failure(error)}): consolidations, backups and exports of '${spaceId}' fail until the store answers`,
        hint: 'a failure of the store, not of the record: see the store check above and `live-mem health`, then run doctor again',
      },
    ];
  }
  if (pending.state === 'none') return [];
  const id = pending.state === 'valid' ? pending.record.id : (pending.id ?? 'with no valid id');
  const lease = await inspectLease(context.storage, keys.lock, context.clock);
  if (lease.state === 'held') {
    return [
      {
        check,
        space_id: spaceId,
        status: 'ok',
        fixable: false,
        message: `consolidation ${id} of '${spaceId}' is being ${pending.state === 'valid' ? 'applied' : 'quarantined'} by ${lease.record?.owner}`,
      },
    ];
  }
  const finding: Finding =
    pending.state === 'valid'
      ? {
          check,
          space_id: spaceId,
          status: 'warn',
          fixable: true,
          fix: 'finishes it now, under the space lease',
          message: `consolidation ${id} of '${spaceId}' was committed but its process stopped before applying it (${plural(pending.record.notes.length, 'note')} to move into history)`,
          hint: `the next consolidation, backup or export of '${spaceId}' finishes it, or \`live-mem doctor ${spaceId} --fix\``,
        }
      : {
          check,
          space_id: spaceId,
          status: 'error',
          fixable: true,
          fix: `moves it to ${keys.quarantine}, never to be applied (its notes stay in live/)`,
          message: `${keys.pending} (consolidation ${id}) cannot be applied: ${pending.problem}`,
          hint: `the next consolidation, backup or export of '${spaceId}' quarantines it, or \`live-mem doctor ${spaceId} --fix\``,
        };
  if (!fix) return [finding];
  try {
    const held = await lockSpace(context, spaceId, caller, 'doctor');
    await held.release();
    const done =
      pending.state === 'valid'
        ? `finished consolidation ${id} of '${spaceId}' (${plural(pending.record.notes.length, 'note')} moved into history)`
        : `quarantined ${keys.pending} of '${spaceId}' (${pending.problem}): it will not be applied, and its notes are still in live/`;
    return [{ ...finding, status: 'ok', fixed: true, message: done }];
  } catch (error) {
    const status = isLiveMemError(error, 'conflict') && /busy/.test(failure(error)) ? 'warn' : 'error';
    return [{ ...finding, status, message: `${finding.message}; could not deal with it: ${failure(error)}` }];
  }
}

/**
 * Leases (consolidation, summaries) whose holder is gone or whose time ran out: the next run takes
 * them over. One that runs out implausibly far ahead was planted (an archive, a hand) or written
 * under a clock far off: no holder renews a lease that far, so `fix` takes it over and drops it.
 */
export async function checkLeases(deps: SpaceCheckDeps, spaceId: string): Promise<Finding[]> {
  const { context } = deps;
  const ttlMs = context.consolidation.leaseTtlMs;
  const keys = spaceKeys(spaceId);
  const findings: Finding[] = [];
  for (const [what, key] of [
    ['consolidation', keys.lock],
    ['summaries', keys.summariesLock],
  ] as const) {
    const { state, record } = await inspectLease(context.storage, key, context.clock, ttlMs);
    const holder = record ? `${record.owner.split(':')[0]} by ${record.owner.slice(record.owner.indexOf(':') + 1)}` : 'someone';
    if (state === 'free') continue;
    if (state === 'held') {
      findings.push({
        check: 'leases',
        space_id: spaceId,
        status: 'ok',
        fixable: false,
        message: `'${spaceId}': a ${holder} holds the ${what} lease until ${record?.expires_at}`,
      });
      continue;
    }
    if (state === 'implausible') {
      findings.push(await dropPlantedLease(deps, spaceId, what, key, record?.expires_at));
      continue;
    }
    const why = state === 'expired' ? `expired at ${record?.expires_at}` : state === 'abandoned' ? 'its process is gone' : 'it is unreadable';
    findings.push({
      check: 'leases',
      space_id: spaceId,
      status: 'warn',
      fixable: false,
      message: `the ${what} lease of '${spaceId}' (${holder}) is stale: ${why}`,
      hint:
        what === 'consolidation'
          ? `nothing to do: the next run takes it over; a killed run's state is in \`live-mem consolidate-status ${spaceId}\``
          : `nothing to do: the next run takes it over; \`live-mem summaries update ${spaceId}\` finishes what a killed run left`,
    });
  }
  return findings;
}

/** Takes a planted lease over (compare-and-swap, as any acquirer would) and releases it, when `fix`. */
async function dropPlantedLease(deps: SpaceCheckDeps, spaceId: string, what: string, key: string, expiresAt: string | undefined): Promise<Finding> {
  const { context, caller, fix } = deps;
  const finding: Finding = {
    check: 'leases',
    space_id: spaceId,
    status: 'error',
    fixable: true,
    fix: 'removes it',
    message: `the ${what} lease of '${spaceId}' claims to be held until ${expiresAt}, far longer than any run holds one: it was planted (an imported archive, a hand) or written under a wrong clock`,
    hint: `runs take it over, but \`live-mem doctor ${spaceId} --fix\` removes it now`,
  };
  if (!fix) return finding;
  try {
    const lease = await acquireLease(context.storage, key, { owner: `doctor:${caller.agent}`, ttlMs: context.consolidation.leaseTtlMs, clock: context.clock });
    await lease.release();
    return { ...finding, status: 'ok', fixed: true, message: `removed the ${what} lease of '${spaceId}' that claimed to be held until ${expiresAt}` };
  } catch (error) {
    return { ...finding, message: `${finding.message}; could not remove it: ${failure(error)}` };
  }
}

/** The newest index snapshot decodes and covers every complete consolidation. */
export async function checkIndex(deps: SpaceCheckDeps, spaceId: string, complete: ReadonlySet<string>): Promise<Finding[]> {
  const { context, fix } = deps;
  const inspect = async () => {
    const snapshots = await deps.snapshots(spaceId);
    const unusable = snapshots.filter((snapshot) => snapshot.header === null);
    const newest = snapshots.find((snapshot) => snapshot.header !== null);
    const covered = new Set(newest?.header?.history ?? []);
    const missing = newest ? [...complete].filter((cid) => !covered.has(cid)) : [];
    return { unusable, newest, missing };
  };
  const found = await inspect();
  const problems: string[] = [
    ...found.unusable.map((snapshot) => `${snapshot.key} is unusable (${snapshot.problem})`),
    ...(found.missing.length > 0
      ? [
          `the newest snapshot covers ${complete.size - found.missing.length} of ${complete.size} consolidations, so each new process reads ${found.missing.length} more before its first answer`,
        ]
      : []),
  ];
  if (problems.length === 0) return [];
  const finding: Finding = {
    check: 'index',
    space_id: spaceId,
    status: 'warn',
    fixable: true,
    fix: 'deletes unusable snapshots, brings the index up to date and writes a new snapshot',
    message: `search index of '${spaceId}': ${problems.join('; ')}`,
    hint: 'searches still answer from the store (a damaged snapshot is rebuilt by the next search)',
  };
  if (!fix) return [finding];
  try {
    if (found.unusable.length > 0) await context.storage.deleteMany(found.unusable.map((snapshot) => snapshot.key));
    await deps.rebuildIndex(spaceId, deps.onIndexProgress ? { onProgress: deps.onIndexProgress } : {});
    const after = await inspect();
    if (after.unusable.length > 0 || !after.newest || after.missing.length > 0) throw new Error('the new snapshot was not written (see the log)');
    return [{ ...finding, status: 'ok', fixed: true, message: `search index of '${spaceId}' rebuilt: ${after.newest.key} covers every consolidation` }];
  } catch (error) {
    return [{ ...finding, message: `${finding.message}; could not rebuild it: ${failure(error)}` }];
  }
}

/**
 * `history/{id}/` without its record.json and no pending commit to finish it: a consolidation cut
 * short. Harmless while its notes are all still in live/; notes gone from live/ are seen nowhere.
 */
export async function checkHistory(deps: SpaceCheckDeps, spaceId: string, history: { ids: string[]; complete: ReadonlySet<string> }): Promise<Finding[]> {
  const { context } = deps;
  const { storage } = context;
  const keys = spaceKeys(spaceId);
  const incomplete = history.ids.filter((cid) => !history.complete.has(cid));
  if (incomplete.length === 0) return [];
  const pendingId = await readPending(context, spaceId).then(
    (pending) => (pending.state === 'valid' ? pending.record.id : undefined),
    () => undefined,
  );
  const live = new Set((await listKeys(storage, keys.live)).map((key) => key.slice(keys.live.length)));
  const findings: Finding[] = [];
  for (const cid of incomplete) {
    if (cid === pendingId) continue; // the pending commit writes it: see that check
    const folder = `${keys.history}${cid}/`;
    const object = await storage.get(keys.historyNotes(cid));
    let names: string[];
    try {
      names = object ? decodeHistoryNotes(object.body, keys.historyNotes(cid)).map((note) => note.filename) : [];
    } catch (error) {
      findings.push({
        check: 'history',
        space_id: spaceId,
        status: 'warn',
        fixable: false,
        message: `${folder} has no record.json and ${failure(error)}`,
        hint: `look at ${folder} by hand`,
      });
      continue;
    }
    const gone = names.filter((name) => !live.has(name));
    findings.push(
      gone.length === 0
        ? {
            check: 'history',
            space_id: spaceId,
            status: 'warn',
            fixable: false,
            message: `${folder} is what a consolidation cut short left (no record.json); its ${plural(names.length, 'note')} are all still in live/, nothing is lost`,
            hint: `safe to delete ${folder}`,
          }
        : {
            check: 'history',
            space_id: spaceId,
            status: 'error',
            fixable: false,
            message: `${folder} has no record.json and ${gone.length} of its ${plural(names.length, 'note')} ${gone.length === 1 ? 'is' : 'are'} no longer in live/: they are kept only in ${keys.historyNotes(cid)}, where recall does not see them`,
            hint: `copy them back into ${keys.live} from that file by hand (each entry's "content" is the note file), or restore a backup`,
          },
    );
  }
  return findings;
}

/** Top-level entries of a space folder that live-mem writes: a folder holding only these is live-mem's leftovers. */
const SPACE_ENTRIES = new Set([
  '_meta.json',
  '_rules.md',
  '_synthesis.md',
  '.keep',
  'live',
  'bank',
  'history',
  '_summaries',
  '_index',
  '_consolidation',
  '_spend',
]);

/** A folder named like a space without `_meta.json`: what an interrupted import or restore leaves. */
export async function checkOrphan(deps: SpaceCheckDeps, spaceId: string): Promise<Finding[]> {
  const { context, caller, fix } = deps;
  const keys = spaceKeys(spaceId);
  const files = await listKeys(context.storage, keys.root);
  if (files.length === 0) return [];
  const lease = await inspectLease(context.storage, keys.lock, context.clock);
  if (lease.state === 'held') {
    return [
      {
        check: 'orphans',
        space_id: spaceId,
        status: 'ok',
        fixable: false,
        message: `'${spaceId}' is being built by ${lease.record?.owner} (no _meta.json yet)`,
      },
    ];
  }
  const ours = files.every((key) => SPACE_ENTRIES.has(key.slice(keys.root.length).split('/')[0] as string));
  const finding: Finding = {
    check: 'orphans',
    space_id: spaceId,
    status: 'warn',
    fixable: ours,
    message: `folder '${spaceId}/' holds ${plural(files.length, 'file')} but no _meta.json, so it is no space: an import or restore was interrupted`,
    ...(ours
      ? {
          fix: `removes them, as the next import or \`space create\` of '${spaceId}' would`,
          hint: `\`live-mem doctor ${spaceId} --fix\`, or import '${spaceId}' again`,
        }
      : { hint: `not all of it looks like live-mem's: look at ${keys.root} and remove it by hand` }),
  };
  if (!fix || !ours) return [finding];
  try {
    const held = await claimNewSpace(context, spaceId, caller, 'doctor', { waitMs: 0 });
    await held.release();
    return [{ ...finding, status: 'ok', fixed: true, message: `removed ${plural(files.length, 'file')} an interrupted import left in '${spaceId}/'` }];
  } catch (error) {
    return [{ ...finding, message: `${finding.message}; could not remove them: ${failure(error)}` }];
  }
}
