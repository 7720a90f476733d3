import type { ToolDefinition } from '../tool.js';
import { adminTools } from './admin.js';
import { backupTools } from './backup.js';
import { bankTools } from './bank.js';
import { consolidationTools } from './consolidation.js';
import { liveTools } from './live.js';
import { recallTools } from './recall.js';
import { spaceTools } from './space.js';
import { summaryTools } from './summaries.js';
import { systemTools } from './system.js';

/** Every tool the server offers, in the order clients list them. */
export const allTools: ToolDefinition[] = [
  ...spaceTools,
  ...liveTools,
  ...recallTools,
  ...summaryTools,
  ...bankTools,
  ...consolidationTools,
  ...backupTools,
  ...adminTools,
  ...systemTools,
];
