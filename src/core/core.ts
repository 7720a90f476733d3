import { createAuthService, type AuthSettings } from './auth/auth-service.js';
import { createBackupService } from './backup/backup-service.js';
import { createBankService } from './bank/bank-service.js';
import { createAutoCompaction } from './compaction/auto.js';
import { createCompactionService } from './compaction/compaction-service.js';
import { compactionCommit } from './compaction/commit-kind.js';
import { registerCommitKinds } from './commit/kind.js';
import { forgetCommit } from './forget/commit-kind.js';
import { createForgetService } from './forget/forget-service.js';
import { revisionCommit } from './revision/commit-kind.js';
import { createRevisionService } from './revision/revision-service.js';
import { consolidationCommit } from './consolidation/commit-kind.js';
import { type ConsolidationHooks, createConsolidationService } from './consolidation/consolidation-service.js';
import { createAgentConsolidation } from './consolidation/agent-plan.js';
import { claimInspector } from './consolidation/claim.js';
import { createConsolidationJobs } from './consolidation/jobs.js';
import { customAlphabet } from 'nanoid';
import { silentLogger, type Logger } from '../shared/log.js';
import type { EmbeddingsClient } from '../llm/embeddings.js';
import type { LlmClient } from '../llm/types.js';
import type { StorageDriver } from '../storage/types.js';
import { DEFAULT_BUDGETS } from './bank/budget.js';
import {
  type AutoCreateSpaces,
  type BudgetSettings,
  type CompactionSettings,
  type ConsolidationSettings,
  type CoreContext,
  DEFAULT_CONSOLIDATION,
  DEFAULT_EMBEDDINGS_WEIGHT,
  DEFAULT_INDEX_MEMORY_MB,
  DEFAULT_LIMITS,
  DEFAULT_SUMMARIES,
  type Limits,
  type SpendLedger,
  type SummarySettings,
} from './context.js';
import { createFreshStat } from './fresh-stat.js';
import { createHistoryService } from './history/history-service.js';
import type { RedactMode } from './redact/redact.js';
import { DEFAULT_RETENTION, type RetentionMode } from './retention/record.js';
import { createSpendLedger } from './spend/ledger.js';
import { createEvents } from './events.js';
import { createChangeFeed } from './feed/change-feed.js';
import { withChangeMarkers } from './feed/change-marker.js';
import { createNoteService } from './note/note-service.js';
import { createCorpus } from './note/corpus.js';
import { createMemoryContext } from './recall/memory-context.js';
import { searchWithNeighbours } from './recall/search-neighbours.js';
import { createRecallService } from './recall/recall-service.js';
import { createSources } from './recall/sources.js';
import { createBankCode } from './recall/bank-code.js';
import { createSpaceCode } from './recall/space-code.js';
import { createSummaryJobs } from './recall/summaries/jobs.js';
import { createSummariesService } from './recall/summaries/summaries-service.js';
import { bm25Engine } from '../search/bm25.js';
import { createSpaceService, firstNoteSpace } from './space/space-service.js';
import { redactInputs } from './redact/stored-text.js';
import { spendReport } from './spend/report.js';
import { createDoctor } from './system/doctor.js';
import { createHealth } from './system/health.js';
import type { TextIndexEngine } from '../search/types.js';

/**
 * The live-mem library: every capability as plain async functions taking a Caller. The MCP server
 * and the CLI are thin shells over this object; neither holds logic of its own.
 */
