import type { CoreContext } from './context.js';

/**
 * When a space's live notes should be folded into its bank, and by whom — said the same way by the
 * server's instructions, memory_start, memory_wrap_up, memory_context, space_summary and the
 * session hook. Two writers of a plan exist: live-mem's model (a configured endpoint, or the
 * client's by sampling), which runs whenever bank_consolidate is called, and the calling agent
 * itself (agent-plan.ts), which spends its own context on a window: it is asked less often.
 */

/** Who writes consolidation plans for a caller: live-mem's model, or the calling agent (a work package). */
export type Consolidator = 'model' | 'agent';

/** Live notes waiting from which a session should consolidate when it starts (and the model's cue at any time). */
export const CONSOLIDATE_BACKLOG = 30;
/** Live notes waiting from which the agent consolidates at the end of a task: a first session forms the bank. */
export const CONSOLIDATE_AFTER_TASK = 5;

export interface Backlog {
  /** Live notes not yet folded into the bank (at least this many when `at_least`). */
  notes_waiting: number;
  /** Set when only the newest were counted (a context counts what it reads, not the space): `notes_waiting` or more wait. */
  at_least?: true;
  consolidated_by: Consolidator;
  /** Whether this many notes call for a consolidation now (at the start of a session). */
  due: boolean;
  /** One sentence for the agent: how many wait, who folds them and when. */
  advice: string;
}

/** How a caller can reach consolidation: `tool` when bank_consolidate is offered to it and it may write. */
export interface BacklogReach {
  by: Consolidator;
  tool: boolean;
}

/** Who consolidates for a caller of the core with no MCP client in between (the CLI, the session hook): the endpoint, else the agent. */
export const defaultReach = (context: Pick<CoreContext, 'llm'>): BacklogReach => ({ by: context.llm ? 'model' : 'agent', tool: true });

const notes = (count: number): string => `${count} live note${count === 1 ? '' : 's'}`;

/**
 * The backlog of a space whose `waiting` notes are not consolidated yet (`atLeast`: that many or
 * more), for a caller that reaches consolidation as `reach` says.
 */
export function backlogOf(waiting: number, reach: BacklogReach, atLeast = false): Backlog {
  const due = waiting >= CONSOLIDATE_BACKLOG;
  const them = waiting === 1 && !atLeast ? 'it' : 'them';
  const wait = atLeast
    ? `${waiting} or more live notes wait for consolidation into the memory bank`
    : `${notes(waiting)} wait${waiting === 1 ? 's' : ''} for consolidation into the memory bank`;
  let advice: string;
  if (waiting === 0) advice = 'No live note waits for consolidation.';
  else if (!reach.tool) advice = `${wait}; an agent with write access consolidates ${them}.`;
  else if (reach.by === 'model')
    advice = `${wait}; live-mem's model consolidates ${them} when bank_consolidate is called${due ? ': call it now' : ` (from ${CONSOLIDATE_BACKLOG} notes on)`}.`;
  else
    advice =
      `${wait}; no model is configured here, so you consolidate ${them}: bank_consolidate without a plan gives a work package, ` +
      `write the plan it asks for and submit it with its handle. ${due ? 'Do it now, before your task' : `Do it when a session starts with ${CONSOLIDATE_BACKLOG} or more waiting`}, ` +
      `and at the end of a task when ${CONSOLIDATE_AFTER_TASK} or more wait.`;
  return { notes_waiting: waiting, ...(atLeast ? { at_least: true as const } : {}), consolidated_by: reach.by, due, advice };
}
