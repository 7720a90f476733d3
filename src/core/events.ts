import type { Logger } from '../shared/log.js';

/** A bank file a consolidation wrote: `created` did not exist before. */
export interface ChangedFile {
  filename: string;
  kind: 'created' | 'updated' | 'deleted';
}

/**
 * What changed in this process, for shells that push changes to their clients (MCP resource
 * notifications). Other processes sharing the store are not seen: these are hints, the store stays the truth.
 */
export type CoreEvent =
  /** A consolidation committed: these bank files were written, and the synthesis when `synthesis`. */
  { type: 'bank_changed'; space_id: string; files: ChangedFile[]; synthesis: boolean } | { type: 'space_created' | 'space_deleted'; space_id: string };

export type CoreEventListener = (event: CoreEvent) => void;

/**
 * A listener list owned by one core. `emit` never throws: a failing listener is logged, and the
 * write that emitted has already succeeded.
 */
export function createEvents(logger: Logger) {
  const listeners = new Set<CoreEventListener>();
  return {
    /** Calls `listener` after each change; returns the function that stops it. */
    on(listener: CoreEventListener): () => void {
      listeners.add(listener);
      return () => listeners.delete(listener);
    },
    emit(event: CoreEvent): void {
      for (const listener of listeners) {
        try {
          listener(event);
        } catch (error) {
          logger.warn(`a listener of ${event.type} failed`, { error: String(error) });
        }
      }
    },
  };
}

export type CoreEvents = ReturnType<typeof createEvents>;
