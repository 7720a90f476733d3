import { z } from 'zod';
import { outputShape } from '../schemas.js';
import { defineTool, READ_ONLY } from '../tool.js';

const tokenRef = z.string().describe("The token's name, or its hash prefix (admin_list_tokens shows both)");
const tokenInfo = {
  name: z.string(),
  hash_prefix: z.string(),
  permissions: z.array(z.string()),
  space_ids: z.union([z.literal('*'), z.array(z.string())]),
  created_at: z.string(),
  expires_at: z.string().nullable(),
  revoked_at: z.string().nullable(),
  state: z.enum(['active', 'revoked', 'expired']),
};
const WRITE = { readOnlyHint: false, destructiveHint: false, idempotentHint: true, openWorldHint: false };

export const adminTools = [
  defineTool({
    name: 'admin_create_token',
    title: 'Create an access token',
    permission: 'admin',
    description:
      'Create a token for an agent or a person: its name is the agent name written on their notes. permissions: "read", "read,write" or "read,write,admin". ' +
      "space_ids: '*' for every space, or the spaces it may use, comma-separated (an empty value is refused). The token is shown once: hand it over now.",
    input: {
      name: z.string().describe('Unique, filename-safe: letters, digits, ".", "_", "-"'),
      permissions: z.string().describe('Comma-separated: read, write, admin'),
      space_ids: z.string().describe("'*' = every space; or a comma-separated list of space ids"),
      expires_in_days: z.number().int().default(0).describe('0 = never expires'),
    },
    output: outputShape({ ...tokenInfo, token: z.string().describe('shown once'), warning: z.string() }),
    annotations: { readOnlyHint: false, destructiveHint: false, idempotentHint: false, openWorldHint: false },
    handler: (args, { core, caller }) => core.auth.create(caller, args),
  }),
  defineTool({
    name: 'admin_list_tokens',
    title: 'List access tokens',
    permission: 'admin',
    description: 'Every token with its name, hash prefix, permissions, spaces, dates and state. Never the token itself.',
    input: {},
    output: outputShape({ tokens: z.array(z.looseObject(tokenInfo)), total: z.number().int() }),
    annotations: READ_ONLY,
    handler: (_args, { core, caller }) => core.auth.list(caller),
  }),
  defineTool({
    name: 'admin_revoke_token',
    title: 'Revoke an access token',
    permission: 'admin',
    description: 'Revoke a token: refused from the next call on, in sessions already open too. Kept in the list as revoked.',
    input: { token_hash: tokenRef },
    output: outputShape(tokenInfo),
    annotations: WRITE,
    handler: (args, { core, caller }) => core.auth.revoke(caller, { token: args.token_hash }),
  }),
  defineTool({
    name: 'admin_update_token',
    title: 'Change a token’s rights',
    permission: 'admin',
    description: "Change a token's permissions and spaces: space_ids replaces the list ('*' = every space); add_space_ids / remove_space_ids change it.",
    input: {
      token_hash: tokenRef,
      permissions: z.string().default('').describe('New permissions; empty = unchanged'),
      space_ids: z.string().default('').describe("Replacement spaces ('*' = every space); empty = unchanged"),
      add_space_ids: z.string().default('').describe('Spaces to add, comma-separated'),
      remove_space_ids: z.string().default('').describe('Spaces to remove, comma-separated'),
    },
    output: outputShape(tokenInfo),
    annotations: WRITE,
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
    description: 'Remove a token from the list for good (revoke it instead to keep a trace).',
    input: { token_hash: tokenRef },
    output: outputShape({ name: z.string() }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: (args, { core, caller }) => core.auth.delete(caller, { token: args.token_hash }),
  }),
];
