import { z } from 'zod';
import { category, categoryFilter, int, notesResult, outputShape, projectSpaceId, str } from '../schemas.js';
import type { Anchor } from '../../core/anchors/anchor.js';
import { anchorsFor, withCheckedAnchors } from '../../core/anchors/note-anchors.js';
import type { Checkout } from '../../shared/checkout.js';
import { invalid } from '../../shared/errors.js';
import { defineTool, READ_ONLY, WRITES } from '../tool.js';

/** A result's notes with their anchors checked against the reader's checkout (core/anchors/). */
async function checked<Result extends { notes: Array<{ anchors?: Anchor[] }> }>(result: Result, checkout: Checkout | undefined) {
  return { ...result, notes: await withCheckedAnchors(checkout, result.notes) };
}

/** Anchors `live-mem cite` printed (a JSON array), as given; undefined for citations to capture here. */
function capturedElsewhere(named: string): unknown[] | undefined {
  if (!named.trimStart().startsWith('[')) return undefined;
  try {
    const given: unknown = JSON.parse(named);
    if (Array.isArray(given)) return given;
  } catch {
    // said below
  }
  throw invalid('anchors: starts like the JSON `live-mem cite` prints but is not a JSON array of anchors');
}

export const liveTools = [
  defineTool({
    name: 'live_note',
    title: 'Write a live note',
    permission: 'write',
    description:
      'Record what you observe, decide, do or wonder as you work: one short note per fact. ' +
      'Consolidation folds them into the bank. Secrets are masked; <private>…</private> is never stored.',
    input: {
      space_id: projectSpaceId,
      category,
      content: z.string().describe('text or Markdown'),
      agent: z.string().default('').describe("your agent name; empty = the server's"),
      tags: z.string().default('').describe('comma-separated'),
      anchors: z.string().default('').describe('code cited: path:1-9, path#fn, or cite JSON'),
    },
    output: outputShape({
      space_id: str,
      filename: str,
      timestamp: str,
      agent: str,
      space_created: z.boolean().describe('this note made the space'),
      redacted: z.array(z.object({ kind: str, count: int })),
      private_removed: int,
    }),
    annotations: WRITES,
    // Anchors captured elsewhere (`live-mem cite`: a server over HTTP cannot read the writer's checkout) are taken as given, checked by the core.
    handler: async ({ anchors: named, ...args }, { core, caller, checkout }) =>
      core.notes.write(caller, { ...args, anchors: capturedElsewhere(named) ?? (await anchorsFor(await checkout?.(), args.content, named)) }),
  }),
  defineTool({
    name: 'live_read',
    title: 'Read recent live notes',
    permission: 'read',
    description: 'Read the newest live (not yet consolidated) notes of a space, newest first, to see what other agents did. has_more: older matches exist.',
    input: {
      space_id: projectSpaceId,
      limit: z.number().int().default(50).describe('1-1000'),
      category: categoryFilter,
      agent: z.string().default('').describe('exact name; empty = all'),
      since: z.string().default('').describe('ISO 8601, inclusive; empty = all'),
      before: z.string().default('').describe('a filename: only older notes (next page)'),
    },
    output: outputShape(notesResult),
    annotations: READ_ONLY,
    handler: async (args, { core, caller, checkout }) => checked(await core.notes.read(caller, args), await checkout?.()),
  }),
  defineTool({
    name: 'live_search',
    title: 'Search live notes',
    permission: 'read',
    description: 'Find live notes containing a text (case-insensitive, in content and tags), newest first. Ranked search of all memory: memory_search.',
    input: {
      space_id: projectSpaceId,
      query: z.string().describe('text to find'),
      limit: z.number().int().default(20).describe('1-1000'),
    },
    output: outputShape(notesResult),
    annotations: READ_ONLY,
    handler: async (args, { core, caller, checkout }) => checked(await core.notes.search(caller, args), await checkout?.()),
  }),
];
