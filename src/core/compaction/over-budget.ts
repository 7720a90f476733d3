import { readBankFiles } from '../bank/bank-files.js';
import { type BankBudget, bankBudget, measureTokens, withinBank } from '../bank/budget.js';
import { parseBankRules } from '../bank/rules.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';

/**
 * Which bank files compaction should take: the one measure — a file's tokens against its budget,
 * the bank's own budget counted — used both for the look without the lease that decides whether a
 * model is needed (compaction-service.ts) and for the run under it (run.ts), so the two agree.
 */

/** Each file's budget, lowered for the largest files while the bank as a whole is over its own (budget.ts). */
export async function readBudget(context: CoreContext, spaceId: string, bank: ReadonlyMap<string, { content: string }>): Promise<BankBudget> {
  const rules = (await context.storage.get(spaceKeys(spaceId).rules))?.body.toString('utf8') ?? '';
  const sizes = new Map([...bank].map(([filename, file]) => [filename, measureTokens(file.content)]));
  return withinBank(bankBudget(parseBankRules(rules), context.budgets), sizes);
}

/** Which of `filenames` (default: every bank file) are over their budget now, the bank's own budget counted. */
export async function overBudget(context: CoreContext, spaceId: string, filenames?: readonly string[]): Promise<string[]> {
  const bank = await readBankFiles(context, spaceId);
  const budget = await readBudget(context, spaceId, bank);
  return (filenames ?? [...bank.keys()]).filter((filename) => measureTokens(bank.get(filename)?.content ?? '') > budget.fileTokens(filename));
}
