import { z } from 'zod';
import { bankReadAllResult, confirm, int, obj, outputShape, projectSpaceId, secretFlag, spaceId, str } from '../schemas.js';
import { defineTool, READ_ONLY } from '../tool.js';

export const bankTools = [
  defineTool({
    name: 'bank_read',
    title: 'Read a memory bank file',
    permission: 'read',
    description: "Read one file of a space's memory bank, which consolidation writes from the notes.",
    input: { space_id: projectSpaceId, filename: z.string().describe('e.g. activeContext.md') },
    output: outputShape({ filename: str, content: str, version: str }),
    annotations: READ_ONLY,
    handler: async (args, { core, caller, checkout }) => {
      const read = await core.bank.read(caller, args);
      return core.bankCode.annotate(read, args.space_id, [read], await checkout?.());
    },
  }),
  defineTool({
    name: 'bank_read_all',
    title: 'Read the whole memory bank',
    permission: 'read',
    description: 'Read every memory bank file in one call; past a size cap, truncated=true and omitted_files lists the rest.',
    input: { space_id: projectSpaceId },
    output: outputShape(bankReadAllResult),
    annotations: READ_ONLY,
    handler: async (args, { core, caller, checkout }) => {
      const read = await core.bank.readAllFor(caller, args);
      return core.bankCode.annotate(read, args.space_id, read.files, await checkout?.());
    },
  }),
  defineTool({
    name: 'bank_list',
    title: 'List memory bank files',
    permission: 'read',
    description: 'List the memory bank files of a space with sizes (bytes; tokens vs budgets) and dates, without their content.',
    input: { space_id: projectSpaceId },
    output: outputShape({
      files: z.array(z.looseObject({ filename: str, size: int, tokens: int, budget_tokens: int })),
      total_tokens: int,
    }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.bank.list(caller, args),
  }),
  defineTool({
    name: 'bank_explain',
    title: 'Why the bank says this',
    permission: 'read',
    description: 'The notes a bank file (or one section) was consolidated from, newest first, with their text and consolidation.',
    input: {
      space_id: spaceId,
      filename: str,
      section: z.string().default('').describe('heading path "Top > Sub"; empty = whole file'),
      limit: int.default(20).describe('1-100'),
    },
    output: outputShape({ notes: z.array(obj), total: int }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.sources.explain(caller, args),
  }),
  defineTool({
    name: 'bank_write',
    title: 'Correct a memory bank file',
    permission: 'admin',
    description:
      "Write a bank file by hand (or the synthesis, as _synthesis.md): whole (content) or by section edits (edits). if_match = bank_read's version (required for an existing file). " +
      'Recorded in history with the previous text; bank_revert undoes it.',
    input: {
      space_id: spaceId,
      filename: z.string().describe('e.g. activeContext.md; created if absent'),
      content: z.string().optional().describe('the whole new text'),
      edits: z
        .array(
          z.looseObject({
            op: z.enum(['replace', 'append', 'prepend', 'add', 'delete']).describe('what to do to the section'),
            section: z.string().describe('heading path, "Top > Sub"'),
            content: z.string().optional().describe('the text (not for delete)'),
            title: z.string().optional().describe('add: the new heading'),
          }),
        )
        .optional()
        .describe('instead of content: section edits'),
      if_match: z.string().default('').describe('the version bank_read gave; refused (conflict) if the file changed since'),
      reason: z.string().default('').describe('why, kept in history'),
      secret: secretFlag,
    },
    output: outputShape({ filename: str, revision_id: str, version: str }),
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    handler: (args, { core, caller }) => core.revisions.write(caller, args),
  }),
  defineTool({
    name: 'bank_delete',
    title: 'Delete a memory bank file',
    permission: 'admin',
    description: 'Delete a bank file (needs confirm=true). Its text stays in history; bank_revert brings it back.',
    input: {
      space_id: spaceId,
      filename: z.string().describe('the bank file'),
      confirm,
      if_match: z.string().default('').describe('optional: the version bank_read gave'),
      reason: z.string().default('').describe('why, kept in history'),
      secret: secretFlag,
    },
    output: outputShape({ filename: str, revision_id: str }),
    annotations: { readOnlyHint: false, destructiveHint: true, openWorldHint: false },
    handler: (args, { core, caller }) => core.revisions.delete(caller, args),
  }),
  defineTool({
    name: 'bank_revert',
    title: 'Revert a correction',
    permission: 'admin',
    description: 'Undo a revision (bank_write, bank_delete, space_update_rules; see history_list) while its files are unchanged since. Needs confirm=true.',
    input: {
      space_id: spaceId,
      revision_id: z.string().describe("a revision's id, from history_list"),
      confirm,
      reason: z.string().default('').describe('why, kept in history'),
    },
    output: outputShape({ revision_id: str, reverted: str, files: z.array(str) }),
    annotations: { readOnlyHint: false, destructiveHint: false, openWorldHint: false },
    handler: (args, { core, caller }) => core.revisions.revert(caller, args),
  }),
];
