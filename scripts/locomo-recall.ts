/**
 * LoCoMo recall in-process, in seconds: each conversation's turns written as notes on the memory
 * driver (as section 21 of the benchmark writes them: writeConversation, bench-locomo-data.ts, one live
 * note per turn, by its speaker, dated by its session), then every question of categories 1–4 asked of memory_search and,
 * when asked, of memory_context. No consolidation, no MCP, no library baseline: what tuning the ranking
 * and the per-category floors of test/bench/locomo-recall.test.ts need, on the development split only
 * (the held-out one judges, through the benchmark). Run alone it prints the per-category table and
 * writes each question's ranking to .bench/locomo-recall-<split>.json:
 *
 *   node --import tsx scripts/locomo-recall.ts [dev|heldout] [--context]
 *
 * With LOCOMO_EMBEDDINGS="URL MODEL" (what scripts/serve-embeddings.ts prints) it asks in hybrid mode,
 * the cosines weighed LOCOMO_WEIGHT (0.2 by default).
 */
import { mkdir, writeFile } from 'node:fs/promises';
import { fileURLToPath } from 'node:url';
import { ownerCaller } from '../src/core/caller.js';
import { createCore } from '../src/core/core.js';
import { createOpenAiEmbeddings, type EmbeddingsClient } from '../src/llm/embeddings.js';
import { createMemoryDriver } from '../src/storage/memory/memory-driver.js';
import {
  CATEGORIES,
  CATEGORY_NAMES,
  type Conversation,
  loadLocomo,
  oneLine,
  type Ranking,
  type Scores,
  SPLITS,
  type Split,
  score,
  writeConversation,
} from './bench-locomo-data.js';

const caller = ownerCaller('locomo');
const CONTEXT_MAX_TOKENS = 2_000;

export interface QuestionOutcome {
  id: string;
  category: number;
  question: string;
  evidence: string[];
  /** The first `limit` hits as dia ids, null for a hit that is no turn. */
  ranking: Ranking;
  /** memory_context holds an evidence turn (when asked for). */
  context?: boolean;
}

export interface LocomoRecallOptions {
  /** Hits asked of memory_search (10 by default). */
  limit?: number;
  /** Ask memory_context too (2,000 tokens). */
  context?: boolean;
  /** Hybrid: an embeddings endpoint (scripts/serve-embeddings.ts) and the weight of its cosines. */
  embeddings?: { client: EmbeddingsClient; weight: number };
}

/** One conversation written into a fresh core, then asked its questions. */
async function askConversation(conversation: Conversation, options: LocomoRecallOptions): Promise<QuestionOutcome[]> {
  const clock = { now: 0 };
  const storage = createMemoryDriver(() => new Date(clock.now));
  const embeddings = options.embeddings;
  const core = createCore({
    storage,
    clock: () => new Date(clock.now++),
    ...(embeddings ? { embeddings: embeddings.client, embeddingsWeight: embeddings.weight } : {}),
  });
  const spaceId = `locomo-${conversation.id}`;
  try {
    await core.spaces.create(caller, { space_id: spaceId });
    const { texts, turnOf, filenameOf } = await writeConversation(core, caller, spaceId, conversation, clock);
    const textOf = new Map([...texts].map(([diaId, text]) => [diaId, oneLine(text)]));
    if (embeddings) {
      // A search starts embedding every document in the background; idle waits until all are.
      await core.recall.search(caller, { space_id: spaceId, query: 'embed', limit: 1 });
      await core.idle();
    }
    const outcomes: QuestionOutcome[] = [];
    for (const q of conversation.questions) {
      if (!(CATEGORIES as readonly number[]).includes(q.category)) continue;
      const answer = await core.recall.search(caller, { space_id: spaceId, query: q.question, limit: options.limit ?? 10 });
      if (answer.mode !== (embeddings ? 'hybrid' : 'bm25')) throw new Error(`memory_search of ${spaceId} answered in ${answer.mode} mode`);
      const ranking = answer.results.map((hit) => ((hit.source === 'live' || hit.source === 'history') && turnOf.get(hit.ref)) || null);
      let context: boolean | undefined;
      if (options.context) {
        const { text } = await core.recall.context(caller, { space_id: spaceId, query: q.question, max_tokens: CONTEXT_MAX_TOKENS });
        context = q.evidence.some((id) => text.includes(filenameOf.get(id) as string) || text.includes(textOf.get(id) as string));
      }
      outcomes.push({ id: q.id, category: q.category, question: q.question, evidence: q.evidence, ranking, ...(context === undefined ? {} : { context }) });
    }
    return outcomes;
  } finally {
    await core.idle();
  }
}

