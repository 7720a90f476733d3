import { invalid, LiveMemError } from '../../shared/errors.js';
import type { Caller } from '../caller.js';
import type { TokenDeps } from './token-create.js';
import { describeToken, parsePermissions, parseSpaceIds } from './token-fields.js';
import { findToken } from './token-find.js';
import type { TokenScope } from './token-scope.js';
import type { TokenRecord } from './token-store.js';

export interface UpdateTokenInput {
  token: string;
  permissions?: string;
  space_ids?: string;
  add_space_ids?: string;
  remove_space_ids?: string;
}

/**
 * admin_update_token: new permissions, a new list of spaces, or spaces added or removed — checked
 * against the admin's scope before and after the change, on the snapshot it writes. A scoped admin
 * cannot change its own token (it could only narrow it; a wider admin can).
 */
export async function updateToken(deps: TokenDeps, caller: Caller, scope: TokenScope, input: UpdateTokenInput) {
  const { context, store } = deps;
  const permissions = input.permissions ? parsePermissions(input.permissions) : undefined;
  const replace = input.space_ids ? parseSpaceIds(input.space_ids) : undefined;
  const add = input.add_space_ids ? parseSpaceIds(input.add_space_ids) : undefined;
  const remove = input.remove_space_ids ? parseSpaceIds(input.remove_space_ids) : undefined;
  if (!permissions && !replace && !add && !remove) throw invalid('nothing to update: give permissions, space_ids, add_space_ids or remove_space_ids');
  if (replace && (add || remove)) throw invalid('give space_ids (a replacement) or add_space_ids / remove_space_ids (changes), not both');
  if (add === '*' || remove === '*') throw invalid("'*' can only replace space_ids, not be added or removed");
  const record = await store.update((tokens) => {
    const target = tokens[findToken(tokens, input.token, scope)] as TokenRecord;
    // Within scope before (find) and after the change; and never its own token, which it could only narrow.
    if (scope.spaces !== '*' && target.name === caller.agent) {
      throw new LiveMemError(
        'forbidden',
        `an admin limited to spaces cannot change its own token ('${target.name}'): an admin with a wider scope can (revoking it is allowed)`,
      );
    }
    let spaceIds = replace ?? target.space_ids;
    if (add || remove) {
      if (target.space_ids === '*') throw invalid(`token '${target.name}' has every space ('*'): replace space_ids instead`);
      const next = new Set([...target.space_ids, ...(add ?? [])]);
      for (const id of remove ?? []) next.delete(id);
      if (next.size === 0) throw invalid(`that would leave token '${target.name}' with no space; revoke it instead`);
      spaceIds = [...next].sort();
    }
    scope.allow(spaceIds, `token '${target.name}'`);
    if (permissions) target.permissions = permissions;
    target.space_ids = spaceIds;
    return { tokens, result: target };
  });
  return { status: 'ok' as const, ...describeToken(record, context.clock().getTime()) };
}
