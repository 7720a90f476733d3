import { z } from 'zod';
import { CATEGORIES } from '../../core/validate.js';
import { note, outputShape, spaceId } from '../schemas.js';
import { defineTool, READ_ONLY } from '../tool.js';

const SOURCES = ['live', 'history', 'bank', 'synthesis', 'summary'] as const;

const hit = z.looseObject({
  score: z.number(),
  level: z.number().int().nullable().describe('0 note, k summary of level k, null bank/synthesis'),
  source: z.enum(SOURCES),
  ref: z.string().describe('note filename, bank "file.md#A > B", summary id or _synthesis.md'),
  consolidation_id: z.string().optional(),
  timestamp: z.string().optional(),
  range_start: z.string().optional(),
  range_end: z.string().optional(),
  agent: z.string().optional(),
  category: z.string().optional(),
  text: z.string().describe('whole text when short, else a snippet around the match'),
  truncated: z.boolean(),
});

/** Optional arguments arrive as '' or [] from clients that fill defaults: treat them as absent. */
const given = <T>(value: T | '' | undefined): value is T => value !== '' && value !== undefined && !(Array.isArray(value) && value.length === 0);

export const recallTools = [
  defineTool({
    name: 'memory_search',
    title: 'Search all memory',
    permission: 'read',
    description:
      'Ranked search (BM25, stemmed EN/FR, prefix and typo tolerant; hybrid with embeddings when configured) over every level of a space: ' +
      'live and consolidated notes, bank sections, synthesis, summaries. Finds facts the bank no longer holds; each hit has a ref to read it whole.',
    input: {
      space_id: spaceId,
      query: z.string().describe('Words to find'),
      limit: z.number().int().default(10).describe('1-100'),
      levels: z.array(z.number().int()).default([]).describe('0 = notes, 1+ = summaries; empty = all'),
      sources: z.array(z.enum(SOURCES)).default([]).describe('empty = all'),
      category: z
        .string()
        .default('')
        .describe(`notes of this category only (${CATEGORIES.join(', ')})`),
      agent: z.string().default('').describe('notes by this agent only'),
      since: z.string().default('').describe('ISO 8601; notes/summaries from then on'),
      until: z.string().default('').describe('ISO 8601; up to then'),
    },
    output: outputShape({ space_id: z.string(), query: z.string(), results: z.array(hit).describe('best first'), total: z.number().int() }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) =>
      core.recall.search(caller, {
        space_id: args.space_id,
        query: args.query,
        limit: args.limit,
        ...(given(args.levels) ? { levels: args.levels } : {}),
        ...(given(args.sources) ? { sources: args.sources } : {}),
        ...(given(args.category) ? { category: args.category } : {}),
        ...(given(args.agent) ? { agent: args.agent } : {}),
        ...(given(args.since) ? { since: args.since } : {}),
        ...(given(args.until) ? { until: args.until } : {}),
      }),
  }),
  defineTool({
    name: 'memory_context',
    title: 'Load relevant memory within a token budget',
    permission: 'read',
    description:
      'The slice of a space an agent needs now, as Markdown within max_tokens: newest notes, best hits for the query, ' +
      'recent level-1 summaries and higher-level overviews, deduplicated; omitted counts what did not fit.',
    input: {
      space_id: spaceId,
      query: z.string().default('').describe('What you are working on (optional)'),
      max_tokens: z.number().int().default(4000).describe('200-200000'),
    },
    output: outputShape({
      space_id: z.string(),
      query: z.string(),
      max_tokens: z.number().int(),
      tokens: z.number().int(),
      text: z.string(),
      sections: z.array(z.looseObject({ name: z.string(), items: z.number().int(), tokens: z.number().int() })),
      omitted: z.record(z.string(), z.number().int()),
    }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) =>
      core.recall.context(caller, { space_id: args.space_id, max_tokens: args.max_tokens, ...(args.query ? { query: args.query } : {}) }),
  }),
  defineTool({
    name: 'history_list',
    title: 'List consolidations',
    permission: 'read',
    description: 'Consolidations of a space, newest first: time range, note count, bank files written.',
    input: {
      space_id: spaceId,
      limit: z.number().int().default(20).describe('1-1000'),
      before: z.string().default('').describe('continue after this consolidation id (next_before)'),
    },
    output: outputShape({
      space_id: z.string(),
      consolidations: z.array(z.looseObject({ consolidation_id: z.string(), committed_at: z.string(), notes_count: z.number().int() })),
      total: z.number().int(),
      has_more: z.boolean(),
      next_before: z.string(),
    }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) =>
      core.recall.historyList(caller, { space_id: args.space_id, limit: args.limit, ...(args.before ? { before: args.before } : {}) }),
  }),
  defineTool({
    name: 'history_read',
    title: 'Read one consolidation',
    permission: 'read',
    description: 'A consolidation record and every note it moved out of live/, oldest first.',
    input: { space_id: spaceId, consolidation_id: z.string() },
    output: outputShape({ space_id: z.string(), consolidation: z.looseObject({}), notes: z.array(note), total: z.number().int() }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.recall.historyRead(caller, args),
  }),
];
