import { invalid, LiveMemError } from '../../shared/errors.js';
import { authorize, ownerCaller, type Caller, type Permission } from '../caller.js';
import type { CoreContext } from '../context.js';
import { spaceKeys } from '../layout.js';
import { SPACE_ID_PATTERN } from '../validate.js';
import { createTokenStore, hashToken, newToken, sameHash, validateTokenName, type TokenRecord } from './token-store.js';
import { tokenScope, type TokenScope } from './token-scope.js';
import { isoSeconds } from '../../shared/time.js';

/**
 * Who may do what. A caller comes from a token (its name is the agent written on notes; it cannot
 * sign as another), from the bootstrap admin secret, or — when auth is not required — is the local
 * owner, who owns the files anyway. The one guard (caller.ts) checks every operation.
 *
 * `space_ids` is explicit: `*` means every space, a list means those spaces, and an empty value is
 * refused when creating a token (the original server read "empty" as "all", which surprised people).
 *
 * Managing tokens takes `admin`, and an admin limited to some spaces manages only the tokens within
 * them (token-scope.ts); every token operation checks the scope on the same snapshot it writes.
 */
export interface AuthSettings {
  /** LIVE_MEM_AUTH=required: no token, no access (only the public tools answer). */
  required: boolean;
  /** The local owner's agent name (used when auth is not required and no token is given). */
  ownerAgent: string;
  /** SHA-256 of LIVE_MEM_ADMIN_TOKEN, if set. */
  adminTokenHash?: string;
}

const PERMISSIONS: Permission[] = ['read', 'write', 'admin'];
const MAX_EXPIRY_DAYS = 3650;
/** The hash prefix shown by admin_list_tokens and accepted to name a token. */
const PREFIX_CHARS = 12;

export const ANONYMOUS: Caller = { agent: 'anonymous', permissions: new Set(), spaces: new Set(), canChooseAgent: false };

export function parsePermissions(value: string | string[]): Permission[] {
  const list = (Array.isArray(value) ? value : value.split(',')).map((p) => p.trim().toLowerCase()).filter(Boolean);
  if (list.length === 0) throw invalid('permissions are empty: give read, write and/or admin');
  for (const p of list) if (!PERMISSIONS.includes(p as Permission)) throw invalid(`unknown permission ${JSON.stringify(p)}: use read, write or admin`);
  return PERMISSIONS.filter((p) => list.includes(p));
}

export function parseSpaceIds(value: string | string[]): '*' | string[] {
  const list = (Array.isArray(value) ? value : value.split(',')).map((s) => s.trim()).filter(Boolean);
  if (list.length === 1 && list[0] === '*') return '*';
  if (list.length === 0) throw invalid("space_ids is empty: give '*' for every space, or the spaces this token may use (comma-separated)");
  for (const id of list) if (!SPACE_ID_PATTERN.test(id)) throw invalid(`invalid space id ${JSON.stringify(id)} in space_ids`);
  return [...new Set(list)].sort();
}

export function callerOf(record: TokenRecord): Caller {
  return {
    agent: record.name,
    permissions: new Set(record.permissions),
    spaces: record.space_ids === '*' ? '*' : new Set(record.space_ids),
    canChooseAgent: false,
  };
}

/** What admin_list_tokens shows of a token: never the token, never its whole hash. */
const describe = (record: TokenRecord, now: number) => ({
  name: record.name,
  hash_prefix: record.hash.slice(0, PREFIX_CHARS),
  permissions: record.permissions,
  space_ids: record.space_ids,
  created_at: record.created_at,
  expires_at: record.expires_at,
  revoked_at: record.revoked_at,
  state: record.revoked_at ? 'revoked' : record.expires_at && Date.parse(record.expires_at) <= now ? 'expired' : 'active',
});

