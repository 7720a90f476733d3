import { invalid } from '../../shared/errors.js';
import type { Caller } from '../caller.js';
import type { NoteName } from '../note/note-name.js';
import type { Corpus, Level0Note, Level0Text } from './corpus.js';
import type { MemorySearchInput, RecallHit, RecallOptions, RecallService } from './recall-service.js';

/** The most neighbours a memory_search hit carries on each side. */
export const MAX_HIT_NEIGHBOURS = 5;
/** A neighbour note longer than this comes as its beginning (`truncated`). */
const NEIGHBOUR_CHARS = 600;

/** Which notes count as a note's neighbours. */
export interface NeighbourOptions {
  /** How many notes written before it (0 for none). */
  before: number;
  /** How many notes written after it. */
  after: number;
  /**
   * `any`: the notes written around it whoever wrote them (a conversation: the answer to a question
   * is the other speaker's next turn); `agent`: only the notes of the note's own agent.
   */
  by: 'any' | 'agent';
}

export interface NoteNeighbours {
  /** Oldest first, the nearest last. */
  before: Level0Text[];
  /** Oldest first, the nearest first. */
  after: Level0Text[];
}

/** How far a side is walked looking for the notes `by` keeps (an agent silent for long has none near). */
const MAX_WALK = 64;

/** Time order of one space's level 0, and each note's place in it. */
interface Order {
  historyIds: readonly string[];
  live: readonly NoteName[];
  notes: Level0Note[];
  position: Map<string, number>;
}

/**
 * The notes written just before and after a note in the same space, live or consolidated: level 0
 * in time order (corpus.level0), built again only when the history or the live listing changed
 * (the corpus hands back the same listing while its folder is unchanged), so asking for the
 * neighbours of every hit of a search costs a lookup each, plus reading the neighbours' text
 * (cached by the corpus). A forgotten note is no one's neighbour: level 0 leaves it out.
 */
export function createNeighbours(corpus: Corpus) {
  const orders = new Map<string, Order>();

  const orderOf = async (spaceId: string): Promise<Order> => {
    const [historyIds, live] = await Promise.all([corpus.historyIds(spaceId), corpus.liveNames(spaceId)]);
    const cached = orders.get(spaceId);
    if (cached && cached.historyIds === historyIds && cached.live === live) return cached;
    const notes = await corpus.level0(spaceId);
    const order: Order = { historyIds, live, notes, position: new Map(notes.map((note, i) => [note.filename, i])) };
    orders.set(spaceId, order);
    return order;
  };

  return {
    /**
     * The neighbours of each named note (a note not in the space, or forgotten, has none), read in
     * one pass: up to `before` and `after` notes on each side, counted among the notes `by` keeps;
     * the edges of the space give fewer.
     */
    async of(spaceId: string, filenames: readonly string[], options: NeighbourOptions): Promise<Map<string, NoteNeighbours>> {
      const found = new Map<string, NoteNeighbours>();
      if ((options.before <= 0 && options.after <= 0) || filenames.length === 0) return found;
      const { notes, position } = await orderOf(spaceId);
      const picked = new Map<string, { before: Level0Note[]; after: Level0Note[] }>();
      const wanted = new Map<string, Level0Note>();
      for (const filename of filenames) {
        const at = position.get(filename);
        const note = at === undefined ? undefined : notes[at];
        if (at === undefined || !note || picked.has(filename)) continue;
        const keep = (other: Level0Note) => options.by === 'any' || other.agent === note.agent;
        const side = (step: 1 | -1, count: number): Level0Note[] => {
          const taken: Level0Note[] = [];
          for (let i = at + step, walked = 0; i >= 0 && i < notes.length && taken.length < count && walked < MAX_WALK; i += step, walked++) {
            const other = notes[i] as Level0Note;
            if (keep(other)) taken.push(other);
          }
          return taken;
        };
        const entry = { before: side(-1, options.before).reverse(), after: side(1, options.after) };
        picked.set(filename, entry);
        for (const other of [...entry.before, ...entry.after]) wanted.set(other.filename, other);
      }
      const texts = new Map((await corpus.read(spaceId, [...wanted.values()])).map((text) => [text.filename, text]));
      const withText = (list: Level0Note[]) => list.flatMap((note) => texts.get(note.filename) ?? []);
      for (const [filename, entry] of picked) found.set(filename, { before: withText(entry.before), after: withText(entry.after) });
      return found;
    },
  };
}

export type Neighbours = ReturnType<typeof createNeighbours>;

/** A neighbour as a memory_search hit carries it. */
export interface HitNeighbour {
  ref: string;
  consolidation_id?: string;
  timestamp: string;
  agent: string;
  text: string;
  truncated: boolean;
}

/** A note's text, whole when short, else its beginning cut at a word and marked with "…". */
export function clipNote(text: string): { text: string; truncated: boolean } {
  if (text.length <= NEIGHBOUR_CHARS) return { text, truncated: false };
  return { text: `${text.slice(0, NEIGHBOUR_CHARS).replace(/\s+\S*$/, '')}…`, truncated: true };
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
    const notes = answer.results.filter(isNote).map((hit) => hit.ref);
    const around = await neighbours.of(answer.space_id, notes, { before: count, after: count, by: 'any' });
    const results = answer.results.map((hit): RecallHit & { before?: HitNeighbour[]; after?: HitNeighbour[] } => {
      const near = isNote(hit) ? around.get(hit.ref) : undefined;
      return near ? { ...hit, before: near.before.map(asHitNeighbour), after: near.after.map(asHitNeighbour) } : hit;
    });
    return { ...answer, results };
  };
}
