import { invalid, LiveMemError } from '../../shared/errors.js';
import { isoSeconds } from '../../shared/time.js';
import type { Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { PREFIX_CHARS, parsePermissions, parseSpaceIds } from './token-fields.js';
import type { TokenScope } from './token-scope.js';
import { hashToken, newToken, type TokenRecord, type TokenStore, validateTokenName } from './token-store.js';

/** What the token operations of auth-service.ts share: the clock and store, and the token file. */
export interface TokenDeps {
  context: CoreContext;
  store: TokenStore;
}

export interface CreateTokenInput {
  name: string;
  permissions: string | string[];
  space_ids: string | string[];
  expires_in_days?: number;
}

const MAX_EXPIRY_DAYS = 3650;

/**
 * admin_create_token, for an admin whose scope is known: the token is shown once, only its hash is
 * kept. A scoped admin creates tokens within its spaces and its own lifetime only.
 */
export async function createToken(deps: TokenDeps, caller: Caller, scope: TokenScope, input: CreateTokenInput) {
  const { context, store } = deps;
  const name = validateTokenName(input.name);
  const permissions = parsePermissions(input.permissions);
  const spaceIds = parseSpaceIds(input.space_ids);
  const days = input.expires_in_days ?? 0;
  if (!Number.isInteger(days) || days < 0 || days > MAX_EXPIRY_DAYS) throw invalid(`expires_in_days must be an integer from 0 (never) to ${MAX_EXPIRY_DAYS}`);
  scope.allow(spaceIds, 'a token');
  const now = context.clock();
  const token = newToken();
  const record: TokenRecord = {
    name,
    hash: hashToken(token),
    permissions,
    space_ids: spaceIds,
    created_at: isoSeconds(now),
    expires_at: days > 0 ? isoSeconds(new Date(now.getTime() + days * 86_400_000)) : null,
    revoked_at: null,
  };
  await store.update((tokens) => {
    // Names are unique across the store (a name is the agent on notes), so a scoped admin learns that a name is taken, nothing more.
    if (tokens.some((t) => t.name === name)) throw new LiveMemError('already_exists', `a token named '${name}' exists`, { name });
    if (scope.spaces !== '*') withinOwnLifetime(tokens, caller, record.expires_at);
    return { tokens: [...tokens, record], result: undefined };
  });
  // Accepted, since a token is often made before its space (an agent creates it on its first
  // note): said, though, so that a mistyped id is seen now rather than as a `forbidden` later.
  const missing =
    spaceIds === '*'
      ? []
      : (await Promise.all(spaceIds.map(async (id) => ((await context.storage.stat(spaceKeys(id).meta)) ? null : id)))).filter((id) => id !== null);
  return {
    status: 'created' as const,
    name,
    token,
    hash_prefix: record.hash.slice(0, PREFIX_CHARS),
    permissions,
    space_ids: spaceIds,
    expires_at: record.expires_at,
    warning: 'This token is shown once and never again: store it now.',
    ...(missing.length > 0
      ? { warnings: missing.map((id) => `space '${id}' does not exist (yet): the token will reach it once it is created; check the id if it should exist`) }
      : {}),
  };
}

/**
 * A scoped admin hands out no more than it holds, in time too: a token it creates expires no later
 * than its own, or a day-long admin token could mint a permanent one for the same spaces.
 */
function withinOwnLifetime(tokens: TokenRecord[], caller: Caller, expiresAt: string | null): void {
  const own = tokens.find((t) => t.name === caller.agent)?.expires_at ?? null;
  if (own === null || (expiresAt !== null && Date.parse(expiresAt) <= Date.parse(own))) return; // as times: stores hold both formats
  throw new LiveMemError(
    'forbidden',
    `this admin token expires at ${own}: a token it creates cannot outlive it (give expires_in_days so that it expires by then)`,
  );
}
