import { authorize, canAccessSpace, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import type { RecallOptions } from '../recall/recall-service.js';
import type { SnapshotHeader } from '../recall/index-store.js';
import { listSpaceIds } from '../space-meta.js';
import { validateSpaceId } from '../validate.js';
import { budgetFinding, checkBackups, checkHistoryFiles, checkLayout, checkLiveNotes, checkMeta, checkTokens, deepBudget } from './doctor-data.js';
import { checkBankText } from './doctor-bank-text.js';
import { checkDebris } from './doctor-debris.js';
import { checkEndpoint } from './doctor-endpoint.js';
import { checkRuntime } from './doctor-runtime.js';
import { checkSpendHolds } from './doctor-spend.js';
import { checkClaim, type Claims } from './doctor-claim.js';
import { checkHistory, checkIndex, checkLeases, checkOrphan, checkPending, type Finding, historyState, plural, type SpaceCheckDeps } from './doctor-space.js';
import { checkConditionalWrites, checkStore } from './doctor-store.js';
import { checkAnchors } from './doctor-anchors.js';
import type { SpaceCode } from '../recall/space-code.js';
import type { Checkout } from '../../shared/checkout.js';

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
  /** The checkout doctor runs in: each space's statements whose code drifted or is missing there are listed (core/anchors/). */
  checkout?: Checkout;
}

export interface DoctorDeps {
  snapshots(spaceId: string): Promise<Array<{ key: string; header: SnapshotHeader | null; problem?: string }>>;
  rebuildIndex(spaceId: string, options: RecallOptions): Promise<void>;
  normalizeLineEndings?: SpaceCheckDeps['normalizeLineEndings'];
  /** Agents' claims on windows of notes (consolidation's, through core.ts). */
  claims?: Claims;
  /** The Node.js version the runtime check judges (default: this process's). */
  nodeVersion?: string;
  /** A space's anchored statements checked in a checkout (recall/space-code.ts). */
  spaceCode?: SpaceCode;
}

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
  anchors: 'no bank section or live note cites code that drifted or is missing in this checkout',
};

export function createDoctor(context: CoreContext, deps: DoctorDeps) {
  const { storage } = context;

  return async function doctor(caller: Caller, input: DoctorInput = {}, options: DoctorOptions = {}) {
    const only = input.space_id === undefined ? undefined : validateSpaceId(input.space_id);
    const fix = input.fix === true;
    authorize(caller, fix ? 'admin' : 'read', only);
    const step = (check: string, message: string) => options.onProgress?.({ check, message });
    const findings: Finding[] = [];

    step('store', `probing ${storage.location}`);
    findings.push(await checkStore(context));
    if (findings[0]?.status === 'ok') {
      findings.push(await checkConditionalWrites(context));
      findings.push(await checkTokens(context));
      // Debris first: listings remove stale debris of the folders they read.
      const everything = only === undefined && caller.spaces === '*';
      const folders = only !== undefined ? [only] : (await listSpaceIds(context)).filter((id) => canAccessSpace(caller, id));
      step('debris', 'looking for temp and lock files');
      const perSpace: Finding[] = await checkDebris(storage, everything ? [''] : folders.map((id) => spaceKeys(id).root), fix);
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
        perSpace.push(...(await checkClaim(spaceDeps, deps.claims, spaceId)));
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
        if (deps.spaceCode && options.checkout) perSpace.push(...(await checkAnchors(deps.spaceCode, caller, spaceId, options.checkout)));
      }
      if (!options.checkout)
        perSpace.push({
          check: 'anchors',
          status: 'ok',
          fixable: false,
          message: 'not checked: doctor runs in no git work tree (run it in the project to check the code its memory cites)',
        });
      step('backups', 'looking for backups a killed run left unfinished');
      perSpace.push(...(await checkBackups(spaceDeps, everything ? undefined : folders)));
      for (const [check, message] of Object.entries(ALL_CLEAR)) {
        const some = perSpace.filter((finding) => finding.check === check);
        findings.push(...(some.length > 0 ? some : [{ check, status: 'ok' as const, fixable: false, message }]));
      }
    }
    findings.push(checkRuntime(context, deps.nodeVersion ?? process.versions.node));
    step('llm', 'asking the endpoints (no tokens spent)');
    findings.push(...(await Promise.all([checkEndpoint(context, 'llm'), checkEndpoint(context, 'embeddings')])));

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
