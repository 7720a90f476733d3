import { invalid, LiveMemError } from '../../shared/errors.js';
import type { TokenScope } from './token-scope.js';
import type { TokenRecord } from './token-store.js';

/**
 * Finds the one record a name or hash prefix designates, among the tokens the caller manages only.
 * To a scoped admin, a token outside its scope and a token that does not exist get the same
 * `forbidden`: it learns nothing of the tokens of other spaces (their names, rights or hashes).
 */
export function findToken(tokens: TokenRecord[], ref: string, scope: TokenScope): number {
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
}
