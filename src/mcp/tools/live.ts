import { z } from 'zod';
import { CATEGORIES } from '../../core/validate.js';
import { notesResult, outputShape, spaceId } from '../schemas.js';
import { defineTool, READ_ONLY } from '../tool.js';

const categoryHelp =
  'observation (a fact seen), decision (a choice made), todo (work to do), insight (a pattern understood), ' +
  'question (an open question), progress (work done), issue (a problem or bug)';

export const liveTools = [
  defineTool({
    name: 'live_note',
    title: 'Write a live note',
    permission: 'write',
    description:
      'Append a note to a space while you work: what you observed, decided, did, found or still wonder about. ' +
      'Notes are cheap, durable and never overwrite each other; write one per fact or decision rather than one long note. ' +
      `category is one of: ${categoryHelp}. Consolidation later folds notes into the memory bank.`,
    input: {
      space_id: spaceId,
      category: z.string().describe(`One of ${CATEGORIES.join(', ')}`),
      content: z.string().describe('The note: plain text or Markdown, up to 100,000 characters by default'),
      agent: z
        .string()
        .default('')
        .describe('Your agent name (e.g. "cline"); empty = this server\'s configured agent. Token callers always write under their token\'s name'),
      tags: z.string().default('').describe('Comma-separated tags, e.g. "auth,api"'),
    },
    output: outputShape({
      space_id: z.string(),
      filename: z.string(),
      category: z.string(),
      agent: z.string(),
      tags: z.array(z.string()),
      size: z.number().int().describe('bytes stored'),
      timestamp: z.string(),
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: (args, { core, caller }) => core.notes.write(caller, args),
  }),
  defineTool({
    name: 'live_read',
    title: 'Read recent live notes',
    permission: 'read',
    description:
      'Read the newest live notes of a space (not yet consolidated), newest first, optionally only one category, one agent, or notes since a date. ' +
      'has_more says whether older matching notes exist beyond `limit`. Use it to see what other agents did recently.',
    input: {
      space_id: spaceId,
      limit: z.number().int().default(50).describe('Most notes to return, 1-1000'),
      category: z
        .string()
        .default('')
        .describe(`Only this category (${CATEGORIES.join(', ')}); empty = all`),
      agent: z.string().default('').describe('Only notes by this agent (exact name); empty = all'),
      since: z.string().default('').describe('ISO 8601 date-time; only notes from that second on (inclusive); empty = all'),
    },
    output: outputShape(notesResult),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.notes.read(caller, args),
  }),
  defineTool({
    name: 'live_search',
    title: 'Search live notes',
    permission: 'read',
    description: 'Find live notes containing a text (case-insensitive, in content and tags), newest first.',
    input: {
      space_id: spaceId,
      query: z.string().describe('Text to find'),
      limit: z.number().int().default(20).describe('Most notes to return, 1-1000'),
    },
    output: outputShape({ ...notesResult, query: z.string() }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.notes.search(caller, args),
  }),
];