/** Every question of the conversations, asked as above. */
export async function locomoRecall(conversations: readonly Conversation[], options: LocomoRecallOptions = {}): Promise<QuestionOutcome[]> {
  const outcomes: QuestionOutcome[] = [];
  for (const conversation of conversations) outcomes.push(...(await askConversation(conversation, options)));
  return outcomes;
}

/** The scores of all questions (key 0) and of each category, with memory_context's evidence rate when it was asked. */
export function categoryScores(outcomes: readonly QuestionOutcome[]): Map<number, Scores & { context?: number }> {
  const table = new Map<number, Scores & { context?: number }>();
  for (const category of [0, ...CATEGORIES]) {
    const picked = outcomes.filter((o) => category === 0 || o.category === category);
    const scores = score(picked.map((o) => ({ ranking: o.ranking, evidence: o.evidence })));
    const asked = picked.filter((o) => o.context !== undefined);
    table.set(category, asked.length > 0 ? { ...scores, context: asked.filter((o) => o.context).length / asked.length } : scores);
  }
  return table;
}

export function printCategoryScores(table: ReadonlyMap<number, Scores & { context?: number }>): string {
  const lines = [`${''.padEnd(14)} ${'n'.padStart(4)}  r@1    r@5    r@10   MRR    hit@5  context`];
  for (const [category, s] of table) {
    const name = category === 0 ? 'all' : `${category} ${CATEGORY_NAMES[category]}`;
    const cells = [s.recall1, s.recall5, s.recall10, s.mrr, s.hit5, s.context ?? Number.NaN].map((v) => (Number.isNaN(v) ? '  -  ' : v.toFixed(3)));
    lines.push(`${name.padEnd(14)} ${String(s.questions).padStart(4)}  ${cells.join('  ')}`);
  }
  return lines.join('\n');
}

if (process.argv[1] && fileURLToPath(import.meta.url) === process.argv[1]) {
  const split = (process.argv.find((arg) => arg in SPLITS) ?? 'dev') as Split;
  const started = performance.now();
  // LOCOMO_EMBEDDINGS="URL MODEL" (what scripts/serve-embeddings.ts prints), LOCOMO_WEIGHT the cosines' weight (0.2).
  const [url, model] = (process.env.LOCOMO_EMBEDDINGS ?? '').split(/\s+/);
  const outcomes = await locomoRecall(loadLocomo(SPLITS[split]), {
    limit: Number(process.env.LOCOMO_LIMIT ?? 10),
    context: process.argv.includes('--context'),
    ...(url && model
      ? { embeddings: { client: createOpenAiEmbeddings({ baseUrl: url, apiKey: '', model }), weight: Number(process.env.LOCOMO_WEIGHT ?? 0.2) } }
      : {}),
  });
  console.log(printCategoryScores(categoryScores(outcomes)));
  console.log(`${((performance.now() - started) / 1000).toFixed(1)} s`);
  const dir = fileURLToPath(new URL('../.bench/', import.meta.url));
  await mkdir(dir, { recursive: true });
  await writeFile(`${dir}locomo-recall-${split}.json`, JSON.stringify(outcomes, null, 1));
}
