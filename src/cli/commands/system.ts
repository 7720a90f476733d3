import type { Session } from '../open.js';

export const health = ({ core, caller }: Session) => core.health(caller);
export const whoami = async ({ core, caller }: Session) => core.auth.whoami(caller);

/** The same answer as the system_about tool (its list of tools is loaded only here, lazily). */
export async function about({ core }: Session) {
  const [{ allTools }, { TRANSPORTS }] = await Promise.all([import('../../mcp/tools/index.js'), import('../../mcp/tools/system.js')]);
  return {
    status: 'ok' as const,
    name: 'live-mem',
    version: core.context.version,
    description: 'Shared, persistent working memory for AI agents',
    tools_count: allTools.length,
    transports: [...TRANSPORTS],
    storage: core.context.storage.name,
  };
}
