import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import { invalid, isLiveMemError, LiveMemError } from '../../shared/errors.js';
import type { Permission } from '../caller.js';
import type { CoreContext } from '../context.js';
import { SYSTEM_PREFIX } from '../layout.js';

/**
 * Tokens live in `_system/tokens.json`: only each token's SHA-256 is stored, never the token. Every
 * change is a compare-and-swap on the file, so admins in several processes never lose each other's.
 */
export const TOKENS_KEY = `${SYSTEM_PREFIX}tokens.json`;
export const TOKEN_PREFIX = 'lm_';

export interface TokenRecord {
  name: string;
  /** SHA-256 of the whole token, hex. */
  hash: string;
  permissions: Permission[];
  /** '*' for every space, else the spaces named. */
  space_ids: '*' | string[];
  created_at: string;
  expires_at: string | null;
  revoked_at: string | null;
}

interface TokenFile {
  version: 1;
  tokens: TokenRecord[];
}

export const hashToken = (token: string): string => createHash('sha256').update(token, 'utf8').digest('hex');

/** `lm_` and 32 random bytes in base64url: 256 bits of entropy. */
export const newToken = (): string => `${TOKEN_PREFIX}${randomBytes(32).toString('base64url')}`;

/** Compares two hex digests without leaking where they differ. */
export function sameHash(a: string, b: string): boolean {
  const x = Buffer.from(a, 'hex');
  const y = Buffer.from(b, 'hex');
  return x.length === y.length && x.length > 0 && timingSafeEqual(x, y);
}

/** The token file as stored; `storage_error` when it is not one (then every token is refused, see `live-mem doctor`). */
export function parseTokenFile(body: Buffer): TokenFile {
  try {
    const file = JSON.parse(body.toString('utf8')) as TokenFile | null;
    if (!Array.isArray(file?.tokens)) throw new Error('no tokens list');
    return file;
  } catch (cause) {
    throw new LiveMemError('storage_error', `${TOKENS_KEY} is unreadable`, {}, { cause });
  }
}

export function createTokenStore(context: CoreContext) {
  const { storage } = context;
  let cache: { etag: string; file: TokenFile } | undefined;

  /** The current tokens; re-read only when the file changed (one stat per call otherwise). */
  const load = async (): Promise<{ file: TokenFile; etag: string | null }> => {
    const stat = await storage.stat(TOKENS_KEY);
    if (!stat) return { file: { version: 1, tokens: [] }, etag: null };
    if (cache && cache.etag === stat.etag) return { file: cache.file, etag: cache.etag };
    const object = await storage.get(TOKENS_KEY);
    if (!object) return { file: { version: 1, tokens: [] }, etag: null };
    cache = { etag: object.etag, file: parseTokenFile(object.body) };
    return { file: cache.file, etag: object.etag };
  };

  return {
    load,

    /** Applies `change` with compare-and-swap, re-reading and retrying when another writer got there first. */
    async update<T>(change: (tokens: TokenRecord[]) => { tokens: TokenRecord[]; result: T }): Promise<T> {
      for (let attempt = 0; attempt < 20; attempt++) {
        const { file, etag } = await load();
        const { tokens, result } = change(file.tokens.map((t) => ({ ...t })));
        const body = `${JSON.stringify({ version: 1, tokens } satisfies TokenFile, null, 2)}\n`;
        try {
          await storage.put(TOKENS_KEY, body, etag === null ? { ifNoneMatch: '*' } : { ifMatch: etag });
          return result;
        } catch (error) {
          if (!isLiveMemError(error, 'precondition_failed')) throw error;
          await new Promise((resolve) => setTimeout(resolve, Math.random() * 20 * (attempt + 1)));
        }
      }
      throw new LiveMemError('conflict', 'the token list kept changing; try again');
    },

    /** The live record of a presented token, or null (unknown, revoked or expired). Constant-time over every record. */
    async verify(token: string): Promise<TokenRecord | null> {
      if (typeof token !== 'string' || !token.startsWith(TOKEN_PREFIX)) return null;
      const hash = hashToken(token);
      const { file } = await load();
      let found: TokenRecord | null = null;
      for (const record of file.tokens) if (sameHash(record.hash, hash)) found = record;
      if (!found || found.revoked_at) return null;
      if (found.expires_at && Date.parse(found.expires_at) <= context.clock().getTime()) return null;
      return found;
    },
  };
}

export type TokenStore = ReturnType<typeof createTokenStore>;

export function validateTokenName(name: string): string {
  if (typeof name !== 'string' || !/^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/.test(name)) {
    throw invalid(`invalid token name ${JSON.stringify(name)}: 1-64 letters, digits, '.', '_' or '-' (it becomes the agent name on notes)`);
  }
  return name;
}
