import type { CommandDef } from '../command.js';
import type { Session } from '../open.js';

export const compact = ({ core, caller, progress }: Session, spaceId: string, flags: { file?: string; dryRun?: boolean }) => {
  progress.update(`compact ${spaceId} · asking the model for digests`);
  return core.compaction.compact(caller, { space_id: spaceId, ...(flags.file !== undefined ? { file: flags.file } : {}), dry_run: flags.dryRun === true });
};

export const compactCommand: CommandDef = {
  name: 'compact <space_id>',
  description: 'rewrite the older sections of bank files over their budget as digests (guarded; pre-images kept in history)',
  options: [
    { flags: '--file <name>', description: 'only this bank file' },
    { flags: '--dry-run', description: 'ask the model and check its digests, but write nothing' },
  ],
  run: compact,
  view: 'compaction',
};
