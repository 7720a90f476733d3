import { z } from 'zod';
import { int, outputShape, str } from '../schemas.js';
import { defineTool, READ_ONLY, WRITES } from '../tool.js';

const tokenRef = z.string().describe('name or hash prefix');
const tokenInfo = { name: str, state: z.enum(['active', 'revoked', 'expired']) };
const UPDATES = { ...WRITES, idempotentHint: true };

export const adminTools = [
  defineTool({
    name: 'admin_create_token',
    title: 'Create an access token',
    permission: 'admin',
    description: 'Create an access token for an agent or a person; its name is the agent name on their notes. The token is shown once: hand it over now.',
    input: {
      name: z.string().describe('letters, digits, . _ -'),
      permissions: z.string().describe('read, read,write or read,write,admin'),
      space_ids: z.string().describe("'*' or space ids, comma-separated"),
      expires_in_days: z.number().int().default(0).describe('0 = never'),
    },
    output: outputShape({ ...tokenInfo, token: str }),
    annotations: WRITES,
    handler: (args, { core, caller }) => core.auth.create(caller, args),
  }),
  defineTool({
    name: 'admin_list_tokens',
    title: 'List access tokens',
    permission: 'admin',
    description: 'List the tokens you manage (an admin limited to spaces: those within them): name, hash prefix, permissions, spaces, dates, state.',
    input: {},
    output: outputShape({ tokens: z.array(z.looseObject(tokenInfo)), total: int }),
    annotations: READ_ONLY,
    handler: (_args, { core, caller }) => core.auth.list(caller),
  }),
  defineTool({
    name: 'admin_revoke_token',
    title: 'Revoke an access token',
    permission: 'admin',
    description: 'Revoke a token: refused from its next call on, in open sessions too; it stays listed as revoked.',
    input: { token_hash: tokenRef },
    output: outputShape(tokenInfo),
    annotations: UPDATES,
    handler: (args, { core, caller }) => core.auth.revoke(caller, { token: args.token_hash }),
  }),
  defineTool({
    name: 'admin_update_token',
    title: 'Change a token’s rights',
    permission: 'admin',
    description: "Change a token's permissions or spaces: replace the spaces (space_ids), or add or remove some. Empty = unchanged.",
    input: {
      token_hash: tokenRef,
      permissions: z.string().default(''),
      space_ids: z.string().default('').describe("'*' = every space"),
      add_space_ids: z.string().default(''),
      remove_space_ids: z.string().default(''),
    },
    output: outputShape(tokenInfo),
    annotations: UPDATES,
    handler: (args, { core, caller }) =>
      core.auth.update(caller, {
        token: args.token_hash,
        ...(args.permissions ? { permissions: args.permissions } : {}),
        ...(args.space_ids ? { space_ids: args.space_ids } : {}),
        ...(args.add_space_ids ? { add_space_ids: args.add_space_ids } : {}),
        ...(args.remove_space_ids ? { remove_space_ids: args.remove_space_ids } : {}),
      }),
  }),
  defineTool({
    name: 'admin_delete_token',
    title: 'Delete an access token',
    permission: 'admin',
    description: 'Remove a token from the list for good (admin_revoke_token keeps a trace).',
    input: { token_hash: tokenRef },
    output: outputShape({ name: str }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: (args, { core, caller }) => core.auth.delete(caller, { token: args.token_hash }),
  }),
];
