import { type Analyzer, fold, words as wordsOf } from '../../search/analyze.js';
import { STEM_PREFIX } from './lookup.js';
import type { Item } from './items.js';
import { flatten } from './normalize.js';

/**
 * A note's rarest words, by the space's own statistics, taken from what the plan was made from: the
 * window's notes and the bank and synthesis as they were before it, the bank cut into its sections.
 * A word's document frequency is the number of those documents holding one of its stems (the search
 * analyser's: the same folding and simple inflections as memory_search). A word is rare when only its
 * own note holds it: it is in no other note of the window and nowhere in the bank yet, so finding it in
 * the new bank is evidence that this note got there. Of those, a note's longest few are its items.
 *
 * Why not the search index's document frequencies: the index may be cold (a new process builds it
 * from the whole history first), it lags the store, and it mixes in every note and summary ever
 * written; the check would then depend on the process and the moment it ran. These statistics cost
 * a pass over the bank as the plan read it per check of a window (the bank is within its budget), the same
 * in every process.
 */

/** Rare words taken per note: a few, more for a long note (each is one more word a faithful paraphrase must keep). */
function rareWordCount(candidates: number): number {
  return Math.min(MAX_RARE_WORDS, MIN_RARE_WORDS + Math.floor(candidates / WORDS_PER_EXTRA_RARE));
}
const MIN_RARE_WORDS = 3;
const MAX_RARE_WORDS = 6;
const WORDS_PER_EXTRA_RARE = 40;

const HEADING = /^#{1,6}\s/m;

/** A text as documents for the statistics: a bank file cut at its headings, anything else whole. */
export function documentsOf(text: string): string[] {
  if (!HEADING.test(text)) return [text];
  return text.split(/\n(?=#{1,6}\s)/);
}

/**
 * Each note's rare-word items (kind `word`, its stems in `values`), in the order of `notes`.
 * `notes[i]`: the note's candidate words (extractItems' `words`); `others`: the bank's documents.
 */
export function rareWords(notes: ReadonlyArray<{ content: string; words: readonly string[] }>, others: readonly string[], analyzer: Analyzer): Item[][] {
  const candidates = notes.map(({ words }) => contentWords(words, analyzer));
  const wanted = new Set(candidates.flatMap((list) => list.flatMap(([, { terms }]) => terms)));
  // Only the words that could stem to a wanted term are stemmed: a stem keeps the start of its word.
  const starts = new Set([...wanted].map((term) => term.slice(0, STEM_PREFIX)));
  const df = new Map<string, number>();
  const count = (text: string) => {
    const inDocument = new Set<string>();
    for (const word of wordsOf(text)) {
      if (!starts.has(fold(word).slice(0, STEM_PREFIX))) continue;
      for (const term of analyzer.termsOf(word)) if (wanted.has(term)) inDocument.add(term);
    }
    for (const term of inDocument) df.set(term, (df.get(term) ?? 0) + 1);
  };
  for (const note of notes) count(note.content);
  for (const document of others) count(document);

  return candidates.map((list) => {
    const rare = list
      .map(([folded, { word, terms }]) => ({ folded, word, terms, df: Math.max(...terms.map((term) => df.get(term) ?? 0)) }))
      .filter((entry) => entry.df <= 1)
      .sort((a, b) => b.folded.length - a.folded.length || (a.folded < b.folded ? -1 : a.folded > b.folded ? 1 : 0));
    const taken = new Set<string>();
    const items: Item[] = [];
    for (const entry of rare) {
      if (items.length >= rareWordCount(list.length)) break;
      if (entry.terms.some((term) => taken.has(term))) continue;
      for (const term of entry.terms) taken.add(term);
      items.push({ kind: 'word', text: entry.word, key: entry.folded, values: [...entry.terms] });
    }
    return items;
  });
}

/** A text's content words: each distinct word (folded) that is no stopword nor everyday word, with its stems. */
export function contentWords(words: readonly string[], analyzer: Analyzer): Array<[string, { word: string; terms: readonly string[] }]> {
  const seen = new Map<string, { word: string; terms: readonly string[] }>();
  for (const word of words) {
    const folded = flatten(word);
    if (COMMON.has(folded) || seen.has(folded)) continue;
    const terms = analyzer.termsOf(word);
    if (terms.length > 0) seen.set(folded, { word, terms });
  }
  return [...seen.entries()];
}

/**
 * Words of everyday English and French that say nothing of their own, past the analyser's stopwords:
 * never an item, however few documents a young space has.
 */
const COMMON = new Set(
  `about above actually after again against ago ahead all almost along already alright although always amazing another anyone anything
  anyway around asked away awesome back bad basically before behind being believe below best better big bit both bring brought came can't
  cannot care case cause certain certainly change chance come comes coming completely cool couldn't course crazy day days definitely did didn't
  different does doesn't doing don't done down during each easy else end enough especially even ever every everyone everything exactly
  excited feel feeling feels felt few fine first found from fun gave get gets getting give given gives giving glad goes going gone gonna good
  got gotten great guess had hadn't happen happened happy hard has hasn't have haven't having hear heard hello help here here's hey hmm hope
  hopefully how however i'd i'll i'm i've idea ideas important instead into isn't it's itself just keep kept kind kinds knew know known
  last later least left less let let's life like liked likes little long look looked looking looks lot lots love loved lovely made make makes
  making many maybe mean means meant might mind moment more most mostly much need needed needs never new next nice nothing now off often okay
  old once one ones only onto other others otherwise out over part people perhaps place plan please point pretty probably put quite rather
  ready real really reason right said same saw say saying says see seeing seem seemed seems seen set several share she's should shouldn't show
  since small some somebody someone something sometimes soon sorry sort sounds start started still stuff such super sure take taken takes
  taking talk talked talking tell than thank thanks that's there's they're thing things think thinking third though thought three through
  time times today together told tomorrow tonight too took totally tried tries true try trying turn two under understand until upon use used
  useful uses using usually very via wait want wanted wants wasn't way ways week weeks well went weren't what's whatever whether whole will
  wish within without won't wonderful work worked working works world worth would wouldn't wow yeah year years yes yesterday yet you'd you'll
  you're you've
  alors apres assez aujourd'hui autre autres avant avoir beaucoup bien bon bonne chaque chose choses comment dire dit doit donc encore enfin
  fait faire faut fois gens hier jamais jour jours juste mieux moins monde peu peut peuvent plus pourquoi quelque quelques rien sais
  sait semble seul seulement sinon souvent suis surtout tant toujours trop vais veut vient voici voila voir vraiment`
    .split(/\s+/)
    .filter(Boolean),
);
