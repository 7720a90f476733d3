import { z } from 'zod';
import type { Core } from '../../core/core.js';
import { int, obj, outputShape, str } from '../schemas.js';
import { defineTool, READ_ONLY, type ToolContext } from '../tool.js';

export const TRANSPORTS = ['stdio', 'streamable-http'] as const;

const toolsOffered = { tools_profile: str, tools_count: int };

/** system_about's answer, shared with `live-mem about`. */
export function aboutServer(core: Core, tools: ToolContext['tools']) {
  return {
    status: 'ok' as const,
    name: 'live-mem',
    version: core.context.version,
    description: 'Shared, persistent working memory for AI agents',
    tools_profile: tools.profile,
    tools_count: tools.count,
    transports: [...TRANSPORTS],
    storage: core.context.storage.name,
    documentation: 'https://www.npmjs.com/package/live-mem',
  };
}

export const systemTools = [
  defineTool({
    name: 'system_health',
    title: 'Check the server',
    permission: 'public',
    description: 'Check the server: is the store reachable (latency), is a model configured and reachable (no tokens spent), version, uptime.',
    input: {},
    output: outputShape({ services: obj, version: str }),
    annotations: READ_ONLY,
    // clientModel() is this client's own model, offered only when no endpoint is configured.
    handler: (_args, { core, caller, clientModel, remote }) => core.health(caller, { sampling: clientModel() !== undefined, remote: remote === true }),
  }),
  defineTool({
    name: 'system_about',
    title: 'About this server',
    permission: 'public',
    description: 'Name, version, tool profile and count, transports and storage driver of this live-mem server.',
    input: {},
    output: outputShape({ version: str, ...toolsOffered, storage: str }),
    annotations: READ_ONLY,
    handler: async (_args, { core, tools }) => aboutServer(core, tools),
  }),
  defineTool({
    name: 'system_whoami',
    title: 'Who am I',
    permission: 'public',
    description: 'This connection: the agent name its notes carry, its permissions and spaces, tool profile, default space and why.',
    input: {},
    output: outputShape({
      agent: str,
      permissions: z.array(str),
      space_ids: z.union([z.literal('*'), z.array(str)]),
      default_space: str,
      space_source: str,
      ...toolsOffered,
    }),
    annotations: READ_ONLY,
    handler: async (_args, { core, caller, tools, spaces }) => {
      const chosen = await spaces.resolve(caller);
      return {
        ...core.auth.whoami(caller),
        tools_profile: tools.profile,
        tools_count: tools.count,
        ...(chosen.space_id !== undefined ? { default_space: chosen.space_id } : {}),
        space_source: chosen.source,
        space_source_detail: chosen.detail,
      };
    },
  }),
];
