import { LiveMemError } from '../../shared/errors.js';
import type { Caller } from '../caller.js';
import type { TokenRecord } from './token-store.js';

/**
 * Which tokens an admin administers. An admin over every space (a `*` admin token, the bootstrap
 * secret, the local owner) manages every token. An admin limited to some spaces manages only the
 * tokens limited to some of those spaces: it hands out no more than it holds, so it can neither reach
 * another space through a token it makes or changes, nor touch a token broader than itself (a `*`
 * token, the global admin). Every token operation of the auth service goes through this one scope.
 */
export interface TokenScope {
  /** What the caller administers: '*' (every token) or its spaces, sorted. */
  readonly spaces: '*' | string[];
  /** Whether the caller may see and manage this token. */
  manages(record: TokenRecord): boolean;
  /** Throws `forbidden` unless a token holding `spaceIds` would be within the scope (`what` says which token, for the message). */
  allow(spaceIds: '*' | string[], what: string): void;
}

/** The scope of a caller already authorized as an admin. */
export function tokenScope(caller: Caller): TokenScope {
  const own = caller.spaces;
  if (own === '*') return { spaces: '*', manages: () => true, allow: () => undefined };
  const spaces = [...own].sort();
  const listed = spaces.join(', ');
  return {
    spaces,
    manages: (record) => record.space_ids !== '*' && record.space_ids.length > 0 && record.space_ids.every((id) => own.has(id)),
    allow(spaceIds, what) {
      if (spaceIds === '*') {
        throw new LiveMemError('forbidden', `an admin limited to spaces ${listed} cannot give ${what} every space ('*'): only an admin over every space can`);
      }
      const outside = spaceIds.filter((id) => !own.has(id));
      if (outside.length > 0) {
        throw new LiveMemError(
          'forbidden',
          `an admin limited to spaces ${listed} cannot give ${what} space ${outside.map((id) => `'${id}'`).join(', ')}: outside its own`,
        );
      }
    },
  };
}
