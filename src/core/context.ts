import { customAlphabet } from 'nanoid';
import type { EmbeddingsClient } from '../llm/embeddings.js';
import type { LlmClient } from '../llm/types.js';
import type { Logger } from '../shared/log.js';
import { silentLogger } from '../shared/log.js';
import type { ObjectInfo, StorageDriver } from '../storage/types.js';
import { DEFAULT_BUDGETS, type BudgetSettings } from './bank/budget.js';
import { createFreshStat } from './fresh-stat.js';
import { DEFAULT_EMBEDDINGS_WEIGHT } from './recall/fusion.js';
import { createSpendLedger, type SpendLedger } from './spend/ledger.js';
import type { RedactMode } from './redact/redact.js';
import { DEFAULT_RETENTION, type RetentionMode } from './retention/record.js';

export interface Limits {
  /** Largest note content accepted, in characters. */
  maxNoteChars: number;
  /** bank_read_all stops adding files past this many bytes and says it truncated. */
  bankReadAllMaxBytes: number;
  /** space_export and backup_download answer in base64 up to this many archive bytes; past it, the CLI. */
  exportMaxBytes: number;
  /** An archive being imported may hold no entry larger than this many bytes, once uncompressed. */
  importMaxEntryBytes: number;
  /** An archive being imported may hold no more than this many bytes in all, once uncompressed. */
  importMaxBytes: number;
  /**
   * On a store without folders (S3): how long a process writes notes into a space it saw exist
   * without checking again. A `space_delete` there waits a little longer than this between removing
   * the meta and its last sweep (see note-service.ts).
   */
  knownSpaceMs: number;
  /** Model tokens a space may spend per UTC day (LIVE_MEM_LLM_DAILY_TOKENS); 0 = no cap. A space's meta may lower it, or an admin's replace it (spend/cap.ts). */
  llmDailyTokens: number;
  /** Percent of a space's daily cap the query embeddings of searches may use (LIVE_MEM_LLM_SEARCH_SHARE). */
  llmSearchShare: number;
}

export const DEFAULT_LIMITS: Limits = {
  maxNoteChars: 100_000,
  bankReadAllMaxBytes: 1_000_000,
  exportMaxBytes: 20_000_000,
  importMaxEntryBytes: 256_000_000,
  importMaxBytes: 4_000_000_000,
  knownSpaceMs: 2_000,
  llmDailyTokens: 0,
  llmSearchShare: 10,
};

export interface ConsolidationSettings {
  /** Per LLM call. */
  timeoutMs: number;
  /** Most notes one consolidation takes (the oldest); the rest wait for the next. */
  maxNotes: number;
  /** Past this many words the synthesis is compressed by one more LLM call. */
  synthesisMaxWords: number;
  /** The consolidation lease: renewed every third of it while a consolidation runs. */
  leaseTtlMs: number;
  /** First backoff before retrying a failed LLM call (429, 5xx, timeout); doubled each time. */
  retryBackoffMs: number;
  /** Most bank files one consolidation may create: a plan creating more is refused whole. */
  maxNewFiles: number;
  /** Most files a bank may hold: a plan that would create more is refused whole (the bank goes into every prompt). */
  maxBankFiles: number;
}

export const DEFAULT_CONSOLIDATION: ConsolidationSettings = {
  timeoutMs: 600_000,
  maxNotes: 500,
  synthesisMaxWords: 600,
  leaseTtlMs: 60_000,
  retryBackoffMs: 1_000,
  maxNewFiles: 20,
  maxBankFiles: 200,
};

export interface SummarySettings {
  /**
   * After a consolidation that committed, update the space's summaries in the background (when a
   * model is configured). Off in the bare library; the shells turn it on from LIVE_MEM_SUMMARIES (default auto).
   */
  auto: boolean;
  /** Default target of note characters per level-1 window. */
  windowChars: number;
  /** Default target of summary characters per group (levels ≥ 2). */
  groupChars: number;
}

