import { z } from 'zod';
import { confirm, int, outputShape, spaceId, str } from '../schemas.js';
import { defineTool, READ_ONLY, WRITES } from '../tool.js';

const backupId = z.string().describe('as backup_list shows it');
const archive = { archive_base64: str.describe('a .tar.gz with a manifest.json'), archive_size: int };

export const backupTools = [
  defineTool({
    name: 'backup_create',
    title: 'Back up a space',
    permission: 'write',
    description: 'Snapshot a space (rules, notes, bank, history) in the store with a checksum manifest, e.g. before a risky change.',
    input: { space_id: spaceId, description: z.string().default('').describe('why this backup') },
    output: outputShape({ backup_id: str, files_backed_up: int }),
    annotations: WRITES,
    handler: (args, { core, caller }) => core.backups.create(caller, args),
  }),
  defineTool({
    name: 'backup_list',
    title: 'List backups',
    permission: 'read',
    description: 'List backups newest first, with sizes and descriptions: of one space, or of every space you can access.',
    input: { space_id: z.string().default('').describe('empty = every space') },
    output: outputShape({ backups: z.array(z.looseObject({ backup_id: str, created_at: str, description: str })), total: int }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.backups.list(caller, args.space_id ? { space_id: args.space_id } : {}),
  }),
  defineTool({
    name: 'backup_restore',
    title: 'Restore a backup',
    permission: 'admin',
    description:
      'Recreate a space exactly from a backup, checksums verified; the space must not exist (delete it first), or give `as` to restore into a new space. Needs confirm=true.',
    input: {
      backup_id: backupId,
      confirm,
      as: z.string().default('').describe("a new space id to restore into; empty = the backup's own space"),
    },
    output: outputShape({ space_id: str, files_restored: int }),
    annotations: WRITES,
    handler: (args, { core, caller }) => core.backups.restore(caller, args),
  }),
  defineTool({
    name: 'backup_download',
    title: 'Download a backup',
    permission: 'read',
    description: 'Download a backup as a base64 .tar.gz (size-capped; larger ones: `npx live-mem backup download`).',
    input: { backup_id: backupId },
    output: outputShape(archive),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.backups.download(caller, args),
  }),
  defineTool({
    name: 'backup_delete',
    title: 'Delete a backup',
    permission: 'admin',
    description: 'Delete a backup for good, when the user asks. Needs confirm=true.',
    input: { backup_id: backupId, confirm },
    output: outputShape({ backup_id: str }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: (args, { core, caller }) => core.backups.delete(caller, args),
  }),
  defineTool({
    name: 'space_export',
    title: 'Export a space',
    permission: 'read',
    description: 'Export a whole space as a base64 .tar.gz with checksums, to move or hand it over (size-capped; larger: `npx live-mem export`).',
    input: { space_id: spaceId },
    output: outputShape(archive),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.backups.exportBase64(caller, args),
  }),
];
