import type { EmbeddingsClient } from '../llm/embeddings.js';
import type { LlmClient } from '../llm/types.js';
import type { Logger } from '../shared/log.js';
import type { ObjectInfo, StorageDriver } from '../storage/types.js';
import type { RedactMode } from './redact/redact.js';
import type { RetentionMode } from './retention/record.js';

export interface Limits {
  /** Largest note content accepted, in characters. */
  maxNoteChars: number;
  /** bank_read_all stops adding files past this many bytes and says it truncated. */
  bankReadAllMaxBytes: number;
  /** space_export and backup_download answer in base64 up to this many archive bytes; past it, the CLI. */
  exportMaxBytes: number;
  /** An archive being imported may hold no entry larger than this many bytes, once uncompressed. */
  importMaxEntryBytes: number;
  /** Largest bank file (or synthesis) any writer may leave, in UTF-8 bytes: plans, bank_write, import (validate.ts). */
  bankFileMaxBytes: number;
  /** An archive being imported may hold no more than this many bytes in all, once uncompressed. */
  importMaxBytes: number;
  /**
   * On a store without folders (S3): how long a process writes notes into a space it saw exist
   * without checking again. A `space_delete` there waits a little longer than this between removing
   * the meta and its last sweep (see note/note-create.ts).
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
  bankFileMaxBytes: 1_048_576,
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
  /** How long an agent's claim on a window (agent-plan.ts) holds it: its handle expires then. */
  claimTtlMs: number;
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
  claimTtlMs: 900_000,
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

/** Size budgets of bank files, in tokens (bank/budget.ts). */
export interface BudgetSettings {
  /** Default budget of one bank file. */
  fileTokens: number;
  /** Default budget of the whole bank. */
  bankTokens: number;
}

export type AutoCreateSpaces = 'on' | 'off' | 'auto';

/**
 * The cosine ranking's share of a hybrid score (LIVE_MEM_EMBEDDINGS_WEIGHT; recall/fusion.ts). Chosen on
 * LoCoMo's dev split with two real models (docs/recall.md, "Semantic search"): recall@5 with USE-lite /
 * GloVe-SIF at 0.1 … 0.4 in the table there.
 */
export const DEFAULT_EMBEDDINGS_WEIGHT = 0.2;

/** The default of LIVE_MEM_INDEX_MEMORY_MB for the bare library too (the shells pass the setting). */
export const DEFAULT_INDEX_MEMORY_MB = 512;

/** Everything the core needs from outside, injected so tests control time, randomness and storage (core.ts makes one). */
export interface CoreContext {
  storage: StorageDriver;
  /** The time of day: every timestamp and every expiry the core writes or compares (core.ts defines the default). */
  clock: () => Date;
  /**
   * Milliseconds from an arbitrary origin that never goes back (the default is the process's monotonic clock): durations,
   * waits and throttles, which a wall clock set back or forward (NTP, a test's clock) would stretch or cut.
   */
  monotonic: () => number;
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
  /** Test hook: called at named points of a consolidation's commit (see commit/record.ts FaultPoint) and of a summaries run. */
  fault: (point: string) => Promise<void>;
  /** Every model call paid for a space, and its daily cap (spend/ledger.ts); one per core, it caches what it read. */
  spend: SpendLedger;
  /** A stat of a key started after the call, shared by concurrent calls (fresh-stat.ts): checks made on every request. */
  freshStat: (key: string) => Promise<ObjectInfo | null>;
}

/**
 * The spend ledger the context holds, one per core (spend/ledger.ts keeps it): every model call paid
 * for a space, its daily cap, and the claims of calls in flight. Its contract is declared here, beside
 * the context that carries it, as the storage driver's and the model's are declared beside theirs.
 */
export interface SpendLedger {
  /** The cap in force for a space (spend/cap.ts): its meta read now. */
  capOf(spaceId: string): Promise<SpendCap>;
  /** Writes one record (create-only) under the day of its `at`; counted by this process even if the store fails. */
  record(spaceId: string, entry: SpendRecord): Promise<void>;
  /** One UTC day's totals. */
  dayTotals(spaceId: string, day: string): Promise<SpendTotals>;
  /**
   * Claims `tokens` (a call's prompt estimate and most output) for a call of `purpose`, or throws
   * `quota_exceeded` (nothing claimed, nothing to release) when what is spent and claimed today
   * and this call would pass the space's cap, or, for a search, its share of the cap. `timeoutMs`
   * is the call's: past it (and a minute), a hold left by a process that died no longer counts.
   */
  reserve(spaceId: string, tokens: number, purpose: SpendPurpose, timeoutMs: number): Promise<Reservation>;
  /** Totals for each UTC day from `from` to `to` (both `YYYY-MM-DD`), and over them all. */
  range(spaceId: string, from: string, to: string): Promise<{ total: SpendTotals; days: Array<{ day: string } & SpendTotals> }>;
}

/** `search` is the query embedding of a `memory_search`; `embeddings`, the documents' (an index's). */
export const SPEND_PURPOSES = ['consolidation', 'compaction', 'summaries', 'synthesis', 'embeddings', 'search'] as const;
export type SpendPurpose = (typeof SPEND_PURPOSES)[number];

/**
 * One model call paid for a space (or a few, `calls`), as stored at
 * `{space}/_spend/{YYYY-MM-DD}/{stamp}-{id}.json`. `estimated` when the endpoint reported no usage
 * (MCP sampling, some local servers): the tokens are then live-mem's own estimate of the text sent
 * and received.
 */
export interface SpendRecord {
  at: string;
  purpose: SpendPurpose;
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  calls: number;
  estimated?: boolean;
}

export interface PurposeTotals {
  prompt_tokens: number;
  completion_tokens: number;
  tokens: number;
  calls: number;
}

export interface SpendTotals extends PurposeTotals {
  by_purpose: Partial<Record<SpendPurpose, PurposeTotals>>;
}

/** What one answered request cost, as the meter measured it. */
export interface SpendCost {
  model: string;
  prompt_tokens: number;
  completion_tokens: number;
  estimated: boolean;
}

/**
 * A model call's claim on its space's cap, from before it is sent until it is over: `record` writes
 * what an answered request cost, in place of as much of the claim; `release` lets go of what is left
 * (the call is over: answered, or failed, which no endpoint says the cost of).
 */
export interface Reservation {
  record(cost: SpendCost): Promise<void>;
  release(): Promise<void>;
}

/** The cap in force for a space, and why. */
export interface SpendCap {
  /** Tokens per UTC day, every purpose together; 0 = no cap. */
  tokens: number;
  /** Where `tokens` comes from: the operator's setting, an admin's value for this space, or a writer's lower one. */
  source: 'setting' | 'admin' | 'lowered';
  /** The operator's setting (LIVE_MEM_LLM_DAILY_TOKENS). */
  setting: number;
  /** The cap above the space, the most a writer may set: the admin's value when there is one, else the setting. */
  ceiling: number;
  /** Of `tokens`, what the query embeddings of searches may use (LIVE_MEM_LLM_SEARCH_SHARE); 0 when there is no cap. */
  search: number;
}
