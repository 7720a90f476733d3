import { z } from 'zod';
import { outputShape } from '../schemas.js';
import { defineTool, READ_ONLY } from '../tool.js';

export const TRANSPORTS = ['stdio', 'streamable-http'] as const;

export const systemTools = [
  defineTool({
    name: 'system_health',
    title: 'Check the server',
    permission: 'public',
    description:
      'Is the store reachable (with its latency), is a model configured and reachable for consolidation (checked without spending tokens), version, uptime.',
    input: {},
    output: outputShape({ services: z.looseObject({}), version: z.string(), uptime_seconds: z.number(), spaces_count: z.number().int() }),
    annotations: READ_ONLY,
    handler: (_args, { core, caller }) => core.health(caller),
  }),
  defineTool({
    name: 'system_about',
    title: 'About this server',
    permission: 'public',
    description: 'Name, version, number of tools, transports and storage driver of this live-mem server.',
    input: {},
    output: outputShape({
      name: z.string(),
      version: z.string(),
      description: z.string(),
      tools_count: z.number().int(),
      transports: z.array(z.string()),
      storage: z.string(),
      documentation: z.string(),
    }),
    annotations: READ_ONLY,
    handler: async (_args, { core, toolsCount }) => ({
      status: 'ok',
      name: 'live-mem',
      version: core.context.version,
      description: 'Shared, persistent working memory for AI agents',
      tools_count: toolsCount,
      transports: [...TRANSPORTS],
      storage: core.context.storage.name,
      documentation: 'https://www.npmjs.com/package/live-mem',
    }),
  }),
  defineTool({
    name: 'system_whoami',
    title: 'Who am I',
    permission: 'public',
    description: 'The agent name this connection writes notes as, its permissions and the spaces it may use.',
    input: {},
    output: outputShape({
      agent: z.string(),
      permissions: z.array(z.string()),
      space_ids: z.union([z.literal('*'), z.array(z.string())]),
      can_choose_agent: z.boolean(),
      auth_required: z.boolean(),
    }),
    annotations: READ_ONLY,
    handler: async (_args, { core, caller }) => core.auth.whoami(caller),
  }),
];
