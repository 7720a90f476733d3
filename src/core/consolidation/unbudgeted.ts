import { bankBudget, measureTokens } from '../bank/budget.js';
import { parseBankRules } from '../bank/rules.js';
import type { FileWrite } from '../commit/record.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';

/**
 * The files a committed plan left over their size budget, when no model is there to compact them
 * (compaction runs by itself only with one): said in the answer of an agent-written consolidation,
 * with what the agent can do, rather than left for the bank to grow silently.
 */
export async function overBudgetWithoutModel(context: CoreContext, spaceId: string, writes: readonly FileWrite[]): Promise<string[]> {
  if (context.llm) return [];
  const rules = (await context.storage.get(spaceKeys(spaceId).rules))?.body.toString('utf8') ?? '';
  const budget = bankBudget(parseBankRules(rules), context.budgets);
  return writes.flatMap(({ filename, content, kind }) => {
    const tokens = measureTokens(content);
    const allowed = budget.fileTokens(filename);
    return kind !== 'deleted' && tokens > allowed
      ? [
          `${filename} is over its budget (${tokens} of ${allowed} tokens) and no model is configured to compact it: ` +
            'in a later plan, rewrite its older sections shorter (dates, names and numbers kept), or give live-mem a model (docs/model.md)',
        ]
      : [];
  });
}
