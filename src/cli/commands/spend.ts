import type { CommandDef } from '../command.js';
import type { Session } from '../open.js';

/** `live-mem spend <space> [--since]`: model tokens the space spent, per purpose and per UTC day. */
export const spend = ({ core, caller }: Session, spaceId: string, options: { since?: string }) =>
  core.spend.report(caller, { space_id: spaceId, ...(options.since !== undefined ? { since: options.since } : {}) });

export const spendCommand: CommandDef = {
  name: 'spend <space_id>',
  description: 'model tokens the space spent (consolidation, compaction, summaries, synthesis, embeddings), per purpose and per UTC day',
  options: [{ flags: '--since <date>', description: 'from this day (ISO 8601; default: the last 30 days, at most 366)' }],
  run: spend,
  view: 'spend',
};