export function createCore(options: CoreOptions & { auth?: AuthSettings; searchEngine?: TextIndexEngine }) {
  const context: CoreContext = createContext(options);
  const events = createEvents(context.logger);
  const feed = createChangeFeed({
    storage: context.storage,
    logger: context.logger,
    clock: context.clock,
    ...(options.watchIntervalMs === undefined ? {} : { intervalMs: options.watchIntervalMs }),
  });
  // A change made here is checked at once rather than at the next interval (the feed still finds it in the store).
  events.on(() => feed.poke());
  const corpus = createCorpus(context);
  const notes = createNoteService(
    context,
    corpus,
    (caller, spaceId) => spaces.create(caller, firstNoteSpace(spaceId, caller.agent)),
    (spaceId) => recall.liveTexts(spaceId),
  );
  const bank = createBankService(context);
  const spaces = createSpaceService(
    context,
    {
      countLiveNotes: (spaceId) => notes.stats(spaceId),
      listBank: (spaceId) => bank.listFiles(spaceId),
      measureBank: (spaceId) => bank.measure(spaceId),
      readBank: (spaceId) => bank.readAll(spaceId),
      embeddings: (spaceId) => recall.embeddingProgress(spaceId),
    },
    events.emit,
  );
  const summaries = createSummariesService(context, corpus, { lastJob: (spaceId) => summaryJobs.last(spaceId) });
  const summaryJobs = createSummaryJobs(context, summaries);
  const searchEngine = options.searchEngine ?? bm25Engine;
  const compaction = createCompactionService(context, {
    onCommitted: (spaceId, files) => events.emit({ type: 'bank_changed', space_id: spaceId, files, synthesis: false }),
  });
  const autoCompaction = createAutoCompaction(context, compaction);
  const revisions = createRevisionService(context, {
    corpus,
    onCommitted: (spaceId, files, synthesis) => events.emit({ type: 'bank_changed', space_id: spaceId, files, synthesis }),
  });
  const sources = createSources(context, corpus);
  const bankCode = createBankCode(context, corpus, sources);
  const consolidationHooks: ConsolidationHooks = {
    codeDrift: bankCode.drift,
    onCommitted: (spaceId, changes) => {
      summaryJobs.auto(spaceId);
      autoCompaction.after(
        spaceId,
        changes.files.map((file) => file.filename),
      );
      events.emit({ type: 'bank_changed', space_id: spaceId, ...changes });
    },
  };
  const consolidation = createConsolidationService(context, consolidationHooks, searchEngine);
  /** Consolidation whose plan the calling agent writes (no model needed): ask for a window, submit its plan. */
  const agentConsolidation = createAgentConsolidation(context, consolidationHooks, searchEngine);
  const jobs = createConsolidationJobs(context, consolidation);
  const backups = createBackupService(context);
  const auth = createAuthService(context, options.auth ?? { required: false, ownerAgent: 'local' });
  const health = createHealth(context);
  const recall = createRecallService(context, corpus, searchEngine, sources);
  const memoryContext = createMemoryContext(context, corpus, recall, {
    working: (spaceId) => bank.working(spaceId),
    bankLabels: bankCode.labels,
  });
  const history = createHistoryService(context, corpus);
  const forget = createForgetService(context, {
    corpus,
    search: recall.search,
    onForgotten: (spaceId) => recall.refreshIfOpen(spaceId),
    sectionsOf: (spaceId, note) => sources.ofNote(spaceId, note),
  });
  const spaceCode = createSpaceCode({
    bankCode,
    bankFiles: async (caller, spaceId) => (await bank.readAllFor(caller, { space_id: spaceId })).files,
    liveNotes: async (caller, spaceId, limit) => (await notes.read(caller, { space_id: spaceId, limit })).notes,
  });
  const doctor = createDoctor(context, {
    spaceCode,
    claims: claimInspector(context),
    snapshots: recall.snapshots,
    rebuildIndex: recall.rebuildIndex,
    normalizeLineEndings: (caller, spaceId) =>
      revisions.normalizeLineEndings(caller, { space_id: spaceId, reason: 'doctor --fix: line endings normalised to \n' }),
  });
  // Every capability below takes its caller's text through one pass (redact/stored-text.ts) before it sees it.
  const capabilities = redactInputs(context, {
    spaces,
    notes,
    bank,
    consolidation: { ...consolidation, ask: agentConsolidation.ask, submit: agentConsolidation.submit },
    jobs,
    compaction: { compact: compaction.compact },
    /** Corrections by people, recorded as revisions (bank_write, bank_delete, space_update_rules, bank_revert). */
    revisions,
    /** Forget, with a receipt (memory_forget): notes removed for good from every place that holds them. */
    forget,
    backups,
    auth,
    health,
    doctor,
    /** Model tokens spent per space (spend/): `live-mem spend`. */
    spend: { report: (caller: Parameters<typeof spendReport>[1], input: { space_id: string; since?: string }) => spendReport(context, caller, input) },
    recall: { ...recall, search: searchWithNeighbours(recall.search, recall.neighbours), context: memoryContext },
    /** The space's history: consolidations, compactions, revisions and forgets (history_list, history_read). */
    history,
    /** Provenance: the notes behind a bank section and the sections behind a note (bank_explain; forget reports with it). */
    sources,
    /** The code bank sections stand on (their notes' anchors), checked against a reader's checkout (core/anchors/). */
    bankCode: { check: bankCode.check, annotate: bankCode.annotate, spaceCode },
    summaries: {
      update: summaries.update,
      start: summaryJobs.start,
      status: summaryJobs.status,
      list: summaries.list,
      read: summaries.read,
      records: summaries.records,
    },
  });
  return {
    context,
    /** Changes made in this process (consolidation commits, spaces created or deleted): `events.on(listener)`. */
    events: { on: events.on },
    /** Changes by anyone to the spaces watched, from the store's own change detection (feed/change-feed.ts): `feed.subscribe(spaceIds, listener)`. */
    feed,
    ...capabilities,
    /** Waits for background work that must not be cut by the process exiting (index snapshots, summaries runs). */
    idle: async () => {
      await summaryJobs.idle();
      await autoCompaction.idle();
      await recall.idle();
    },
  };
}

