/**
 * The shapes of summary planning (plan.ts): the parameters a plan is made with, what it reads
 * (level-0 units, stored summaries, the planned children of the level below) and what it makes (a
 * level's plan, its summaries and their actions). Data only, apart from the code that plans with
 * it; plan.ts re-exports every name, so its importers are unchanged.
 */
export interface SummaryParams {
  /** Target characters of note text per level-1 window. */
  windowChars: number;
  /** A last window this small or smaller waits (pending); larger, it is summarised open. */
  minFlushChars: number;
  /** Target characters of child summaries per group (levels ≥ 2). */
  groupChars: number;
  /** Tolerance around the targets: 0.2 = ±20%. */
  wiggle: number;
  /** An open last window is sealed once its newest note is this old (and it has minFlushChars). */
  flushAfterMs: number;
}

/** One level-0 unit: a note, or one slice of a note too long for one window. */
export interface Unit {
  /** `filename`, or `filename#i/n`. */
  ref: string;
  filename: string;
  stamp: string;
  noteId: string;
  /** Characters of text; 0 for covered units whose text was not read. */
  chars: number;
  /** Hash of its content (unitHash); empty for covered units whose text was not read. */
  hash: string;
}

/** What planning needs of a stored summary. */
export interface StoredView {
  id: string;
  sealed: boolean;
  covers: string[];
  hash: string;
  created_at: string;
  range_start: string;
  range_end: string;
  /** Length of its summary text: what it weighs in its parent group. */
  chars: number;
}

/** What a group needs of a child: the planned summaries of the level below, in order. */
export interface Child {
  id: string;
  hash: string;
  sealed: boolean;
  chars: number;
  range_start: string;
  range_end: string;
}

export type Action = 'keep' | 'seal' | 'create' | 'regenerate';

export interface Planned {
  id: string;
  level: number;
  sealed: boolean;
  covers: string[];
  hash: string;
  range_start: string;
  range_end: string;
  chars_in: number;
  /** keep: stored as planned; seal: stored, to be marked sealed (no model call); create/regenerate: a model call. */
  action: Action;
  /** The stored summary this one keeps or replaces in place (same id). */
  replaces?: StoredView;
  /** Indexes of its members in the level below (units for L1, children for Lk). */
  members: number[];
}

export interface LevelPlan {
  level: number;
  /** In time order: the order of the level above's children. */
  summaries: Planned[];
  /** Stored summaries of this level no longer in the plan: deleted once the plan is written. */
  stale: StoredView[];
  /** L1: the last notes, too few to summarise yet. */
  pending: { units: number; chars: number };
}

export type Strategy = 'incremental' | 'full';
