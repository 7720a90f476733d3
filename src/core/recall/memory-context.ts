import type { Checkout } from '../../shared/checkout.js';
import { codeLabel } from '../anchors/note-anchors.js';
import { mapLimit } from '../../shared/concurrency.js';
import { invalid } from '../../shared/errors.js';
import { listKeys, listPrefixes } from '../../storage/list.js';
import { authorize, type Caller, canAccessSpace, holds } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { requireSpace } from '../space-meta.js';
import { escapeShown, fenceLines, newNonce, oneLine, shownDataRule } from '../prompt-fence.js';
import { estimateTokens } from '../tokens.js';
import { validateQuery, validateSpaceId } from '../validate.js';
import type { Corpus } from '../note/corpus.js';
import type { NeighbourOptions } from './neighbours.js';
import { bankItems, hitLabel, type Item, quoted, recentItem, renderNeighbour, renderSummary, shown } from './context-items.js';
import { newestLive, newestNotes } from '../note/newest.js';
import { SITTING_PAUSE_MS } from './ranking.js';
import type { RecallHit, RecallOptions, RecallService } from './recall-service.js';
import { MAX_LEVEL, type SummaryRecord } from '../derived/summary-record.js';
import type { WorkingSet } from '../bank/bank-service.js';
import { type Backlog, type BacklogReach, backlogOf, CONSOLIDATE_BACKLOG, defaultReach } from '../backlog.js';

export interface MemoryContextInput {
  space_id: string;
  query?: string;
  max_tokens?: number;
}

/** What a context reads besides notes and summaries: where the work stands, and how many notes wait. */
export interface ContextParts {
  /** The bank's working files and the synthesis (bank-service.ts). */
  working(spaceId: string): Promise<WorkingSet>;
  /** Bank sections' code labels in the reader's checkout (bank-code.ts), keyed `filename` NUL `lowercased heading path`. */
  bankLabels(
    spaceId: string,
    files: ReadonlyArray<{ filename: string; content: string }>,
    checkout: Checkout | undefined,
  ): Promise<Map<string, { text: string }>>;
}

export interface ContextOptions extends RecallOptions {
  /** Who consolidates for this caller, and whether it can ask (the MCP server knows; default: the endpoint, else the agent). */
  reach?: BacklogReach;
  /** The reader's checkout: a note's anchors are checked against it, labelled, and evidence whose code moved on ranked after the rest (core/anchors/). */
  checkout?: Checkout;
}

type SectionName = 'bank' | 'recent' | 'search' | 'summaries_l1' | 'summaries_higher';

/** The line naming an item's group, escaped like the text it heads. */
const groupLine = (group: string): string => shown(`[${group}]\n`);

interface Section {
  name: SectionName;
  title: string;
  /** The kind its fence names: the items are stored text, shown between the output's fence lines. */
  kind: 'bank' | 'notes' | 'hits' | 'summaries';
  items: Item[];
}

/** How a context divides its budget; the defaults are measured on LoCoMo (`npm run bench -- --only 21`). */
export interface ContextTuning {
  /** Each section's first share of the budget, with a query and without. */
  shares: Record<'query' | 'browse', Record<SectionName, number>>;
  /** Search hits considered. */
  hits: number;
  /** The notes shown with each note hit. */
  neighbours: NeighbourOptions;
}

export const DEFAULT_CONTEXT_TUNING: ContextTuning = {
  shares: {
    // With a query, most of the budget goes to what answers it.
    query: { search: 0.7, bank: 0, recent: 0.1, summaries_l1: 0.1, summaries_higher: 0.1 },
    // Without one, where the work stands (the bank's working files, the synthesis) first, then what is newest.
    browse: { search: 0, bank: 0.5, recent: 0.3, summaries_l1: 0.1, summaries_higher: 0.1 },
  },
  hits: 30,
  // ±2 notes by anyone: on LoCoMo's dev split the best of ±1/±2/±3, by the same agent or any; in the hit's
  // sitting only (the pause that bounds a sitting in ranking.ts): evidence 0.881 → 0.885 (docs/recall.md).
  neighbours: { before: 2, after: 2, by: 'any', gapMs: SITTING_PAUSE_MS },
};

