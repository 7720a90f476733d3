import { z } from 'zod';
import { bankReadAllResult, int, outputShape, projectSpaceId, str } from '../schemas.js';
import { defineTool, READ_ONLY } from '../tool.js';

export const bankTools = [
  defineTool({
    name: 'bank_read',
    title: 'Read a memory bank file',
    permission: 'read',
    description: "Read one file of a space's memory bank, which consolidation writes from the notes.",
    input: { space_id: projectSpaceId, filename: z.string().describe('e.g. activeContext.md') },
    output: outputShape({ filename: str, content: str }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.bank.read(caller, args),
  }),
  defineTool({
    name: 'bank_read_all',
    title: 'Read the whole memory bank',
    permission: 'read',
    description: 'Read every memory bank file in one call. Past a size cap, truncated=true and omitted_files lists what to read with bank_read.',
    input: { space_id: projectSpaceId },
    output: outputShape(bankReadAllResult),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.bank.readAllFor(caller, args),
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
];
