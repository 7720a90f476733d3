import type { Analyzer } from '../../search/analyze.js';
import type { Item } from './items.js';
import { haystack, type Haystack } from './lookup.js';
import { contentWords } from './rarity.js';

/**
 * The wording test of an integrated note: did a passage of the text the plan cites it for say it?
 *
 * A note's items (items.ts) and rarest words (rarity.ts) catch a dropped number, name or identifier,
 * but a note of everyday words ("I made this bowl in my class, pretty proud of it") has few of either,
 * and the words it has are often in the bank already, or in the notes written beside it. Such a note
 * was written when one passage of a change citing it — a list item, a paragraph — holds at least half
 * of its content words (no stopword, no everyday word: rarity.ts), by stem as memory_search reads them:
 * a fact is stated in one place, and a paraphrase that states it keeps most of the words it is stated
 * in. Words scattered over passages written for other notes say nothing of this one. Each change citing
 * the note is read for its one passage saying most of it (a note split over two sections is found whole),
 * and a note of fewer than MIN_WORDS content words is not judged on its wording.
 */

/** Content words below which a note says too little for a share of them to mean anything. */
const MIN_WORDS = 3;
/** The share of its content words a note's passages must hold. */
const MIN_SHARE = 0.5;

/** A list item (with the lines continuing it) or a paragraph; a heading on its own. */
function passagesOf(text: string): string[] {
  const passages: string[] = [];
  let current: string[] = [];
  const close = () => {
    if (current.length > 0) passages.push(current.join('\n'));
    current = [];
  };
  for (const line of text.split('\n')) {
    if (line.trim() === '') close();
    else if (/^\s*(?:#{1,6}\s|[-*+]\s|\d+[.)]\s|>)/.test(line)) {
      close();
      current.push(line);
    } else current.push(line);
  }
  close();
  return passages;
}

interface WordingReader {
  /**
   * An integrated note's content words (`looked`: none for a note of fewer than MIN_WORDS, or cited
   * nowhere), and those its cited texts' best passages lack (`unsaid`) when they hold fewer than
   * MIN_SHARE of them (else none).
   */
  read(words: readonly string[], cited: readonly string[]): { looked: Item[]; unsaid: Item[] };
}

/** One per window: a cited text shared by several notes is cut and read once. */
export function wordingReader(analyzer: Analyzer): WordingReader {
  const read = new Map<string, Haystack[]>();
  const passages = (text: string): Haystack[] => {
    let found = read.get(text);
    if (!found) {
      found = passagesOf(text).map((passage) => haystack(passage, analyzer));
      read.set(text, found);
    }
    return found;
  };
  return {
    read(words, cited) {
      const looked: Item[] = contentWords(words, analyzer).map(([key, { word, terms }]) => ({ kind: 'word', text: word, key, values: [...terms] }));
      if (looked.length < MIN_WORDS || cited.length === 0) return { looked: [], unsaid: [] };
      const held = new Set<Item>();
      for (const text of cited) {
        let best: Item[] = [];
        for (const passage of passages(text)) {
          const holds = looked.filter((item) => passage.has(item));
          if (holds.length > best.length) best = holds;
        }
        for (const item of best) held.add(item);
      }
      return { looked, unsaid: held.size < looked.length * MIN_SHARE ? looked.filter((item) => !held.has(item)) : [] };
    },
  };
}
