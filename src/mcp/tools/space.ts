import { z } from 'zod';
import { bankReadAllResult, confirm, int, obj, outputShape, projectSpaceId, secretFlag, spaceId, str } from '../schemas.js';
import { defineTool, READ_ONLY, WRITES } from '../tool.js';

export const spaceTools = [
  defineTool({
    name: 'space_create',
    title: 'Create a space',
    permission: 'write',
    description:
      'Create a memory space for a project, once, before writing notes. rules (Markdown) say which bank files exist and what each holds; ' +
      'empty = the standard six-file memory bank. A person can change them later (space_update_rules).',
    input: {
      space_id: spaceId.describe('the new id: 1-64 letters, digits, _ or -, first a letter or digit'),
      description: z.string().default('').describe('one line: what the space is for'),
      rules: z.string().default('').describe('Markdown: the bank files and what each holds; empty = the standard six'),
      owner: z.string().default('').describe('informative'),
    },
    output: outputShape({ space_id: str, created_at: str }),
    annotations: WRITES,
    handler: (args, { core, caller }) => core.spaces.create(caller, args),
  }),
  defineTool({
    name: 'space_list',
    title: 'List spaces',
    permission: 'read',
    description:
      "List the spaces you can access, with their note and bank file counts (a damaged space has an `error` instead). Use it to find a project's space_id.",
    input: {},
    output: outputShape({ spaces: z.array(z.looseObject({ space_id: str, description: str, error: str.optional() })), total: int }),
    annotations: READ_ONLY,
    handler: (_args, { core, caller }) => core.spaces.list(caller),
  }),
  defineTool({
    name: 'space_info',
    title: 'Describe a space',
    permission: 'read',
    description:
      'Describe a space cheaply (no note bodies): live note count, size and dates, bank files (tokens vs budgets), last consolidation, model tokens spent.',
    input: { space_id: projectSpaceId },
    // Absent before the first consolidation, never null: Gemini's schema subset takes no `type` list.
    output: outputShape({ space_id: str, live: obj, bank: obj, last_consolidation: str, spend: obj }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.spaces.info(caller, args),
  }),
  defineTool({
    name: 'space_rules',
    title: 'Read the rules of a space',
    permission: 'read',
    description: "Read a space's rules: the Markdown saying which bank files exist and what each holds.",
    input: { space_id: spaceId },
    output: outputShape({ space_id: str, rules: str, version: str }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.spaces.rules(caller, args),
  }),
  defineTool({
    name: 'space_update_rules',
    title: 'Change the rules of a space',
    permission: 'admin',
    description: "Replace a space's rules (bank files, budgets). if_match = space_rules' version. Recorded in history; bank_revert undoes it.",
    input: {
      space_id: spaceId,
      rules: z.string().describe('the whole new rules, Markdown'),
      if_match: z.string().default('').describe('the version space_rules gave; refused (conflict) if they changed since'),
      reason: z.string().default('').describe('why, kept in history'),
      secret: secretFlag,
    },
    output: outputShape({ space_id: str, revision_id: str, version: str }),
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    handler: (args, { core, caller }) => core.revisions.updateRules(caller, args),
  }),
  defineTool({
    name: 'space_summary',
    title: 'Load a whole space',
    permission: 'read',
    description: 'Load a space at the start of a session to resume work: info, rules, synthesis and every bank file in one call (no live notes).',
    input: { space_id: projectSpaceId },
    output: outputShape({ space_id: str, rules: str, synthesis: str, ...bankReadAllResult }),
    annotations: READ_ONLY,
    handler: async (args, { core, caller, consolidation, checkout }) => {
      const summary = await core.spaces.summary(caller, args, consolidation);
      return core.bankCode.annotate(summary, summary.space_id, summary.files, await checkout?.());
    },
  }),
  defineTool({
    name: 'space_update',
    title: 'Update a space',
    permission: 'write',
    description: "Change a space's description, owner or daily model-token cap (its rules cannot change).",
    input: {
      space_id: spaceId,
      description: z.string().optional().describe('omitted = unchanged'),
      owner: z.string().optional().describe('omitted = unchanged'),
      llm_daily_tokens: z.number().int().min(0).optional().describe('tokens per UTC day; a writer may only lower the cap, an admin set any (0 = none)'),
    },
    output: outputShape({ space_id: str }),
    annotations: { ...WRITES, idempotentHint: true },
    handler: (args, { core, caller }) => core.spaces.update(caller, args),
  }),
  defineTool({
    name: 'space_delete',
    title: 'Delete a space',
    permission: 'admin',
    description: 'Delete a space and ALL its data, irreversibly. Only when the user explicitly asks; needs confirm=true.',
    input: { space_id: spaceId, confirm },
    output: outputShape({ space_id: str, files_deleted: int }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: (args, { core, caller }) => core.spaces.delete(caller, args),
  }),
];
