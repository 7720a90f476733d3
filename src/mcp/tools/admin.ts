import { z } from 'zod';
import { invalid } from '../../shared/errors.js';
import { int, outputShape, str } from '../schemas.js';
import { defineTool, READ_ONLY, WRITES } from '../tool.js';

/**
 * Which token an admin tool acts on. The original server called it `token_hash`, but a name works
 * too (and is what people type), so `token` is its name here; `token_hash` stays accepted for the
 * agents and rules written for the original server. Neither is required by the schema, so the
 * handler asks for one (tokenOf).
 */
const tokenRef = {
  token: z.string().optional().describe('name or hash prefix (admin_list_tokens); this or token_hash is required'),
  token_hash: z.string().optional().describe("token's former name, still accepted; if both, they must match"),
};

/**
 * The token named by `token` or its alias `token_hash`: one of them, or both saying the same. An
 * empty one counts as absent, for clients that send every optional argument filled with ''.
 */
function tokenOf(args: { token?: string | undefined; token_hash?: string | undefined }): string {
  const token = args.token?.trim() || undefined;
  const alias = args.token_hash?.trim() || undefined;
  if (token !== undefined && alias !== undefined && token !== alias)
    throw invalid(`token ${JSON.stringify(token)} and token_hash ${JSON.stringify(alias)} differ: give only token (a name or hash prefix)`);
  const ref = token ?? alias;
  if (ref === undefined) throw invalid('token is required: the name or hash prefix of the token (admin_list_tokens shows both)');
  return ref;
}
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
    input: tokenRef,
    output: outputShape(tokenInfo),
    annotations: UPDATES,
    handler: (args, { core, caller }) => core.auth.revoke(caller, { token: tokenOf(args) }),
  }),
  defineTool({
    name: 'admin_update_token',
    title: 'Change a token’s rights',
    permission: 'admin',
    description: "Change a token's permissions or spaces: replace the spaces (space_ids), or add or remove some. Empty = unchanged.",
    input: {
      ...tokenRef,
      permissions: z.string().default('').describe('read, read,write or read,write,admin; empty = unchanged'),
      space_ids: z.string().default('').describe("'*' or ids, comma-separated, replacing the list; empty = unchanged"),
      add_space_ids: z.string().default('').describe('comma-separated'),
      remove_space_ids: z.string().default('').describe('comma-separated'),
    },
    output: outputShape(tokenInfo),
    annotations: UPDATES,
    handler: (args, { core, caller }) =>
      core.auth.update(caller, {
        token: tokenOf(args),
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
    input: tokenRef,
    output: outputShape({ name: str }),
    annotations: { readOnlyHint: false, destructiveHint: true, idempotentHint: true, openWorldHint: false },
    handler: (args, { core, caller }) => core.auth.delete(caller, { token: tokenOf(args) }),
  }),
];
