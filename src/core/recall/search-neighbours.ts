import { invalid } from '../../shared/errors.js';
import type { Caller } from '../caller.js';
import type { Level0Text } from '../note/corpus.js';
import { clipNote, MAX_HIT_NEIGHBOURS, type Neighbours } from './neighbours.js';
import type { MemorySearchInput, RecallHit, RecallOptions, RecallService } from './recall-service.js';

/** A neighbour as a memory_search hit carries it. */
export interface HitNeighbour {
  ref: string;
  consolidation_id?: string;
  timestamp: string;
  agent: string;
  text: string;
  truncated: boolean;
}

const asHitNeighbour = (note: Level0Text): HitNeighbour => ({
  ref: note.filename,
  ...(note.consolidation_id ? { consolidation_id: note.consolidation_id } : {}),
  timestamp: note.timestamp,
  agent: note.agent,
  ...clipNote(note.content),
});

/**
 * memory_search with `neighbours: n`: each note hit (live or consolidated) also carries the `n`
 * notes written just before and after it in the space, whoever wrote them (`before`, `after`, in
 * time order) — the turn that answers a question hit, the question an answer hit replies to.
 */
export function searchWithNeighbours(search: RecallService['search'], neighbours: Neighbours) {
  return async (caller: Caller, input: MemorySearchInput & { neighbours?: number }, options: RecallOptions = {}) => {
    const { neighbours: count = 0, ...rest } = input;
    if (!Number.isInteger(count) || count < 0 || count > MAX_HIT_NEIGHBOURS) {
      throw invalid(`neighbours must be an integer from 0 to ${MAX_HIT_NEIGHBOURS}, got ${JSON.stringify(count)}`);
    }
    const answer = await search(caller, rest, options);
    if (count === 0) return answer;
    const isNote = (hit: RecallHit) => hit.source === 'live' || hit.source === 'history';
    const notes = answer.results.filter(isNote).map(({ ref, consolidation_id }) => ({ ref, consolidation_id }));
    const around = await neighbours.of(answer.space_id, notes, { before: count, after: count, by: 'any' });
    const results = answer.results.map((hit): RecallHit & { before?: HitNeighbour[]; after?: HitNeighbour[] } => {
      const near = isNote(hit) ? around.get(hit.ref) : undefined;
      return near ? { ...hit, before: near.before.map(asHitNeighbour), after: near.after.map(asHitNeighbour) } : hit;
    });
    return { ...answer, results };
  };
}
