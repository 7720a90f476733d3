import { z } from 'zod';
import { spaceId, outputShape, spaceInfo, bankReadAllResult } from '../schemas.js';
import { defineTool, READ_ONLY } from '../tool.js';

export const spaceTools = [
  defineTool({
    name: 'space_create',
    title: 'Create a memory space',
    permission: 'write',
    description:
      'Create a new memory space: a place where agents share live notes and a consolidated memory bank. ' +
      'Call it once per project before writing notes. `rules` (Markdown) define which bank files exist and what goes in each; ' +
      'leave them empty for the standard six-file memory bank (projectbrief, productContext, activeContext, systemPatterns, techContext, progress). ' +
      'Rules cannot be changed later. Fails with already_exists if the space exists.',
    input: {
      space_id: spaceId,
      description: z.string().default('').describe('One line saying what this space is for'),
      rules: z.string().default('').describe('Markdown rules for the memory bank; empty = the standard template'),
      owner: z.string().default('').describe('Who owns the space (informative)'),
    },
    output: outputShape({ space_id: z.string(), description: z.string(), owner: z.string(), rules_size: z.number().int(), created_at: z.string() }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: (args, { core, caller }) => core.spaces.create(caller, args),
  }),
  defineTool({
    name: 'space_list',
    title: 'List memory spaces',
    permission: 'read',
    description:
      'List the memory spaces you can access, with their description, owner, number of live notes and bank files. Call it to find the space_id of a project.',
    input: {},
    output: outputShape({
      spaces: z.array(
        z.looseObject({
          space_id: z.string(),
          description: z.string(),
          owner: z.string(),
          created_at: z.string(),
          live_notes_count: z.number().int(),
          bank_files_count: z.number().int(),
        }),
      ),
      total: z.number().int(),
    }),
    annotations: READ_ONLY,
    handler: (_args, { core, caller }) => core.spaces.list(caller),
  }),
  defineTool({
    name: 'space_info',
    title: 'Describe a memory space',
    permission: 'read',
    description: 'Details of one space: description, owner, live note count/size/time range, bank files, last consolidation. Cheap: reads no note bodies.',
    input: { space_id: spaceId },
    output: outputShape(spaceInfo),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.spaces.info(caller, args),
  }),
  defineTool({
    name: 'space_rules',
    title: 'Read the rules of a space',
    permission: 'read',
    description: "Read a space's rules: the Markdown that defines its memory bank's files and what each holds.",
    input: { space_id: spaceId },
    output: outputShape({ space_id: z.string(), rules: z.string() }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.spaces.rules(caller, args),
  }),
  defineTool({
    name: 'space_summary',
    title: 'Load a whole space',
    permission: 'read',
    description:
      'Everything an agent needs to resume work in one call: space info, rules, the cumulative synthesis and every bank file. ' +
      'Call it at the start of a session. Live notes are not included: use live_read for those.',
    input: { space_id: spaceId },
    output: outputShape({ ...spaceInfo, rules: z.string(), synthesis: z.string(), ...bankReadAllResult }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.spaces.summary(caller, args),
  }),
  defineTool({
    name: 'space_update',
    title: 'Update a space',
    permission: 'write',
    description: "Change a space's description and/or owner. Rules cannot be changed.",
    input: {
      space_id: spaceId,
      description: z.string().optional().describe('New description'),
      owner: z.string().optional().describe('New owner'),
    },
    output: outputShape({ space_id: z.string(), description: z.string(), owner: z.string(), updated_at: z.string() }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false },
    handler: (args, { core, caller }) => core.spaces.update(caller, args),
  }),
  defineTool({
    name: 'space_delete',
    title: 'Delete a space',
    permission: 'admin',
    description:
      'Delete a space and ALL its data: rules, live notes, memory bank, synthesis. Irreversible. ' +
      'Only when the user explicitly asks; requires confirm=true.',
    input: {
      space_id: spaceId,
      confirm: z.boolean().default(false).describe('Must be true: deleting cannot be undone'),
    },
    output: outputShape({ space_id: z.string(), files_deleted: z.number().int() }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: (args, { core, caller }) => core.spaces.delete(caller, args),
  }),
];
