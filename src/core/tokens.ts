/**
 * The one token estimate of live-mem (consolidation windows, memory_context budgets): about 3.5
 * characters a token for prose and code, rounded up, so a sum of parts never undercounts the whole.
 */
export const estimateTokens = (text: string): number => Math.ceil(text.length / 3.5);