/** The order in which sections claim their share, then what is left: the hits first, the bank before notes. */
const PRIORITY: readonly SectionName[] = ['search', 'bank', 'recent', 'summaries_l1', 'summaries_higher'];

export const MIN_CONTEXT_TOKENS = 200;
export const MAX_CONTEXT_TOKENS = 200_000;
/** Newest raw notes considered for the "recent" section. */
const RECENT_NOTES = 30;

/**
 * Fills sections within one budget: each first up to its share, in PRIORITY order, then each again
 * with whatever is left, so a share one section cannot use goes to those with more to give (the
 * hits first) rather than only to the next. Items keep their rank order; one that does not fit is
 * skipped for smaller ones after it; an item shown by a section earlier in priority is not shown
 * again. An item's extras are taken with it when they fit, else later from what is left.
 */
function pack(sections: Section[], shares: Record<SectionName, number>, heading: string, maxTokens: number, nonce: string) {
  let used = estimateTokens(heading);
  // A section shown is its title and its items between two fence lines of this output's nonce.
  const frame = (section: Section) => {
    const { open, close } = fenceLines(nonce, section.kind);
    return { head: `\n${section.title}\n${open}\n`, foot: `${close}\n` };
  };
  const seen = new Set<string>();
  const state = new Map(sections.map((section) => [section.name, { spent: 0, taken: new Map<Item, Item[]>() }]));
  const fill = (section: Section, budget: number) => {
    const own = state.get(section.name) as { spent: number; taken: Map<Item, Item[]> };
    const { head, foot } = frame(section);
    const title = estimateTokens(head + foot);
    let left = Math.min(budget, maxTokens - used);
    const spend = (cost: number) => {
      left -= cost;
      used += cost;
      own.spent += cost;
    };
    for (const item of section.items) {
      const shown = own.taken.get(item);
      if (!shown) {
        if (seen.has(item.key)) continue;
        const cost = estimateTokens(item.text) + (item.group === undefined ? 0 : estimateTokens(groupLine(item.group))) + (own.taken.size === 0 ? title : 0);
        if (cost > left) continue;
        spend(cost);
        seen.add(item.key);
        own.taken.set(item, []);
      }
      const extras = own.taken.get(item) as Item[];
      for (const extra of item.extras ?? []) {
        if (seen.has(extra.key)) continue;
        const cost = estimateTokens(extra.text);
        if (cost > left) continue;
        spend(cost);
        seen.add(extra.key);
        extras.push(extra);
      }
    }
  };
  const avail = maxTokens - used;
  const ordered = PRIORITY.flatMap((name) => sections.filter((section) => section.name === name));
  for (const section of ordered) fill(section, Math.floor(avail * shares[section.name]));
  for (const section of ordered) fill(section, maxTokens - used);

  const parts = [heading];
  const omitted: Record<SectionName, number> = { bank: 0, recent: 0, search: 0, summaries_l1: 0, summaries_higher: 0 };
  const report: Array<{ name: SectionName; items: number; tokens: number }> = [];
  for (const section of sections) {
    const { spent, taken } = state.get(section.name) as { spent: number; taken: Map<Item, Item[]> };
    const { head, foot } = frame(section);
    if (taken.size > 0) parts.push(head);
    let group: string | undefined;
    for (const item of section.items) {
      const extras = taken.get(item);
      if (!extras) {
        if (!seen.has(item.key)) omitted[section.name]++;
        continue;
      }
      if (item.group !== undefined && item.group !== group) parts.push(groupLine(item.group));
      group = item.group;
      // Neighbours in time order, under their hit.
      const order = item.extras ?? [];
      parts.push(item.text, ...extras.sort((a, b) => order.indexOf(a) - order.indexOf(b)).map((extra) => extra.text));
    }
    if (taken.size > 0) parts.push(foot);
    report.push({ name: section.name, items: taken.size, tokens: spent });
  }
  return { text: parts.join(''), tokens: used, sections: report, omitted };
}

