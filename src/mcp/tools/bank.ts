import { z } from 'zod';
import { bankReadAllResult, outputShape, spaceId } from '../schemas.js';
import { defineTool, READ_ONLY } from '../tool.js';

export const bankTools = [
  defineTool({
    name: 'bank_read',
    title: 'Read a memory bank file',
    permission: 'read',
    description: "Read one file of a space's memory bank (e.g. activeContext.md). The bank is written only by consolidation.",
    input: { space_id: spaceId, filename: z.string().describe('A bank file name such as "activeContext.md" (see bank_list)') },
    output: outputShape({ space_id: z.string(), filename: z.string(), content: z.string(), size: z.number().int(), last_modified: z.string() }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.bank.read(caller, args),
  }),
  defineTool({
    name: 'bank_read_all',
    title: 'Read the whole memory bank',
    permission: 'read',
    description:
      'Read every file of the memory bank in one call: what an agent loads at the start of a session. ' +
      'Files are sorted by name. Past the size cap, files are left out and truncated=true lists them in omitted_files (read those with bank_read).',
    input: { space_id: spaceId },
    output: outputShape({ space_id: z.string(), ...bankReadAllResult }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.bank.readAllFor(caller, args),
  }),
  defineTool({
    name: 'bank_list',
    title: 'List memory bank files',
    permission: 'read',
    description: 'List the files of the memory bank with their sizes and dates, without their content.',
    input: { space_id: spaceId },
    output: outputShape({
      space_id: z.string(),
      files: z.array(z.looseObject({ filename: z.string(), size: z.number().int(), last_modified: z.string() })),
      file_count: z.number().int(),
    }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.bank.list(caller, args),
  }),
];
