import type { Session } from '../open.js';

/** `live-mem spend <space> [--since]`: model tokens the space spent, per purpose and per UTC day. */
export const spend = ({ core, caller }: Session, spaceId: string, options: { since?: string }) =>
  core.spend.report(caller, { space_id: spaceId, ...(options.since !== undefined ? { since: options.since } : {}) });
