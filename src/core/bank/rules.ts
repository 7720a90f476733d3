import { outlineOf } from '../markdown/outline.js';

/** The most characters a space's rules may hold (space_create, a person's correction of the rules). */
export const MAX_RULES_CHARS = 200_000;

/**
 * What a space's rules say about its bank files, read from the rules' Markdown: a heading that
 * names a file (`### progress.md`) owns the section below it.
 *   - "append-only" (or "append only") in a file's section: consolidation may only add to it;
 *   - "rewritten whole", "rewritten each time" or "rewritten at every consolidation" in a file's section: a plan may
 *     rewrite it without some of its sections (any other file rewritten whole keeps its headings);
 *   - "Budget: 2,000 tokens" in a file's section: that file's size budget;
 *   - "Bank budget: 20,000 tokens" anywhere else: the whole bank's budget.
 * Rules are written by people: anything not recognised is simply not a statement about files.
 */
export interface BankRules {
  /** The files the rules' headings name, in the rules' order. */
  files: string[];
  appendOnly: Set<string>;
  /** Files the rules say are rewritten whole ("rewritten at every consolidation"): a rewrite may drop their sections. */
  rewrittenWhole: Set<string>;
  /** Budgets the rules give files, in tokens. */
  fileBudgets: Map<string, number>;
  /** The whole bank's budget the rules give, in tokens. */
  bankBudget?: number;
}

const FILE_BUDGET = /(?:^|\s)budget\s*[:=]\s*([\d][\d,_ ]*)\s*tokens?\b/i;
const REWRITTEN_WHOLE = /(?<!\b(?:not|never)\s+(?:be\s+)?)\brewritten\s+(?:whole|entirely|from\s+scratch|(?:(?:at|on|in|with)\s+)?(?:every|each))\b/i;
const BANK_BUDGET = /\bbank\s+budget\s*[:=]\s*([\d][\d,_ ]*)\s*tokens?\b/i;

/** Emphasis is no part of a statement: `**Budget:** 1500 tokens` says what `Budget: 1500 tokens` says. */
const plain = (text: string): string => text.replace(/[*`]/g, '');

const tokensOf = (match: RegExpExecArray | null): number | undefined => {
  const value = match ? Number((match[1] as string).replace(/[,_ ]/g, '')) : Number.NaN;
  return Number.isSafeInteger(value) && value > 0 ? value : undefined;
};

export function parseBankRules(stored: string): BankRules {
  const { text: rules, headings } = outlineOf(stored);
  const files: string[] = [];
  const appendOnly = new Set<string>();
  const rewrittenWhole = new Set<string>();
  const fileBudgets = new Map<string, number>();
  // What no file's section holds, in order: where the bank's own budget is looked for.
  const outside: string[] = [];
  let at = 0;
  for (const heading of headings) {
    const name = /([\w.-]+\.md)\b/.exec(heading.text)?.[1];
    if (!name) continue;
    if (!files.includes(name)) files.push(name);
    const section = rules.slice(heading.bodyStart, heading.end);
    if (/append[- ]only/i.test(section)) appendOnly.add(name);
    if (REWRITTEN_WHOLE.test(plain(section))) rewrittenWhole.add(name);
    const budget = tokensOf(FILE_BUDGET.exec(plain(section)));
    if (budget !== undefined) fileBudgets.set(name, budget);
    if (heading.bodyStart > at) outside.push(rules.slice(at, heading.bodyStart));
    at = Math.max(at, heading.end);
  }
  outside.push(rules.slice(at));
  const bankBudget = tokensOf(BANK_BUDGET.exec(plain(outside.join(''))));
  return { files, appendOnly, rewrittenWhole, fileBudgets, ...(bankBudget !== undefined ? { bankBudget } : {}) };
}

/**
 * The bank's working files: where the work stands, which every session loads first (memory_context
 * without a query, the session hook). The rules name them by what they say of a file: one rewritten
 * at every consolidation holds the present (activeContext.md), one append-only the record of what
 * was done (progress.md). In the rules' order.
 */
export const workingFiles = (rules: BankRules): string[] => rules.files.filter((file) => rules.rewrittenWhole.has(file) || rules.appendOnly.has(file));
