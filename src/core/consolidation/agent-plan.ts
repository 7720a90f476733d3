import type { Checkout } from '../../shared/checkout.js';
import type { TextIndexEngine } from '../../search/types.js';
import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { type AskInput, askPackage, type NothingToDo, type WorkPackage } from './agent-ask.js';
import { submitPlan } from './agent-submit.js';
import type { ConsolidationDeps, ConsolidationHooks } from './types.js';
import type { ConsolidationResult } from './result.js';

export { type AskInput, DEFAULT_PACKAGE_TOKENS, type NothingToDo, type WorkPackage } from './agent-ask.js';

/**
 * Consolidation whose plan the calling agent writes itself — the third path beside a configured model
 * and MCP sampling, for the many clients that offer neither. `ask` claims the oldest window of live
 * notes and answers a work package (agent-ask.ts); `submit` takes the plan with the package's handle
 * through the same checks a model's plan meets and the one commit protocol, the agent named as its
 * author (agent-submit.ts, agent-commit.ts). A refused plan changes nothing (the claim included) and
 * says what to fix; the agent may submit again until the handle expires. This module only binds the
 * two halves to the core's context, hooks and search engine.
 */
export function createAgentConsolidation(context: CoreContext, hooks: ConsolidationHooks, engine: TextIndexEngine) {
  const deps: ConsolidationDeps = { context, hooks, engine };
  return {
    ask: (caller: Caller, input: AskInput, options: { checkout?: Checkout } = {}): Promise<WorkPackage | NothingToDo> =>
      askPackage(deps, caller, input, options),
    submit: (caller: Caller, input: { space_id: string; handle: string }, text: string): Promise<ConsolidationResult> => submitPlan(deps, caller, input, text),
  };
}

export type AgentConsolidation = ReturnType<typeof createAgentConsolidation>;
