import type { BudgetSettings } from '../context.js';
import { estimateTokens } from '../tokens.js';
import type { BankRules } from './rules.js';

/**
 * Size budgets of a bank, in tokens (the one estimate of tokens.ts): what an agent loads at the
 * start of every task (`space_summary`, `bank_read_all`) and what every consolidation sends the
 * model stay bounded as a space ages. A file's budget comes from its entry in the rules, else the
 * settings' default; the bank's from the rules, else the settings'.
 */
export const DEFAULT_BUDGETS: BudgetSettings = { fileTokens: 4_000, bankTokens: 16_000 };

export interface BankBudget {
  bankTokens: number;
  fileTokens(filename: string): number;
}

export function bankBudget(rules: BankRules, settings: BudgetSettings): BankBudget {
  return {
    bankTokens: rules.bankBudget ?? settings.bankTokens,
    fileTokens: (filename) => rules.fileBudgets.get(filename) ?? settings.fileTokens,
  };
}

/** A bank text's size against the budget: the same estimate everywhere. */
export const measureTokens = (content: string): number => estimateTokens(content);

/** One file's size against its budget. */
export interface FileBudgetUse {
  filename: string;
  tokens: number;
  budget_tokens: number;
  over_budget: boolean;
}

/** A bank's size against its budgets: each file's, and the whole bank's. */
export interface BankBudgetUse {
  files: FileBudgetUse[];
  total_tokens: number;
  budget_tokens: number;
  over_budget: boolean;
}

/**
 * Measures bank files against their budgets, from their text: tokens are counted on characters, as
 * consolidation and compaction count them, so what a listing calls over budget is what compaction
 * acts on (a size in bytes would overcount any non-ASCII text: twice for accented letters, three
 * times for CJK).
 */
export function useOfBudget(files: ReadonlyArray<{ filename: string; content: string }>, budget: BankBudget): BankBudgetUse {
  const measured = files.map(({ filename, content }) => {
    const tokens = measureTokens(content);
    const budgetTokens = budget.fileTokens(filename);
    return { filename, tokens, budget_tokens: budgetTokens, over_budget: tokens > budgetTokens };
  });
  const total = measured.reduce((sum, file) => sum + file.tokens, 0);
  return { files: measured, total_tokens: total, budget_tokens: budget.bankTokens, over_budget: total > budget.bankTokens };
}

/**
 * File budgets once the whole bank counts. While the bank is within its budget, each file keeps its
 * own. Past it, the largest files give back first: their budgets come down to one level `cap`, the
 * highest at which the bank fits (the sum of min(size, cap) over the files is the bank's budget),
 * and files already under that level are left alone.
 */
export function withinBank(budget: BankBudget, sizes: ReadonlyMap<string, number>): BankBudget {
  const total = [...sizes.values()].reduce((sum, size) => sum + size, 0);
  if (total <= budget.bankTokens) return budget;
  const fits = (cap: number) => [...sizes.values()].reduce((sum, size) => sum + Math.min(size, cap), 0) <= budget.bankTokens;
  let low = 0;
  let high = Math.max(...sizes.values());
  while (low < high) {
    const mid = Math.ceil((low + high) / 2);
    if (fits(mid)) low = mid;
    else high = mid - 1;
  }
  const cap = low;
  return { bankTokens: budget.bankTokens, fileTokens: (filename) => Math.min(budget.fileTokens(filename), cap) };
}
