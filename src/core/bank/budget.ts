import { estimateTokens } from '../tokens.js';
import type { BankRules } from './rules.js';

/**
 * Size budgets of a bank, in tokens (the one estimate of tokens.ts): what an agent loads at the
 * start of every task (`space_summary`, `bank_read_all`) and what every consolidation sends the
 * model stay bounded as a space ages. A file's budget comes from its entry in the rules, else the
 * settings' default; the bank's from the rules, else the settings'.
 */
export interface BudgetSettings {
  /** Default budget of one bank file. */
  fileTokens: number;
  /** Default budget of the whole bank. */
  bankTokens: number;
}

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
