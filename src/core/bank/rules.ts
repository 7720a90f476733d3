import { headingsOf } from '../consolidation/markdown.js';

/**
 * What a space's rules say about its bank files, read from the rules' Markdown: a heading that
 * names a file (`### progress.md`) owns the section below it.
 *   - "append-only" (or "append only") in a file's section: consolidation may only add to it;
 *   - "Budget: 2,000 tokens" in a file's section: that file's size budget;
 *   - "Bank budget: 20,000 tokens" anywhere else: the whole bank's budget.
 * Rules are written by people: anything not recognised is simply not a statement about files.
 */
export interface BankRules {
  appendOnly: Set<string>;
  /** Budgets the rules give files, in tokens. */
  fileBudgets: Map<string, number>;
  /** The whole bank's budget the rules give, in tokens. */
  bankBudget?: number;
}

const FILE_BUDGET = /(?:^|\s)budget\s*[:=]\s*([\d][\d,_ ]*)\s*tokens?\b/i;
const BANK_BUDGET = /\bbank\s+budget\s*[:=]\s*([\d][\d,_ ]*)\s*tokens?\b/i;

/** Emphasis is no part of a statement: `**Budget:** 1500 tokens` says what `Budget: 1500 tokens` says. */
const plain = (text: string): string => text.replace(/[*`]/g, '');

const tokensOf = (match: RegExpExecArray | null): number | undefined => {
  const value = match ? Number((match[1] as string).replace(/[,_ ]/g, '')) : Number.NaN;
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
};

export function parseBankRules(rules: string): BankRules {
  const appendOnly = new Set<string>();
  const fileBudgets = new Map<string, number>();
  let outside = rules;
  for (const heading of headingsOf(rules)) {
    const name = /([\w.-]+\.md)\b/.exec(heading.text)?.[1];
    if (!name) continue;
    const section = rules.slice(heading.bodyStart, heading.end);
    if (/append[- ]only/i.test(section)) appendOnly.add(name);
    const budget = tokensOf(FILE_BUDGET.exec(plain(section)));
    if (budget !== undefined) fileBudgets.set(name, budget);
    outside = outside.replace(section, '');
  }
  const bankBudget = tokensOf(BANK_BUDGET.exec(plain(outside)));
  return { appendOnly, fileBudgets, ...(bankBudget !== undefined ? { bankBudget } : {}) };
}
