import type { CommandDef } from '../command.js';
import type { Session } from '../open.js';
import { VERSION } from '../version.js';

export const health = ({ core, caller }: Session) => core.health(caller);

/** The tools `serve` would offer on stdio with these settings (the MCP modules are loaded only here, lazily). */
async function toolsOffered({ settings }: Session) {
  const { tools, profile } = (await import('../../mcp/profiles.js')).selectTools(settings.tools ?? 'all');
  return { profile, count: tools.length };
}

/** The same answer as the system_whoami tool. */
export const whoami = async (session: Session) => {
  const tools = await toolsOffered(session);
  return { ...session.core.auth.whoami(session.caller), tools_profile: tools.profile, tools_count: tools.count };
};

/** The same answer as the system_about tool. */
export async function about(session: Session) {
  const { aboutServer } = await import('../../mcp/tools/system.js');
  return aboutServer(session.core, await toolsOffered(session));
}

export const healthCommand: CommandDef = { name: 'health', description: 'is the store reachable, is the model reachable', run: health };
export const aboutCommand: CommandDef = { name: 'about', description: 'version, tools, transports, storage', run: about };
export const whoamiCommand: CommandDef = { name: 'whoami', description: 'the agent, permissions and spaces of this caller', run: whoami };
export const versionCommand: CommandDef = {
  name: 'version',
  description: 'print the version (as --version)',
  direct: () => {
    process.stdout.write(`${VERSION}\n`);
  },
};
