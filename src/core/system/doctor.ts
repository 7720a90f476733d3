import { ModelNotListed } from '../../llm/types.js';
import { isLiveMemError } from '../../shared/errors.js';
import { NODE_LINES, runtimeState } from '../../shared/runtime.js';
import type { DebrisFile } from '../../storage/types.js';
import { authorize, canAccessSpace, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { MODEL_FIX } from '../model.js';
import { SYSTEM_PREFIX, spaceKeys } from '../layout.js';
import type { RecallOptions } from '../recall/recall-service.js';
import type { SnapshotHeader } from '../recall/index-store.js';
import { listSpaceIds } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';
import { budgetFinding, checkBackups, checkHistoryFiles, checkLayout, checkLiveNotes, checkMeta, checkTokens, deepBudget } from './doctor-data.js';
import { checkBankText } from './doctor-bank-text.js';
import { checkSpendHolds } from './doctor-spend.js';
import { checkClaim } from './doctor-claim.js';
import { checkHistory, checkIndex, checkLeases, checkOrphan, checkPending, type Finding, historyState, plural, type SpaceCheckDeps } from './doctor-space.js';

/**
 * `live-mem doctor`: checks that the store is sound and says what to do about each finding; with
 * `fix`, repairs what is safe to repair (what a later run would repair anyway, done now). Reading
 * needs `read`, repairing `admin`. Every check is a small function returning findings; a check
 * with nothing to report says so in one `ok` finding.
 */
export interface DoctorInput {
  /** Only this space (its folder, whether or not it is a space); default every space the caller may see. */
  space_id?: string;
  fix?: boolean;
}

export interface DoctorProgress {
  check: string;
  message: string;
}

export interface DoctorOptions {
  onProgress?: (event: DoctorProgress) => void;
}

export interface DoctorDeps {
  snapshots(spaceId: string): Promise<Array<{ key: string; header: SnapshotHeader | null; problem?: string }>>;
  rebuildIndex(spaceId: string, options: RecallOptions): Promise<void>;
  normalizeLineEndings?: SpaceCheckDeps['normalizeLineEndings'];
  /** The Node.js version the runtime check judges (default: this process's). */
  nodeVersion?: string;
}

const CHECK_TIMEOUT_MS = 5_000;
/** What each per-space check says when no space has anything to report. */
const ALL_CLEAR: Record<string, string> = {
  debris: 'no temp or lock file left behind by a killed writer',
  'pending-commit': 'no consolidation left half-applied',
  leases: 'no lease left behind by a run that stopped',
  'consolidation-claim': 'no agent holds a window of notes',
  index: 'search index snapshots decode and cover every consolidation',
  history: 'every consolidation in history is complete',
  orphans: 'every folder is a space (has its _meta.json)',
  meta: "every space's _meta.json reads, and its counters are counts",
  layout: 'live/, bank/ and history/ are folders',
  'history-files': "every consolidation's record.json and notes.json decode",
  notes: 'every live note is UTF-8 text with its front-matter',
  'line-endings': 'bank files, rules and synthesis end their lines with \\n',
  'bank-file-size': 'no bank file is larger than LIVE_MEM_BANK_FILE_MAX_BYTES',
  'spend-holds': 'every spend hold is a model call in flight',
  backups: 'no backup left unfinished by a killed run',
};

const failure = (error: unknown): string => (error instanceof Error ? error.message : String(error));

/** Storage failures people can act on, by their system error code: what happened and what to do. */
const CAUSES: Record<string, { what: string; hint: string }> = {
  ENOSPC: { what: 'the disk is full', hint: 'free some space on the disk that holds the store (`df -h`), then run `live-mem doctor` again' },
  EDQUOT: { what: 'the disk quota is used up', hint: 'free some space or raise the quota, then run `live-mem doctor` again' },
  EACCES: { what: 'permission denied', hint: 'give the user running live-mem write access to the store folder' },
  EPERM: { what: 'operation not permitted', hint: 'give the user running live-mem write access to the store folder' },
  EROFS: { what: 'the file system is read-only', hint: 'mount the store read-write, or point --home (LIVE_MEM_HOME) at a writable folder' },
};
const causeOf = (error: unknown) => {
  const code = isLiveMemError(error) ? error.data.code : (error as { code?: unknown } | null)?.code;
  return typeof code === 'string' ? CAUSES[code] : undefined;
};

export function createDoctor(context: CoreContext, deps: DoctorDeps) {
  const { storage } = context;
  const ms = (start: number): number => Math.round(context.monotonic() - start);

  /** A write, a read and a delete of a probe object under _system/. */
  const checkStore = async (): Promise<Finding> => {
    const key = `${SYSTEM_PREFIX}doctor/${context.randomId()}-${context.clock().getTime()}.probe`;
    const body = `live-mem doctor probe ${context.clock().toISOString()}`;
    const start = context.monotonic();
    try {
      await storage.put(key, body, { contentType: 'text/plain' });
      const read = await storage.get(key);
      await storage.delete(key);
      if (read?.body.toString('utf8') !== body) throw new Error('an object written could not be read back as written');
      return {
        check: 'store',
        status: 'ok',
        fixable: false,
        message: `${storage.name} store at ${storage.location} reachable (write, read, delete in ${ms(start)} ms)`,
      };
    } catch (error) {
      const cause = causeOf(error);
      return {
        check: 'store',
        status: 'error',
        fixable: false,
        message: `${storage.name} store at ${storage.location} is not usable: ${cause ? `${cause.what}: ` : ''}${failure(error)}`,
        hint:
          cause?.hint ??
          (storage.name === 's3'
            ? 'check LIVE_MEM_S3_ENDPOINT, LIVE_MEM_S3_BUCKET and the credentials (the bucket must exist)'
            : 'check that the folder (--home, LIVE_MEM_HOME) exists or can be created, and is writable'),
      };
    }
  };

  /**
   * Create-only twice on one key: the second must fail, or two writers would clobber each other.
   * Only a second write that lands (or the driver's own probe) is a verdict on the store; a write
   * that fails (a full disk, a permission) says the store cannot be written, and why.
   */
  const checkConditionalWrites = async (): Promise<Finding> => {
    const check = 'conditional-writes';
    const key = `${SYSTEM_PREFIX}doctor/${context.randomId()}-${context.clock().getTime()}.create-only`;
    let verdict: string | undefined;
    try {
      if ((await storage.checkConditionalWrites?.()) === 'unsupported') verdict = 'the store accepts If-None-Match and ignores it';
      else {
        await storage.put(key, 'first', { ifNoneMatch: '*' });
        const second = await storage.put(key, 'second', { ifNoneMatch: '*' }).then(
          () => 'overwritten',
          (error: unknown) => (isLiveMemError(error, 'precondition_failed') ? 'refused' : Promise.reject(error)),
        );
        if (second === 'overwritten') verdict = 'a second create-only write of one key succeeded';
      }
    } catch (error) {
      const cause = causeOf(error);
      return {
        check,
        status: 'error',
        fixable: false,
        message: `the store cannot be written${cause ? `: ${cause.what}` : ''} (${failure(error)}); conditional writes could not be checked`,
        hint: cause?.hint ?? 'check that the store is reachable and writable, then run `live-mem doctor` again',
      };
    } finally {
      await storage.delete(key).catch(() => undefined);
    }
    if (verdict === undefined) {
      return { check, status: 'ok', fixable: false, message: 'create-only writes are honoured (a second create of one key is refused)' };
    }
    return {
      check,
      status: 'error',
      fixable: false,
      message: `conditional writes are not honoured: ${verdict}; locks and create-only writes are unsafe on this store`,
      hint: 'use AWS S3, Ceph radosgw or another store that honours If-None-Match and If-Match',
    };
  };

  /** Temp and lock files (fs): stale ones were left by killed writers; young ones belong to writes in progress. */
  const checkDebris = async (prefixes: string[], fix: boolean): Promise<Finding[]> => {
    if (!storage.debris) return [];
    const files: DebrisFile[] = [];
    for (const prefix of prefixes) files.push(...(await storage.debris(prefix, { remove: fix })));
    const byFolder = new Map<string, DebrisFile[]>();
    for (const file of files) {
      const top = file.path.slice(0, file.path.indexOf('/') + 1) || '/';
      byFolder.set(top, [...(byFolder.get(top) ?? []), file]);
    }
    const findings: Finding[] = [];
    for (const [folder, found] of byFolder) {
      const spaceId = folder.endsWith('/') && !folder.startsWith('_') ? folder.slice(0, -1) : undefined;
      const where = { check: 'debris', ...(spaceId ? { space_id: spaceId } : {}) };
      const stale = found.filter((file) => file.stale);
      const removed = stale.filter((file) => file.removed);
      const young = found.length - stale.length;
      const list = (some: DebrisFile[]) =>
        `${some
          .slice(0, 3)
          .map((file) => file.path)
          .join(', ')}${some.length > 3 ? ', …' : ''}`;
      if (removed.length > 0)
        findings.push({
          ...where,
          status: 'ok',
          fixable: true,
          fixed: true,
          message: `removed ${plural(removed.length, 'temp/lock file')} killed writers left in ${folder}: ${list(removed)}`,
        });
      const left = stale.filter((file) => !file.removed);
      if (left.length > 0) {
        findings.push({
          ...where,
          status: 'warn',
          fixable: true,
          fix: 'deletes them',
          message: `${plural(left.length, 'temp/lock file')} in ${folder} left by writers that were killed (older than an hour, or their process is gone): ${list(left)}`,
          hint: 'harmless: a listing of their folder removes them in time',
        });
      }
      if (young > 0)
        findings.push({
          ...where,
          status: 'ok',
          fixable: false,
          message: `${plural(young, 'temp/lock file')} of writes in progress in ${folder} (younger than an hour, their process running): left alone`,
        });
    }
    return findings;
  };

  /**
   * The Node.js this process runs on. Said here, once, rather than at every start: a line on an MCP
   * client's stderr at each launch is one nobody can act on there (the AWS SDK's own notice is
   * silenced by the S3 driver for that reason).
   */
  const checkRuntime = (version = deps.nodeVersion ?? process.versions.node): Finding => {
    const state = runtimeState(version, context.clock().toISOString().slice(0, 10));
    const lines = NODE_LINES.map((line) => line.major);
    const newer = lines.filter((major) => major > Number(version.split('.')[0])).join(' or ');
    if (!state.supported)
      return {
        check: 'runtime',
        status: 'warn',
        fixable: false,
        message: `Node.js ${version} is not a version live-mem is tested on (${lines.join(', ')})`,
        hint: `use Node.js ${lines.at(-1)} (or ${lines.slice(0, -1).join(', ')})`,
      };
    if (state.pastEndOfLife)
      return {
        check: 'runtime',
        status: 'warn',
        fixable: false,
        message: `Node.js ${version}: its line reached end of life on ${state.pastEndOfLife} (no more security fixes); live-mem supports it while its dependencies do`,
        hint: `move to Node.js ${newer || lines.at(-1)}`,
      };
    return { check: 'runtime', status: 'ok', fixable: false, message: `Node.js ${version}` };
  };

  const checkEndpoint = async (what: 'llm' | 'embeddings'): Promise<Finding> => {
    const client = what === 'llm' ? context.llm : context.embeddings;
    const names =
      what === 'llm'
        ? 'LIVE_MEM_LLM_BASE_URL, LIVE_MEM_LLM_API_KEY and LIVE_MEM_LLM_MODEL'
        : context.embeddings?.local
          ? 'LIVE_MEM_EMBEDDINGS_LOCAL and _LOCAL_DIR, and that @huggingface/transformers is installed beside live-mem'
          : 'LIVE_MEM_EMBEDDINGS_BASE_URL, _API_KEY and _MODEL';
    // No model is a warning, never a pass: without one the bank never forms. Whether an MCP client
    // lends its own (sampling) is known only to a server it is connected to, never to this check.
    if (!client && what === 'llm')
      return {
        check: what,
        status: 'warn',
        fixable: false,
        message:
          'no model configured: consolidation, compaction and summaries cannot run, so the memory bank stays empty ' +
          '(only an MCP client that offers sampling can lend its own model, to its own calls)',
        hint: MODEL_FIX,
      };
    if (!client) return { check: what, status: 'ok', fixable: false, message: 'no embeddings endpoint configured: search is BM25 alone' };
    if (!client.ping) return { check: what, status: 'ok', fixable: false, message: `${client.label} (not checked: it cannot be without spending tokens)` };
    const start = context.monotonic();
    try {
      await client.ping(AbortSignal.timeout(CHECK_TIMEOUT_MS));
      return {
        check: what,
        status: 'ok',
        fixable: false,
        message: `${client.label} ${what === 'embeddings' && context.embeddings?.local ? 'loads' : 'answers'} (${ms(start)} ms)`,
      };
    } catch (error) {
      const fallback = what === 'embeddings' ? ' (search falls back to BM25 meanwhile)' : '';
      // It answers, but every call naming this model would be refused: the setting is what to change.
      const unlisted = error instanceof ModelNotListed;
      const setting = what === 'llm' ? 'LIVE_MEM_LLM_MODEL (llm.model in live-mem.yaml)' : 'LIVE_MEM_EMBEDDINGS_MODEL (embeddings.model)';
      return {
        check: what,
        status: what === 'llm' ? 'error' : 'warn',
        fixable: false,
        message: `${client.label} ${unlisted ? 'answers, but' : 'does not answer:'} ${failure(error)}${fallback}`,
        hint: unlisted ? `set ${setting} to a model it lists${error.nearest ? ` (did you mean '${error.nearest}'?)` : ''}` : `check ${names}`,
      };
    }
  };

  return async function doctor(caller: Caller, input: DoctorInput = {}, options: DoctorOptions = {}) {
    const only = input.space_id === undefined ? undefined : validateSpaceId(input.space_id);
    const fix = input.fix === true;
    authorize(caller, fix ? 'admin' : 'read', only);
    const step = (check: string, message: string) => options.onProgress?.({ check, message });
    const findings: Finding[] = [];

    step('store', `probing ${storage.location}`);
    findings.push(await checkStore());
    if (findings[0]?.status === 'ok') {
      findings.push(await checkConditionalWrites());
      findings.push(await checkTokens(context));
      // Debris first: listings remove stale debris of the folders they read.
      const everything = only === undefined && caller.spaces === '*';
      const folders = only !== undefined ? [only] : (await listSpaceIds(context)).filter((id) => canAccessSpace(caller, id));
      step('debris', 'looking for temp and lock files');
      const perSpace: Finding[] = await checkDebris(everything ? [''] : folders.map((id) => spaceKeys(id).root), fix);
      const spaceDeps: SpaceCheckDeps = {
        context,
        caller,
        fix,
        snapshots: deps.snapshots,
        rebuildIndex: deps.rebuildIndex,
        ...(deps.normalizeLineEndings ? { normalizeLineEndings: deps.normalizeLineEndings } : {}),
        onIndexProgress: (event) => step('index', `indexing '${event.space_id}': ${event.phase} ${event.done}/${event.total}`),
      };
      for (const spaceId of folders) {
        if (!(await storage.stat(spaceKeys(spaceId).meta))) {
          perSpace.push(...(await checkOrphan(spaceDeps, spaceId)));
          continue;
        }
        step('space', `checking '${spaceId}'`);
        perSpace.push(...(await checkMeta(spaceDeps, spaceId)));
        perSpace.push(...(await checkLayout(spaceDeps, spaceId)));
        perSpace.push(...(await checkPending(spaceDeps, spaceId)));
        perSpace.push(...(await checkLeases(spaceDeps, spaceId)));
        perSpace.push(...(await checkClaim(spaceDeps, spaceId)));
        perSpace.push(...(await checkSpendHolds(spaceDeps, spaceId)));
        // History as it is once a pending commit is finished (--fix): a consolidation killed mid-write of its history is complete by now.
        const history = await historyState(context, spaceId);
        perSpace.push(...(await checkHistory(spaceDeps, spaceId, history)));
        perSpace.push(...(await checkBankText(spaceDeps, spaceId)));
        step('notes', `reading the notes of '${spaceId}'`);
        const budget = deepBudget();
        perSpace.push(...(await checkLiveNotes(spaceDeps, spaceId, budget)));
        perSpace.push(...(await checkHistoryFiles(spaceDeps, spaceId, history.complete, budget)));
        perSpace.push(...budgetFinding(spaceId, budget));
        step('index', `checking the search index of '${spaceId}'`);
        perSpace.push(...(await checkIndex(spaceDeps, spaceId, history.complete)));
      }
      step('backups', 'looking for backups a killed run left unfinished');
      perSpace.push(...(await checkBackups(spaceDeps, everything ? undefined : folders)));
      for (const [check, message] of Object.entries(ALL_CLEAR)) {
        const some = perSpace.filter((finding) => finding.check === check);
        findings.push(...(some.length > 0 ? some : [{ check, status: 'ok' as const, fixable: false, message }]));
      }
    }
    findings.push(checkRuntime());
    step('llm', 'asking the endpoints (no tokens spent)');
    findings.push(...(await Promise.all([checkEndpoint('llm'), checkEndpoint('embeddings')])));

    const count = (status: Finding['status']) => findings.filter((finding) => finding.status === status).length;
    const errors = count('error');
    const fixable = findings.filter((finding) => finding.status !== 'ok' && finding.fixable).length;
    return {
      status: errors > 0 ? ('error' as const) : ('ok' as const),
      ...(errors > 0 ? { message: `${plural(errors, 'problem')} to attend to (see above)` } : {}),
      store: `${storage.name} ${storage.location}`,
      ...(only !== undefined ? { space_id: only } : {}),
      fix,
      findings,
      counts: { ok: count('ok'), warn: count('warn'), error: errors, fixed: findings.filter((finding) => finding.fixed).length, fixable },
    };
  };
}

export type Doctor = ReturnType<typeof createDoctor>;
