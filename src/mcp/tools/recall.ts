import { z } from 'zod';
import { categoryFilter, int, note, obj, outputShape, projectSpaceId, spaceId, str } from '../schemas.js';
import { withCheckedAnchors } from '../../core/anchors/note-anchors.js';
import { defineTool, READ_ONLY } from '../tool.js';

const SOURCES = ['live', 'history', 'bank', 'bank_history', 'synthesis', 'summary'] as const;

const preimage = z.looseObject({ filename: str, path: z.array(str), content: str });

const hit = z.looseObject({ source: z.enum(SOURCES), ref: str, text: str, score: z.number() });

/** Optional arguments arrive as '' or [] from clients that fill defaults: treat them as absent. */
const given = <T>(value: T | '' | undefined): value is T => value !== '' && value !== undefined && !(Array.isArray(value) && value.length === 0);

export const recallTools = [
  defineTool({
    name: 'memory_search',
    title: 'Search all memory',
    permission: 'read',
    description:
      "Ranked search of all a space's memory: live and consolidated notes, bank sections and their earlier versions (bank_history), synthesis, summaries. " +
      'Use it to find past facts or decisions, even ones the bank no longer holds.',
    input: {
      space_id: projectSpaceId,
      query: z.string().describe('words to look for'),
      limit: z.number().int().default(10).describe('1-100'),
      levels: z.array(z.number().int()).default([]).describe('0 = notes, 1+ = summaries; empty = all'),
      sources: z.array(z.enum(SOURCES)).default([]).describe('empty = all'),
      category: categoryFilter,
      agent: z.string().default('').describe('notes of this agent only'),
      since: z.string().default('').describe('ISO 8601'),
      until: z.string().default('').describe('ISO 8601'),
      neighbours: z.number().int().default(0).describe('0-5: notes before/after each note hit'),
    },
    output: outputShape({ results: z.array(hit).describe('best first'), total: int }),
    annotations: READ_ONLY,
    handler: async (args, { core, caller, checkout }) => {
      const found = await core.recall.search(caller, {
        space_id: args.space_id,
        query: args.query,
        limit: args.limit,
        ...(given(args.levels) ? { levels: args.levels } : {}),
        ...(given(args.sources) ? { sources: args.sources } : {}),
        ...(given(args.category) ? { category: args.category } : {}),
        ...(given(args.agent) ? { agent: args.agent } : {}),
        ...(given(args.since) ? { since: args.since } : {}),
        ...(given(args.until) ? { until: args.until } : {}),
        ...(args.neighbours ? { neighbours: args.neighbours } : {}),
      });
      // A note's anchors, checked against the reader's checkout (core/anchors/).
      return { ...found, results: await withCheckedAnchors(await checkout?.(), found.results) };
    },
  }),
  defineTool({
    name: 'memory_context',
    title: 'Load relevant memory',
    permission: 'read',
    description:
      'Load the memory relevant to a task as Markdown within max_tokens: without query, the bank where work stands first; ' +
      'newest notes, best hits for query, recent summaries.',
    input: {
      space_id: projectSpaceId,
      query: z.string().default('').describe('what you are working on'),
      max_tokens: z.number().int().default(4000).describe('200-200000'),
    },
    output: outputShape({ text: str, tokens: int, omitted: z.record(str, int).describe('what did not fit, by section') }),
    annotations: READ_ONLY,
    handler: async (args, { core, caller, consolidation, checkout }) => {
      const here = await checkout?.();
      return core.recall.context(
        caller,
        { space_id: args.space_id, max_tokens: args.max_tokens, ...(args.query ? { query: args.query } : {}) },
        { ...(consolidation ? { reach: consolidation } : {}), ...(here ? { checkout: here } : {}) },
      );
    },
  }),
  defineTool({
    name: 'history_list',
    title: 'List consolidations',
    permission: 'read',
    description: 'List the consolidations, compactions and revisions (kind) of a space, newest first: note or pre-image count, bank files written, by, reason.',
    input: {
      space_id: spaceId,
      limit: z.number().int().default(20).describe('1-1000'),
      before: z.string().default('').describe('next_before of the previous page'),
    },
    output: outputShape({ consolidations: z.array(z.looseObject({ consolidation_id: str })), has_more: z.boolean(), next_before: str }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) =>
      core.history.list(caller, { space_id: args.space_id, limit: args.limit, ...(args.before ? { before: args.before } : {}) }),
  }),
  defineTool({
    name: 'history_read',
    title: 'Read one consolidation',
    permission: 'read',
    description:
      'Read one consolidation and every note it moved out of live/, oldest first: the raw notes behind the bank. ' +
      'For a compaction: preimages, the sections it rewrote as they were; for a revision, the files it changed, whole, as they were.',
    input: { space_id: spaceId, consolidation_id: z.string().describe('see history_list') },
    output: outputShape({ consolidation: obj, notes: z.array(note), preimages: z.array(preimage), total: int }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.history.read(caller, args),
  }),
  defineTool({
    name: 'memory_forget',
    title: 'Forget notes, with a receipt',
    permission: 'admin',
    description:
      'Remove notes for good (refs: note filenames, or a query selecting notes) from live/, history, summaries, the search index and its vectors. ' +
      'Without confirm=true, a dry run: the receipt of what would go. The receipt also lists bank files that may derive from them, lines of the bank and synthesis that quote them, and backups that hold them (purge_backups rewrites those).',
    input: {
      space_id: spaceId,
      refs: z.array(z.string()).default([]).describe('note filenames (live_read, history_read, memory_search give them)'),
      query: z.string().default('').describe('instead of refs: forget the notes this finds'),
      limit: z.number().int().default(20).describe('with query: at most this many notes, 1-100'),
      confirm: z.boolean().default(false).describe('false = dry run; true only if the user asked for it'),
      reason: z.string().default('').describe('why, kept in history'),
      purge_backups: z.boolean().default(false).describe('also rewrite the backups without them'),
    },
    output: outputShape({
      dry_run: z.boolean(),
      forget_id: str,
      notes: z.array(z.looseObject({ filename: str })),
      summaries: z.array(obj),
      bank_review: z.array(obj),
      text_hits: z.array(obj),
      backups: z.array(obj),
    }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: false, openWorldHint: false },
    handler: (args, { core, caller }) =>
      core.forget.forget(caller, {
        space_id: args.space_id,
        confirm: args.confirm,
        limit: args.limit,
        purge_backups: args.purge_backups,
        ...(given(args.refs) ? { refs: args.refs } : {}),
        ...(given(args.query) ? { query: args.query } : {}),
        ...(given(args.reason) ? { reason: args.reason } : {}),
      }),
  }),
];
