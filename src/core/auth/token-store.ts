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

/**
 * The token file's cache, and how it is kept true. The parsed file and an index of its records by
 * hash are kept per etag; every verification first looks at the file's etag with a stat that started
 * after the verification was asked for (`context.freshStat`, shared by the verifications arriving
 * together: with 200 requests at once, a couple of stats rather than 200), so a revocation, an
 * expiry or a change of rights written by any process (the CLI, another server) applies to the very
 * next request.
 */
export function createTokenStore(context: CoreContext) {
  const { storage } = context;
  type Loaded = { etag: string; file: TokenFile; byHash: Map<string, TokenRecord> };
  let cache: Loaded | undefined;
  let reading: Promise<Loaded | null> | undefined;

  const read = async (): Promise<Loaded | null> => {
    const object = await storage.get(TOKENS_KEY);
    if (!object) return null;
    const file = parseTokenFile(object.body);
    cache = { etag: object.etag, file, byHash: new Map(file.tokens.map((record) => [record.hash, record])) };
    return cache;
  };

  /** The current tokens; re-read only when the file changed (one shared stat otherwise). */
  const current = async (): Promise<Loaded | null> => {
    const stat = await context.freshStat(TOKENS_KEY);
    if (!stat) return null;
    if (cache && cache.etag === stat.etag) return cache;
    // Requests that saw the same change share one read.
    reading ??= read().finally(() => {
      reading = undefined;
    });
    return reading;
  };

  const load = async (): Promise<{ file: TokenFile; etag: string | null }> => {
    const loaded = await current();
    return loaded ? { file: loaded.file, etag: loaded.etag } : { file: { version: 1, tokens: [] }, etag: null };
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

    /** The live record of a presented token, or null (unknown, revoked or expired), as of a stat made for this call. */
    async verify(token: string): Promise<TokenRecord | null> {
      if (typeof token !== 'string' || !token.startsWith(TOKEN_PREFIX)) return null;
      // Looked up by its hash: what a lookup's timing could tell is about a SHA-256, not the token.
      const found = (await current())?.byHash.get(hashToken(token)) ?? null;
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
