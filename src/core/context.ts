import { customAlphabet } from 'nanoid';
import type { Logger } from '../shared/log.js';
import { silentLogger } from '../shared/log.js';
import type { StorageDriver } from '../storage/types.js';

export interface Limits {
  /** Largest note content accepted, in characters. */
  maxNoteChars: number;
  /** bank_read_all stops adding files past this many bytes and says it truncated. */
  bankReadAllMaxBytes: number;
  /** Note bodies read at once by live_read / live_search. */
  readConcurrency: number;
}

export const DEFAULT_LIMITS: Limits = { maxNoteChars: 100_000, bankReadAllMaxBytes: 1_000_000, readConcurrency: 16 };

/** Everything the core needs from outside, injected so tests control time, randomness and storage. */
export interface CoreContext {
  storage: StorageDriver;
  clock: () => Date;
  /** Random part of note ids: 6 characters of [0-9a-z]. */
  randomId: () => string;
  limits: Limits;
  logger: Logger;
}

export interface CoreOptions {
  storage: StorageDriver;
  clock?: () => Date;
  randomId?: () => string;
  limits?: Partial<Limits>;
  logger?: Logger;
}

export function createContext(options: CoreOptions): CoreContext {
  return {
    storage: options.storage,
    clock: options.clock ?? (() => new Date()),
    randomId: options.randomId ?? customAlphabet('0123456789abcdefghijklmnopqrstuvwxyz', 6),
    limits: { ...DEFAULT_LIMITS, ...options.limits },
    logger: options.logger ?? silentLogger,
  };
}