export type Core = ReturnType<typeof createCore>;

/** What createCore is given: the store, and whatever a shell or a test sets instead of the defaults (context.ts). */
export interface CoreOptions {
  storage: StorageDriver;
  clock?: () => Date;
  monotonic?: () => number;
  randomId?: () => string;
  limits?: Partial<Limits>;
  logger?: Logger;
  llm?: LlmClient;
  embeddings?: EmbeddingsClient;
  embeddingsWeight?: number;
  consolidation?: Partial<ConsolidationSettings>;
  budgets?: Partial<BudgetSettings>;
  summaries?: Partial<SummarySettings>;
  compaction?: Partial<CompactionSettings>;
  autoCreateSpaces?: AutoCreateSpaces;
  redact?: RedactMode;
  retention?: RetentionMode;
  fault?: (point: string) => Promise<void>;
  version?: string;
  indexMemoryBytes?: number;
  /** Milliseconds between two checks of a watched space by the change feed (feed/change-feed.ts). */
  watchIntervalMs?: number;
}

/**
 * The kinds of commit the commit room finishes (commit/kind.ts): each client of the room registers
 * here, and only here. The order is the one a refused record's message lists them in.
 */
export const commitKinds = () => registerCommitKinds([consolidationCommit, compactionCommit, revisionCommit, forgetCommit]);

/** The context every part of the core is given: the options over the defaults, the kinds of commit, and the spend ledger made for it. */
export function createContext(options: CoreOptions): CoreContext {
  const logger = options.logger ?? silentLogger;
  // Without folder versions (S3), writes keep change markers: a watcher's idle check is one HEAD (feed/change-marker.ts).
  const storage = withChangeMarkers(options.storage, logger);
  const context: Omit<CoreContext, 'spend'> & { spend?: SpendLedger } = {
    storage,
    freshStat: createFreshStat(storage),
    // The core's one wall clock and one monotonic clock: everything else reads these (test/core/clock.test.ts).
    clock: options.clock ?? (() => new Date()),
    monotonic: options.monotonic ?? (() => performance.now()),
    randomId: options.randomId ?? customAlphabet('0123456789abcdefghijklmnopqrstuvwxyz', 6),
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    logger,
    llm: options.llm,
    embeddings: options.embeddings,
    embeddingsWeight: options.embeddingsWeight ?? DEFAULT_EMBEDDINGS_WEIGHT,
    consolidation: { ...DEFAULT_CONSOLIDATION, ...options.consolidation },
    budgets: { ...DEFAULT_BUDGETS, ...options.budgets },
    summaries: { ...DEFAULT_SUMMARIES, ...options.summaries },
    compaction: { auto: false, ...options.compaction },
    autoCreateSpaces: options.autoCreateSpaces ?? 'off',
    redact: options.redact ?? 'mask',
    retention: options.retention ?? DEFAULT_RETENTION,
    fault: options.fault ?? (async () => undefined),
    version: options.version ?? '0.0.0',
    indexMemoryBytes: options.indexMemoryBytes ?? DEFAULT_INDEX_MEMORY_MB * 1024 * 1024,
    commitKinds: commitKinds(),
  };
  context.spend = createSpendLedger(context as CoreContext);
  return context as CoreContext;
}
