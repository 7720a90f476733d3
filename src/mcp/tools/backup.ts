import { z } from 'zod';
import { outputShape, spaceId } from '../schemas.js';
import { defineTool, READ_ONLY } from '../tool.js';

const backupId = z.string().describe('A backup id as backup_list shows it: {space_id}/{YYYY-MM-DDTHH-MM-SS}-{id}');
const archive = {
  archive_base64: z.string().describe('a .tar.gz (with manifest.json) in base64'),
  archive_size: z.number().int(),
  files_count: z.number().int(),
};

export const backupTools = [
  defineTool({
    name: 'backup_create',
    title: 'Back up a space',
    permission: 'write',
    description:
      'Take a consistent snapshot of a space (rules, meta, synthesis, live notes, bank, history) into the store, with a manifest of every file and its SHA-256. ' +
      'Call it before a risky change. Taken under the space lock, so never half a consolidation.',
    input: { space_id: spaceId, description: z.string().default('').describe('Why this backup (shown by backup_list)') },
    output: outputShape({
      backup_id: z.string(),
      space_id: z.string(),
      files_backed_up: z.number().int(),
      total_size: z.number().int(),
      description: z.string(),
      created_at: z.string(),
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: (args, { core, caller }) => core.backups.create(caller, args),
  }),
  defineTool({
    name: 'backup_list',
    title: 'List backups',
    permission: 'read',
    description: 'List backups, newest first, with their sizes, file counts and descriptions; of one space, or of every space you can access.',
    input: { space_id: z.string().default('').describe('Only this space; empty = every space you can access') },
    output: outputShape({
      backups: z.array(
        z.looseObject({
          backup_id: z.string(),
          space_id: z.string(),
          created_at: z.string(),
          description: z.string(),
          files_count: z.number().int(),
          total_size: z.number().int(),
        }),
      ),
      total: z.number().int(),
    }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.backups.list(caller, args.space_id ? { space_id: args.space_id } : {}),
  }),
  defineTool({
    name: 'backup_restore',
    title: 'Restore a backup',
    permission: 'admin',
    description:
      'Recreate a space from a backup, exactly, after verifying every checksum. The space must not exist (delete it first). ' +
      'A failed restore leaves nothing behind. Requires confirm=true.',
    input: { backup_id: backupId, confirm: z.boolean().default(false).describe('Must be true') },
    output: outputShape({
      backup_id: z.string(),
      space_id: z.string(),
      files_restored: z.number().int(),
      total_size: z.number().int(),
      checksums_verified: z.number().int(),
    }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: (args, { core, caller }) => core.backups.restore(caller, args),
  }),
  defineTool({
    name: 'backup_download',
    title: 'Download a backup',
    permission: 'read',
    description: 'A backup as a .tar.gz in base64 (capped in size; larger backups: `npx live-mem backup download`).',
    input: { backup_id: backupId },
    output: outputShape({ backup_id: z.string(), space_id: z.string(), ...archive }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.backups.download(caller, args),
  }),
  defineTool({
    name: 'backup_delete',
    title: 'Delete a backup',
    permission: 'admin',
    description: 'Delete a backup for good. Requires confirm=true.',
    input: { backup_id: backupId, confirm: z.boolean().default(false).describe('Must be true: this cannot be undone') },
    output: outputShape({ backup_id: z.string(), files_deleted: z.number().int() }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: (args, { core, caller }) => core.backups.delete(caller, args),
  }),
  defineTool({
    name: 'space_export',
    title: 'Export a space',
    permission: 'read',
    description:
      'A whole space as a .tar.gz (with a manifest of checksums) in base64, to move it or hand it over; `live-mem import` restores it. ' +
      'Capped in size; larger spaces: `npx live-mem export SPACE -o space.tar.gz`.',
    input: { space_id: spaceId },
    output: outputShape({ space_id: z.string(), ...archive }),
    annotations: READ_ONLY,
    handler: (args, { core, caller }) => core.backups.exportBase64(caller, args),
  }),
];