/**
 * Seed 002's enriched context: the most recent raw notes, the best search hits for the query (each
 * with the notes written just before and after it, where the answer to a question often is), the
 * level-1 summaries not yet rolled into level 2, and the newest higher-level summaries —
 * deduplicated across sections, never over the budget (tokens counted by `estimateTokens`, an upper
 * bound of the rendered text), with what was left out counted per section. Each section first gets
 * a share of `max_tokens` (with a query most goes to the hits, without most to the recent notes);
 * what is left then goes to the sections that have more to give, hits first (see `pack`).
 *
 * The text goes into a model's context as it is (a session hook prints it), so it is marked as data
 * the way a prompt marks its notes (prompt-fence.ts): a preamble saying what it is, each section's
 * items between fence lines of a nonce drawn for this output, every stored field escaped (no fence,
 * no tag a client could take for its own) and on one line, agents' names in quotes.
 */
export function createMemoryContext(
  context: CoreContext,
  corpus: Corpus,
  recall: RecallService,
  parts: ContextParts,
  tuning: ContextTuning = DEFAULT_CONTEXT_TUNING,
  nonces: () => string = newNonce,
) {
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

  /** Hits as items, a note's with its neighbours; a hit whose cited code moved on (drifted, missing) after the others, labelled. */
  const hitItems = async (spaceId: string, found: RecallHit[], checkout: Checkout | undefined): Promise<Item[]> => {
    const order = await Promise.all(found.map(async (hit) => ({ hit, code: await codeLabel(checkout, hit.anchors) })));
    // Among the hits that cite code, those whose code moved on come after the others, in the places anchored hits had;
    // a hit citing no code keeps its rank (a drifted note is not pushed below what barely matches).
    const anchored = order.filter((entry) => entry.code);
    const reordered = [...anchored.filter((entry) => !entry.code?.stale), ...anchored.filter((entry) => entry.code?.stale)];
    const ranked = order.map((entry) => (entry.code ? (reordered.shift() as typeof entry) : entry));
    const hits = ranked.map((entry) => entry.hit);
    const notes = hits.filter((hit) => hit.source === 'live' || hit.source === 'history');
    const around = await recall.neighbours.of(
      spaceId,
      notes.map(({ ref, consolidation_id }) => ({ ref, consolidation_id })),
      tuning.neighbours,
    );
    // A neighbour shown beside a hit is labelled by its code as the hit is.
    const near = [...around.values()].flatMap((side) => [...side.before, ...side.after]);
    const nearCodes = new Map(await Promise.all(near.map(async (note) => [note.filename, (await codeLabel(checkout, note.anchors))?.text] as const)));
    return ranked.map(({ hit, code }) => {
      const near = hit.source === 'live' || hit.source === 'history' ? around.get(hit.ref) : undefined;
      return {
        // An earlier version of a bank section has the ref of the section it was: told apart by its compaction.
        key: hit.compaction_id ? `${hit.compaction_id}/${hit.ref}` : hit.ref,
        text: shown(`- [${oneLine(hitLabel(hit))}${code ? `; ${oneLine(code.text)}` : ''}] ${oneLine(hit.text)}\n`),
        ...(near
          ? {
              extras: [
                ...near.before.map((note) => renderNeighbour('before', note, hit.timestamp, nearCodes.get(note.filename))),
                ...near.after.map((note) => renderNeighbour('after', note, hit.timestamp, nearCodes.get(note.filename))),
              ],
            }
          : {}),
      };
    });
  };

  return async function memoryContext(caller: Caller, input: MemoryContextInput, options: ContextOptions = {}) {
    const spaceId = validateSpaceId(input.space_id);
    authorize(caller, 'read', spaceId);
    const maxTokens = input.max_tokens ?? 4000;
    if (!Number.isInteger(maxTokens) || maxTokens < MIN_CONTEXT_TOKENS || maxTokens > MAX_CONTEXT_TOKENS) {
      throw invalid(`max_tokens must be an integer from ${MIN_CONTEXT_TOKENS} to ${MAX_CONTEXT_TOKENS}, got ${JSON.stringify(input.max_tokens)}`);
    }
    const query = validateQuery(input.query, { optional: true });
    await requireSpace(context, spaceId);

    const [recentNotes, working, waiting] = await Promise.all([
      newestNotes(context, corpus, spaceId, RECENT_NOTES),
      // With a query the bank is searched like the rest; without one, its working files come first.
      query ? undefined : parts.working(spaceId),
      // Counted up to the backlog that makes a consolidation due: what the newest notes' listing reads, not the space.
      newestLive(context, corpus, spaceId, CONSOLIDATE_BACKLOG),
    ]);
    const hits = query ? (await recall.search(caller, { space_id: spaceId, query, limit: tuning.hits }, options)).results : [];
    const reach = options.reach ?? defaultReach(context);
    const backlog: Backlog = backlogOf(
      waiting.names.length,
      { ...reach, tool: reach.tool && holds(caller, 'write') && canAccessSpace(caller, spaceId) },
      waiting.more,
    );
    const summaries = await summariesOf(spaceId);
    const rolledUp = new Set(summaries.filter((doc) => doc.level >= 2).flatMap((doc) => doc.covers));
    const newestFirst = (a: SummaryRecord, b: SummaryRecord) => (a.range_end < b.range_end ? 1 : a.range_end > b.range_end ? -1 : b.level - a.level);
    const l1 = summaries.filter((doc) => doc.level === 1 && !rolledUp.has(doc.id)).sort(newestFirst);
    const higher = summaries.filter((doc) => doc.level >= 2).sort((a, b) => b.level - a.level || newestFirst(a, b));

    const sections: Section[] = [
      ...(working
        ? [
            {
              name: 'bank' as const,
              title: '## Where the work stands (the memory bank: working files, then the synthesis)',
              kind: 'bank' as const,
              items: bankItems(working, await parts.bankLabels(spaceId, working.files, options.checkout)),
            },
          ]
        : []),
      {
        name: 'recent',
        title: '## Recent notes (newest first)',
        kind: 'notes',
        items: await Promise.all(recentNotes.map((note) => recentItem(note, options.checkout))),
      },
      {
        name: 'search',
        title: `## Relevant to ${escapeShown(quoted(query ?? ''))} (search over every level)`,
        kind: 'hits',
        items: await hitItems(spaceId, hits, options.checkout),
      },
      {
        name: 'summaries_l1',
        title: '## Recent summaries (level 1, not yet rolled up)',
        kind: 'summaries',
        items: l1.map((doc) => ({ key: doc.id, text: renderSummary(doc) })),
      },
      {
        name: 'summaries_higher',
        title: '## Overview (higher-level summaries)',
        kind: 'summaries',
        items: higher.map((doc) => ({ key: doc.id, text: renderSummary(doc) })),
      },
    ];
    // One nonce per output: the notes were written before it was drawn, so none can name it.
    const nonce = nonces();
    // Without a query (a session's start) the text says what waits and who folds it in; with one, only the answer's `backlog` does.
    const heading = `# Memory context of space '${spaceId}'\n\n${shownDataRule(nonce)}\n${query ? '' : `\n${backlog.advice}\n`}`;
    const packed = pack(sections, query ? tuning.shares.query : tuning.shares.browse, heading, maxTokens, nonce);
    return {
      status: 'ok' as const,
      space_id: spaceId,
      query,
      max_tokens: maxTokens,
      tokens: packed.tokens,
      text: packed.text,
      sections: packed.sections,
      omitted: packed.omitted,
      backlog,
    };
  };
}
