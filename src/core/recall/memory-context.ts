import { mapLimit } from '../../shared/concurrency.js';
import { invalid } from '../../shared/errors.js';
import { listKeys, listPrefixes } from '../../storage/list.js';
import { authorize, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { requireSpace } from '../space/meta.js';
import { estimateTokens } from '../tokens.js';
import { validateQuery, validateSpaceId } from '../validate.js';
import type { Corpus } from './corpus.js';
import { newestNotes } from './newest.js';
import type { RecallOptions, RecallService } from './recall-service.js';
import { MAX_LEVEL, type SummaryRecord } from './summaries/record.js';

export interface MemoryContextInput {
  space_id: string;
  query?: string;
  max_tokens?: number;
}

type SectionName = 'recent' | 'search' | 'summaries_l1' | 'summaries_higher';

interface Item {
  /** Deduplication key: a note's filename, a summary id, a bank ref. */
  key: string;
  text: string;
}

interface Section {
  name: SectionName;
  title: string;
  share: number;
  items: Item[];
}

export const MIN_CONTEXT_TOKENS = 200;
export const MAX_CONTEXT_TOKENS = 200_000;
/** Newest raw notes considered for the "recent" section. */
const RECENT_NOTES = 30;
/** Search hits considered. */
const SEARCH_HITS = 30;

const oneLine = (text: string) => text.replace(/\s*\n\s*/g, ' ').trim();

function renderSummary(doc: SummaryRecord): string {
  const findings = doc.key_findings.length > 0 ? `\n  Key findings: ${doc.key_findings.join('; ')}` : '';
  const files = doc.files_mentioned.length > 0 ? `\n  Files: ${doc.files_mentioned.join(', ')}` : '';
  return `- [L${doc.level} ${doc.range_start} → ${doc.range_end}, ${doc.id}] ${oneLine(doc.summary)}${findings}${files}\n`;
}

/**
 * Seed 002's enriched context: the most recent raw notes, the best search hits for the query, the
 * level-1 summaries not yet rolled into level 2, and the newest higher-level summaries — each
 * section with a share of `max_tokens` (what one leaves unused goes to the next), deduplicated
 * across sections, never over the budget (tokens counted by `estimateTokens`, an upper bound of
 * the rendered text), with what was left out counted per section.
 */
export function createMemoryContext(context: CoreContext, corpus: Corpus, recall: RecallService) {
  /**
   * Every summary, from the summary folders (not the search index: loading a whole space's index
   * to learn which summaries exist would make a context cost the space).
   */
  const summariesOf = async (spaceId: string): Promise<SummaryRecord[]> => {
    const keys = spaceKeys(spaceId);
    const folders = new Set(await corpus.cachedListing(keys.summaries, () => listPrefixes(context.storage, keys.summaries)));
    const found: Array<{ level: number; id: string }> = [];
    for (let level = 1; level <= MAX_LEVEL; level++) {
      const folder = keys.summaryLevel(level);
      if (!folders.has(folder)) continue;
      const listed = await corpus.cachedListing(folder, () => listKeys(context.storage, folder, { delimiter: '/' }));
      for (const key of listed) if (key.endsWith('.json')) found.push({ level, id: key.slice(folder.length, -'.json'.length) });
    }
    const docs = await mapLimit(found, context.storage.parallelism, ({ level, id }) => recall.readSummary(spaceId, level, id));
    return docs.filter((doc): doc is SummaryRecord => doc !== null);
  };

  return async function memoryContext(caller: Caller, input: MemoryContextInput, options: RecallOptions = {}) {
    const spaceId = validateSpaceId(input.space_id);
    authorize(caller, 'read', spaceId);
    const maxTokens = input.max_tokens ?? 4000;
    if (!Number.isInteger(maxTokens) || maxTokens < MIN_CONTEXT_TOKENS || maxTokens > MAX_CONTEXT_TOKENS) {
      throw invalid(`max_tokens must be an integer from ${MIN_CONTEXT_TOKENS} to ${MAX_CONTEXT_TOKENS}, got ${JSON.stringify(input.max_tokens)}`);
    }
    const query = validateQuery(input.query, { optional: true });
    await requireSpace(context, spaceId);

    const recentNotes = await newestNotes(context, corpus, spaceId, RECENT_NOTES);
    const hits = query ? (await recall.search(caller, { space_id: spaceId, query, limit: SEARCH_HITS }, options)).results : [];
    const summaries = await summariesOf(spaceId);
    const rolledUp = new Set(summaries.filter((doc) => doc.level >= 2).flatMap((doc) => doc.covers));
    const newestFirst = (a: SummaryRecord, b: SummaryRecord) => (a.range_end < b.range_end ? 1 : a.range_end > b.range_end ? -1 : b.level - a.level);
    const l1 = summaries.filter((doc) => doc.level === 1 && !rolledUp.has(doc.id)).sort(newestFirst);
    const higher = summaries.filter((doc) => doc.level >= 2).sort((a, b) => b.level - a.level || newestFirst(a, b));

    const sections: Section[] = [
      {
        name: 'recent',
        title: '## Recent notes (newest first)',
        share: query ? 0.25 : 0.4,
        items: recentNotes.map((note) => ({
          key: note.filename,
          text: `- [${note.timestamp} ${note.agent} ${note.category}${note.source === 'history' ? ', consolidated' : ''}] ${oneLine(note.content)}\n`,
        })),
      },
      {
        name: 'search',
        title: `## Relevant to "${oneLine(query)}" (search over every level)`,
        share: query ? 0.35 : 0,
        // An earlier version of a bank section has the ref of the section it was: told apart by its compaction.
        items: hits.map((hit) => ({
          key: hit.compaction_id ? `${hit.compaction_id}/${hit.ref}` : hit.ref,
          text: `- [${hit.source}${hit.level === null ? '' : ` L${hit.level}`} ${hit.timestamp ?? hit.range_end ?? (hit.superseded_at ? `superseded ${hit.superseded_at}` : '')} ${hit.ref}] ${oneLine(hit.text)}\n`,
        })),
      },
      {
        name: 'summaries_l1',
        title: '## Recent summaries (level 1, not yet rolled up)',
        share: query ? 0.2 : 0.3,
        items: l1.map((doc) => ({ key: doc.id, text: renderSummary(doc) })),
      },
      {
        name: 'summaries_higher',
        title: '## Overview (higher-level summaries)',
        share: query ? 0.2 : 0.3,
        items: higher.map((doc) => ({ key: doc.id, text: renderSummary(doc) })),
      },
    ];

    const heading = `# Memory context of space '${spaceId}'\n`;
    let used = estimateTokens(heading);
    const parts = [heading];
    const seen = new Set<string>();
    const omitted: Record<SectionName, number> = { recent: 0, search: 0, summaries_l1: 0, summaries_higher: 0 };
    const report: Array<{ name: SectionName; items: number; tokens: number }> = [];
    let carry = 0;
    for (const section of sections) {
      const fresh = section.items.filter((item) => !seen.has(item.key));
      const budget = Math.min(maxTokens - used, Math.floor((maxTokens - estimateTokens(heading)) * section.share) + carry);
      const title = `\n${section.title}\n`;
      let spent = 0;
      let taken = 0;
      if (fresh.length > 0 && estimateTokens(title) < budget) {
        spent = estimateTokens(title);
        const body: string[] = [title];
        for (const item of fresh) {
          const cost = estimateTokens(item.text);
          if (spent + cost > budget) {
            omitted[section.name]++;
            continue;
          }
          spent += cost;
          taken++;
          seen.add(item.key);
          body.push(item.text);
        }
        if (taken > 0) parts.push(...body);
        else spent = 0;
      } else omitted[section.name] += fresh.length;
      used += spent;
      carry = budget - spent;
      report.push({ name: section.name, items: taken, tokens: spent });
    }
    return {
      status: 'ok' as const,
      space_id: spaceId,
      query,
      max_tokens: maxTokens,
      tokens: used,
      text: parts.join(''),
      sections: report,
      omitted,
    };
  };
}
