import type { Session } from '../open.js';

export const compact = ({ core, caller, progress }: Session, spaceId: string, flags: { file?: string; dryRun?: boolean }) => {
  progress.update(`compact ${spaceId} · asking the model for digests`);
  return core.compaction.compact(caller, { space_id: spaceId, ...(flags.file !== undefined ? { file: flags.file } : {}), dry_run: flags.dryRun === true });
};