export function createAuthService(context: CoreContext, settings: AuthSettings) {
  const store = createTokenStore(context);

  /**
   * Finds the one record a name or hash prefix designates, among the tokens the caller manages only.
   * To a scoped admin, a token outside its scope and a token that does not exist get the same
   * `forbidden`: it learns nothing of the tokens of other spaces (their names, rights or hashes).
   */
  const find = (tokens: TokenRecord[], ref: string, scope: TokenScope): number => {
    const value = String(ref ?? '').trim();
    if (!value) throw invalid('name a token: its name or its hash prefix (admin_list_tokens shows both)');
    const visible = tokens.flatMap((t, i) => (scope.manages(t) ? [i] : []));
    const byName = visible.find((i) => tokens[i]?.name === value);
    if (byName !== undefined) return byName;
    if (/^[0-9a-f]{8,64}$/.test(value)) {
      const matches = visible.filter((i) => tokens[i]?.hash.startsWith(value));
      if (matches.length > 1) throw invalid(`hash prefix ${value} matches ${matches.length} tokens: give more characters`);
      if (matches.length === 1) return matches[0] as number;
    }
    if (scope.spaces !== '*') {
      throw new LiveMemError(
        'forbidden',
        `no token named or hashed ${JSON.stringify(value)} within spaces ${scope.spaces.join(', ')}: an admin limited to spaces manages only the tokens limited to its own`,
      );
    }
    throw new LiveMemError('not_found', `no token named or hashed ${JSON.stringify(value)}`);
  };

  /** The caller's scope, once it is known to be an admin. */
  const adminScope = (caller: Caller): TokenScope => {
    authorize(caller, 'admin');
    return tokenScope(caller);
  };

  return {
    /**
     * The caller for a request: from its token (checked at every call, so a revocation or an expiry
     * takes effect at once, in open sessions too), or the owner / anonymous without one.
     */
    async resolve(token: string | undefined): Promise<Caller> {
      if (token === undefined || token === '') return settings.required ? ANONYMOUS : ownerCaller(settings.ownerAgent);
      if (settings.adminTokenHash && sameHash(hashToken(token), settings.adminTokenHash)) {
        return { agent: 'admin', permissions: new Set(PERMISSIONS), spaces: '*', canChooseAgent: false };
      }
      const record = await store.verify(token);
      if (!record) throw new LiveMemError('forbidden', 'this token is unknown, revoked or expired');
      return callerOf(record);
    },

    async create(caller: Caller, input: { name: string; permissions: string | string[]; space_ids: string | string[]; expires_in_days?: number }) {
      const scope = adminScope(caller);
      const name = validateTokenName(input.name);
      const permissions = parsePermissions(input.permissions);
      const spaceIds = parseSpaceIds(input.space_ids);
      const days = input.expires_in_days ?? 0;
      if (!Number.isInteger(days) || days < 0 || days > MAX_EXPIRY_DAYS)
        throw invalid(`expires_in_days must be an integer from 0 (never) to ${MAX_EXPIRY_DAYS}`);
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
    },

    /** The tokens the caller manages; `scope` says which ('*': every token; else the caller's spaces). */
    async list(caller: Caller) {
      const scope = adminScope(caller);
      const { file } = await store.load();
      const now = context.clock().getTime();
      const tokens = file.tokens.filter((t) => scope.manages(t)).map((t) => describe(t, now));
      return { status: 'ok' as const, tokens, total: tokens.length, scope: scope.spaces };
    },

    async revoke(caller: Caller, input: { token: string }) {
      const scope = adminScope(caller);
      const now = isoSeconds(context.clock());
      const record = await store.update((tokens) => {
        const index = find(tokens, input.token, scope);
        const target = tokens[index] as TokenRecord;
        target.revoked_at ??= now;
        return { tokens, result: target };
      });
      return { status: 'ok' as const, ...describe(record, context.clock().getTime()) };
    },

    async update(caller: Caller, input: { token: string; permissions?: string; space_ids?: string; add_space_ids?: string; remove_space_ids?: string }) {
      const scope = adminScope(caller);
      const permissions = input.permissions ? parsePermissions(input.permissions) : undefined;
      const replace = input.space_ids ? parseSpaceIds(input.space_ids) : undefined;
      const add = input.add_space_ids ? parseSpaceIds(input.add_space_ids) : undefined;
      const remove = input.remove_space_ids ? parseSpaceIds(input.remove_space_ids) : undefined;
      if (!permissions && !replace && !add && !remove) throw invalid('nothing to update: give permissions, space_ids, add_space_ids or remove_space_ids');
      if (replace && (add || remove)) throw invalid('give space_ids (a replacement) or add_space_ids / remove_space_ids (changes), not both');
      if (add === '*' || remove === '*') throw invalid("'*' can only replace space_ids, not be added or removed");
      const record = await store.update((tokens) => {
        const target = tokens[find(tokens, input.token, scope)] as TokenRecord;
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
      return { status: 'ok' as const, ...describe(record, context.clock().getTime()) };
    },

    async delete(caller: Caller, input: { token: string }) {
      const scope = adminScope(caller);
      const name = await store.update((tokens) => {
        const index = find(tokens, input.token, scope);
        const removed = tokens[index] as TokenRecord;
        return { tokens: tokens.filter((_, i) => i !== index), result: removed.name };
      });
      return { status: 'deleted' as const, name };
    },

    /** Who the caller is: agent, permissions, spaces (public: an anonymous caller learns it is anonymous). */
    whoami(caller: Caller) {
      return {
        status: 'ok' as const,
        agent: caller.agent,
        permissions: PERMISSIONS.filter((p) => caller.permissions.has(p)),
        space_ids: caller.spaces === '*' ? '*' : [...caller.spaces].sort(),
        can_choose_agent: caller.canChooseAgent,
        auth_required: settings.required,
      };
    },
  };
}

export type AuthService = ReturnType<typeof createAuthService>;

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
