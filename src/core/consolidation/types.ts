import type { Checkout } from '../../shared/checkout.js';
import type { LlmClient } from '../../llm/types.js';
import type { TextIndexEngine } from '../../search/types.js';
import type { CoreContext } from '../context.js';
import type { ChangedFile } from '../events.js';

/**
 * The types the consolidation paths share — a model's run (model-run.ts, model-window.ts), an
 * agent's ask and submit (agent-*.ts) and the service that begins a run (consolidation-service.ts,
 * which re-exports them for its callers) — in a module of their own so that no step imports the
 * service that composes it.
 */

export interface ConsolidateInput {
  space_id: string;
  /** Only this agent's notes, matched exactly (never by substring). */
  agent?: string;
}

export interface ProgressEvent {
  phase: 'collect' | 'llm' | 'apply' | 'compress' | 'done';
  message: string;
  notes_done: number;
  notes_total: number;
  window: number;
}

export interface ConsolidateOptions {
  /** A model for this call only (e.g. MCP sampling), used when none is configured. */
  llm?: LlmClient;
  onProgress?: (event: ProgressEvent) => void;
  /** The checkout of whoever consolidates: the prompt lists the bank's statements whose code moved on there (core/anchors/). */
  checkout?: Checkout;
}

/** What a run's committed windows wrote, all windows together. */
export interface CommittedChanges {
  /** Each bank file once: `created` when the first window that wrote it created it. */
  files: ChangedFile[];
  /** The synthesis got a new content. */
  synthesis: boolean;
}

export interface ConsolidationHooks {
  /** Called after a run that committed at least one window (e.g. to update the space's summaries); must not throw. */
  onCommitted?: (spaceId: string, changes: CommittedChanges) => void;
  /** What the bank's files say of code that moved on in `checkout`, a line each (recall/bank-code.ts): what a prompt asks to repair. */
  codeDrift?: CodeDrift;
}

/** The bank's statements whose cited code drifted or is missing in a checkout, a line each (at most a few dozen). */
export type CodeDrift = (spaceId: string, files: ReadonlyArray<{ filename: string; content: string }>, checkout: Checkout) => Promise<string[]>;

/**
 * What every consolidation path is given by the core's composition: one small object instead of a
 * closure, so that each step is a module-level function whose needs are visible in its signature.
 */
export interface ConsolidationDeps {
  context: CoreContext;
  hooks: ConsolidationHooks;
  /** Ranks a large bank file's sections against a window's notes (bank-view.ts). */
  engine: TextIndexEngine;
}