export const DEFAULT_SUMMARIES: SummarySettings = { auto: false, windowChars: 6_000, groupChars: 10_000 };

export interface CompactionSettings {
  /**
   * After a consolidation that left a bank file over its budget, compact it in the background (with a
   * configured model). Off in the bare library; the shells turn it on from LIVE_MEM_COMPACTION (default auto).
   */
  auto: boolean;
}

export type AutoCreateSpaces = 'on' | 'off' | 'auto';

/** Everything the core needs from outside, injected so tests control time, randomness and storage. */
/** The default of LIVE_MEM_INDEX_MEMORY_MB for the bare library too (the shells pass the setting). */
export const DEFAULT_INDEX_MEMORY_MB = 512;

export interface CoreContext {
  storage: StorageDriver;
  clock: () => Date;
  /** Random part of note ids: 6 characters of [0-9a-z]. */
  randomId: () => string;
  limits: Limits;
  logger: Logger;
  /** The configured model, if any (a shell may offer another per call, e.g. MCP sampling). */
  llm: LlmClient | undefined;
  /** The configured embedding model, if any; without one, recall is lexical only. */
  embeddings: EmbeddingsClient | undefined;
  /** The cosine ranking's share of a hybrid recall score, 0–1 (LIVE_MEM_EMBEDDINGS_WEIGHT; recall/fusion.ts). */
  embeddingsWeight: number;
  consolidation: ConsolidationSettings;
  /** Size budgets of bank files and of the bank (bank/budget.ts). */
  budgets: BudgetSettings;
  summaries: SummarySettings;
  compaction: CompactionSettings;
  /**
   * Whether a note to a space that does not exist creates it (default rules): `on` for any caller
   * who may write there, `auto` for the local owner only (no token, auth not required), `off` never.
   * Off in the bare library; the shells take LIVE_MEM_AUTO_CREATE_SPACES (default auto).
   */
  autoCreateSpaces: AutoCreateSpaces;
  /**
   * What happens to secrets in a note or an import before it is stored, and whether a model's plan
   * may write one into the bank (redact/redact.ts); `<private>` spans are removed in every mode.
   */
  redact: RedactMode;
  /**
   * What a consolidation does with a note the plan says it kept but whose facts the bank does not
   * hold, and a compaction with a digest that drops what its section held (core/retention): record
   * it, ask the model once more (then record), or refuse.
   */
  retention: RetentionMode;
  /** The live-mem version, written into backup manifests. */
  version: string;
  /**
   * Bytes the search indexes of all spaces may hold together (their estimates): past it, the least
   * recently searched are evicted, and loaded again from their snapshots when asked (recall-service.ts).
   */
  indexMemoryBytes: number;
  /** Test hook: called at named points of a consolidation's commit (see consolidation/commit.ts) and of a summaries run. */
  fault: (point: string) => Promise<void>;
  /** Every model call paid for a space, and its daily cap (spend/ledger.ts); one per core, it caches what it read. */
  spend: SpendLedger;
  /** A stat of a key started after the call, shared by concurrent calls (fresh-stat.ts): checks made on every request. */
  freshStat: (key: string) => Promise<ObjectInfo | null>;
}

export interface CoreOptions {
  storage: StorageDriver;
  clock?: () => Date;
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
}

export function createContext(options: CoreOptions): CoreContext {
  const context: Omit<CoreContext, 'spend'> & { spend?: SpendLedger } = {
    storage: options.storage,
    freshStat: createFreshStat(options.storage),
    clock: options.clock ?? (() => new Date()),
    randomId: options.randomId ?? customAlphabet('0123456789abcdefghijklmnopqrstuvwxyz', 6),
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    logger: options.logger ?? silentLogger,
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
  };
  context.spend = createSpendLedger(context as CoreContext);
  return context as CoreContext;
}
