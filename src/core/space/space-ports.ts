/**
 * What the space service is given by its composition (core.ts): the other services' parts that
 * describe a space, and the listener told when a space comes or goes. A module of their own so that
 * the service and its operation modules (space-create, space-delete, space-info) share them without a
 * circle of imports.
 */
import type { EmbeddingsProgress } from '../../llm/embeddings.js';
import type { BankService } from '../bank/bank-service.js';
import type { CoreEvent } from '../events.js';

/** Which parts of a space describe it; `space_info` and friends are assembled from these. */
export interface SpaceParts {
  countLiveNotes(spaceId: string): Promise<{ notes_count: number; total_size: number; oldest_note: string | null; newest_note: string | null }>;
  listBank(spaceId: string): Promise<Array<{ filename: string; size: number }>>;
  measureBank(spaceId: string): ReturnType<BankService['measure']>;
  readBank(spaceId: string): ReturnType<BankService['readAll']>;
  /** How far the space's embeddings are in this process (recall-service.ts), when embeddings are configured. */
  embeddings?(spaceId: string): EmbeddingsProgress | undefined;
}

/** Told after a space is created or deleted in this process (see events.ts); must not throw. */
export type SpaceChanged = (event: CoreEvent & { type: 'space_created' | 'space_deleted' }) => void;
