import type { NoteName } from '../note/note-name.js';
import type { Corpus, Level0Note, Level0Text } from './corpus.js';

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
