import type { ToolDefinition } from '../tool.js';
import { adminTools } from './admin.js';
import { backupTools } from './backup.js';
import { bankTools } from './bank.js';
import { consolidationTools } from './consolidation.js';
import { liveTools } from './live.js';
import { spaceTools } from './space.js';
import { systemTools } from './system.js';

/** Every tool the server offers, in the order clients list them. */
export const allTools: ToolDefinition[] = [...spaceTools, ...liveTools, ...bankTools, ...consolidationTools, ...backupTools, ...adminTools, ...systemTools];
