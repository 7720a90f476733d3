import { LiveMemError } from '../../shared/errors.js';
import { isoSeconds } from '../../shared/time.js';
import { authorize, ownerCaller, type Caller } from '../caller.js';
import type { CoreContext } from '../context.js';
import { type CreateTokenInput, createToken, type TokenDeps } from './token-create.js';
import { describeToken, PERMISSIONS } from './token-fields.js';
import { findToken } from './token-find.js';
import { tokenScope, type TokenScope } from './token-scope.js';
import { createTokenStore, hashToken, sameHash, type TokenRecord } from './token-store.js';
import { type UpdateTokenInput, updateToken } from './token-update.js';

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

export const ANONYMOUS: Caller = { agent: 'anonymous', permissions: new Set(), spaces: new Set(), canChooseAgent: false };

export function callerOf(record: TokenRecord): Caller {
  return {
    agent: record.name,
    permissions: new Set(record.permissions),
    spaces: record.space_ids === '*' ? '*' : new Set(record.space_ids),
    canChooseAgent: false,
  };
}

export function createAuthService(context: CoreContext, settings: AuthSettings) {
  const store = createTokenStore(context);
  const deps: TokenDeps = { context, store };

  /** The caller without a token: one object for every request (callers are never changed), so what is derived from it can be kept. */
  const owner = ownerCaller(settings.ownerAgent);

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
      if (token === undefined || token === '') return settings.required ? ANONYMOUS : owner;
      if (settings.adminTokenHash && sameHash(hashToken(token), settings.adminTokenHash)) {
        return { agent: 'admin', permissions: new Set(PERMISSIONS), spaces: '*', canChooseAgent: false };
      }
      const record = await store.verify(token);
      if (!record) throw new LiveMemError('forbidden', 'this token is unknown, revoked or expired');
      return callerOf(record);
    },

    async create(caller: Caller, input: CreateTokenInput) {
      return createToken(deps, caller, adminScope(caller), input);
    },

    /** The tokens the caller manages; `scope` says which ('*': every token; else the caller's spaces). */
    async list(caller: Caller) {
      const scope = adminScope(caller);
      const { file } = await store.load();
      const now = context.clock().getTime();
      const tokens = file.tokens.filter((t) => scope.manages(t)).map((t) => describeToken(t, now));
      return { status: 'ok' as const, tokens, total: tokens.length, scope: scope.spaces };
    },

    async revoke(caller: Caller, input: { token: string }) {
      const scope = adminScope(caller);
      const now = isoSeconds(context.clock());
      const record = await store.update((tokens) => {
        const index = findToken(tokens, input.token, scope);
        const target = tokens[index] as TokenRecord;
        target.revoked_at ??= now;
        return { tokens, result: target };
      });
      return { status: 'ok' as const, ...describeToken(record, context.clock().getTime()) };
    },

    async update(caller: Caller, input: UpdateTokenInput) {
      return updateToken(deps, caller, adminScope(caller), input);
    },

    async delete(caller: Caller, input: { token: string }) {
      const scope = adminScope(caller);
      const name = await store.update((tokens) => {
        const index = findToken(tokens, input.token, scope);
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
