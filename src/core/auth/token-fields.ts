import { invalid } from '../../shared/errors.js';
import type { Permission } from '../caller.js';
import { SPACE_ID_PATTERN } from '../validate.js';
import type { TokenRecord } from './token-store.js';

/**
 * A token's fields as admins give and see them: the permissions and space ids they may write (parsed
 * once here, for create and update alike) and what a listing shows of a record (never the token).
 */
export const PERMISSIONS: Permission[] = ['read', 'write', 'admin'];
/** The hash prefix shown by admin_list_tokens and accepted to name a token. */
export const PREFIX_CHARS = 12;

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

/** What admin_list_tokens shows of a token: never the token, never its whole hash. */
export const describeToken = (record: TokenRecord, now: number) => ({
  name: record.name,
  hash_prefix: record.hash.slice(0, PREFIX_CHARS),
  permissions: record.permissions,
  space_ids: record.space_ids,
  created_at: record.created_at,
  expires_at: record.expires_at,
  revoked_at: record.revoked_at,
  state: record.revoked_at ? 'revoked' : record.expires_at && Date.parse(record.expires_at) <= now ? 'expired' : 'active',
});
