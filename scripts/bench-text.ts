/**
 * The benchmark's generated text (pure: no store, no build): a Zipf-distributed vocabulary of about
 * 3,000 words, notes of 150–400 characters drawn from it with a unique id each, and queries drawn from
 * the same vocabulary — words the notes hold, as an agent's query holds the words of what it looks
 * for — and, reported apart, queries of words no note holds (misses). Every store and query comes from
 * fixed seeds, so runs compare.
 */

/** mulberry32: a small seeded generator, so every run writes the same stores. */
export function seeded(seed: number): () => number {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = Math.imul(state ^ (state >>> 15), state | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

const FUNCTION_WORDS = 'the a to of and in for on with is was we it that this from after before when not but all'.split(' ');
const PROJECT_WORDS = `cache queue worker token session request response retry timeout error deploy build release branch merge
  test fixture schema migration index query table column row shard replica leader follower lock lease commit rollback
  snapshot backup restore export import archive bucket object key prefix folder file path config setting flag feature
  toggle rollout canary metric alert dashboard log trace span latency throughput memory disk network socket port host
  cluster node pod container image registry secret certificate proxy gateway router handler middleware endpoint client
  server service api user tenant account billing invoice payment order cart checkout search ranking filter sort page
  cursor batch stream event topic consumer producer offset partition message payload header body field value default
  limit quota budget cost estimate plan review decision issue bug fix patch refactor cleanup rename move split extract
  document note summary report agent model prompt context window embedding vector score rank recall precision benchmark
  profile heap leak spike regression flaky pipeline runner job schedule cron nightly staging production region zone
  failover outage incident postmortem owner team sprint ticket backlog estimate deadline customer contract`.split(/\s+/);
/** Words past the project ones: pronounceable, made up, far enough apart for typo matching to stay honest. */
const PSEUDO_WORDS = 2_800;

/** About 3,000 words, most frequent first. */
export function vocabulary(): string[] {
  const random = seeded(1);
  const pick = (letters: string) => letters[Math.floor(random() * letters.length)] as string;
  const words = new Set([...FUNCTION_WORDS, ...PROJECT_WORDS]);
  while (words.size < FUNCTION_WORDS.length + PROJECT_WORDS.length + PSEUDO_WORDS) {
    const syllables = 1 + Math.floor(random() * 3);
    let word = '';
    for (let s = 0; s < syllables; s++) word += pick('bdfgklmnprstvz') + pick('aeiou') + pick('lmnrstx');
    words.add(word);
  }
  return [...words];
}

/** A rank from 0 to size - 1, Zipf-distributed (rank r drawn with probability about 1 / (r + 1)). */
export const zipf = (random: () => number, size: number): number => Math.min(size - 1, Math.floor(size ** random()) - 1);

/** Each note carries one id found nowhere else: a ticket, a commit, a request id. */
export const uniqueId = (index: number): string => `k${index.toString(36).padStart(5, '0')}`;

function syntheticNote(random: () => number, words: readonly string[], id: string): string {
  const target = 150 + Math.floor(random() * 240);
  const idAt = Math.floor(random() * 8);
  const parts: string[] = [];
  let size = 0;
  let inSentence = 0;
  while (size < target) {
    let word = words[zipf(random, words.length)] as string;
    if (inSentence === 0) word = word.charAt(0).toUpperCase() + word.slice(1);
    if (parts.length === idAt) word = `${word} ${id}`;
    if (++inSentence >= 6 && random() < 0.15) {
      word += '.';
      inSentence = 0;
    }
    parts.push(word);
    size += word.length + 1;
  }
  return `${parts.join(' ').replace(/\.$/, '')}.`;
}

export function syntheticNotes(count: number, seed: number, words: readonly string[]): string[] {
  const random = seeded(seed);
  return Array.from({ length: count }, (_, index) => syntheticNote(random, words, uniqueId(index)));
}

/** Queries of 1–3 content words (no function words), drawn as the notes draw them: every word is held by notes. */
export function searchQueries(words: readonly string[], count: number, seed: number): string[] {
  const random = seeded(seed);
  const content = words.slice(FUNCTION_WORDS.length);
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(random() * 3) }, () => content[zipf(random, content.length)] as string).join(' '),
  );
}

/**
 * Queries of 1–2 made-up words that no generated note holds (the vocabulary's syllables shuffled into
 * words it does not have): what a search for something never written costs. Prefix and typo matching
 * may still reach real words from them, as they would for a real miss.
 */
export function missQueries(count: number, seed: number): string[] {
  const known = new Set(vocabulary());
  const random = seeded(seed);
  const pick = (letters: string) => letters[Math.floor(random() * letters.length)] as string;
  const word = (): string => {
    for (;;) {
      let made = '';
      for (let s = 0; s < 2 + Math.floor(random() * 2); s++) made += pick('bdfgklmnprstvz') + pick('aeiou') + pick('lmnrstx');
      if (!known.has(made)) return `${made}q`; // no vocabulary word ends in q: never a word a note holds
    }
  };
  return Array.from({ length: count }, () => Array.from({ length: 1 + Math.floor(random() * 2) }, word).join(' '));
}
