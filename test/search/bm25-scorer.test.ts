import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { loadLocomo, SPLITS } from '../../scripts/bench-locomo-data.js';
import { noteText } from '../../scripts/bench-locomo.js';
import { seeded } from '../../scripts/bench-text.js';
import { INDEX_OPTIONS } from '../../src/core/recall/documents.js';
import { bm25Engine, bm25ExhaustiveEngine } from '../../src/search/bm25.js';
import type { SearchOptions, TextIndex, TextIndexEngine } from '../../src/search/types.js';

const SYLLABLES = ['ka', 'lo', 'mi', 'ne', 'ru', 'sa', 'ti', 'vo', 'ber', 'dan', 'fel', 'gor', 'hum', 'jas', 'pol', 'wen'];

/** A Zipf-like vocabulary: a few words in most documents, a long tail in a few (and inflections, so stems and prefixes meet). */
function vocabulary(random: () => number, size: number): string[] {
  const words = new Set<string>();
  while (words.size < size) {
    let word = '';
    for (let s = 0, n = 2 + Math.floor(random() * 3); s < n; s++) word += SYLLABLES[Math.floor(random() * SYLLABLES.length)];
    words.add(random() < 0.2 ? `${word}ing` : random() < 0.2 ? `${word}s` : word);
  }
  return [...words];
}

const zipf = (random: () => number, size: number): number => Math.min(size - 1, Math.floor(size ** random()) - 1);

interface Corpus {
  pruned: TextIndex;
  exhaustive: TextIndex;
  words: string[];
  ids: string[];
}

/**
 * The same documents in both engines: notes of 3–60 words, some repeated (term frequencies above 1),
 * a share of background documents (`bg/`), some removed, some added after a snapshot (a segment and
 * a delta at once), some replaced.
 */
function corpus(seed: number, documents: number): Corpus {
  const random = seeded(seed);
  const words = vocabulary(random, 60 + Math.floor(random() * 400));
  // Background documents (`bg/`) are left out of the statistics: only `n/` ids count.
  const counted = { countedPrefixes: ['n/'] };
  const texts: Array<[string, string]> = [];
  for (let i = 0; i < documents; i++) {
    const length = 3 + Math.floor(random() ** 2 * 60);
    const text = Array.from({ length }, () => words[zipf(random, words.length)] as string).join(' ');
    texts.push([random() < 0.1 ? `bg/${i}` : `n/${String(i).padStart(6, '0')}`, text]);
  }
  const build = (engine: TextIndexEngine): TextIndex => {
    const index = engine.create(counted);
    const split = Math.floor(texts.length * (0.3 + random() * 0.5));
    for (const [id, text] of texts.slice(0, split)) index.add(id, text);
    const loaded = engine.load(index.serialize(), counted);
    for (const [id, text] of texts.slice(split)) loaded.add(id, text);
    return loaded;
  };
  const pruned = build(bm25Engine);
  const exhaustive = build(bm25ExhaustiveEngine);
  const removals = seeded(seed + 1);
  for (const [id] of texts) {
    const roll = removals();
    if (roll < 0.08) {
      pruned.remove(id);
      exhaustive.remove(id);
    } else if (roll < 0.1) {
      const text = `${words[zipf(removals, words.length)]} ${words[zipf(removals, words.length)]}`;
      pruned.add(id, text);
      exhaustive.add(id, text);
    }
  }
  return { pruned, exhaustive, words, ids: texts.map(([id]) => id) };
}

/** Queries of 1–6 words, some mistyped or cut short (prefix and typo matching), some missing. */
function queries(random: () => number, words: readonly string[], count: number): string[] {
  return Array.from({ length: count }, () =>
    Array.from({ length: 1 + Math.floor(random() * 6) }, () => {
      const word = words[zipf(random, words.length)] as string;
      const roll = random();
      if (roll < 0.1) return word.slice(0, 3 + Math.floor(random() * 3));
      if (roll < 0.2 && word.length >= 6) return `${word.slice(0, 2)}${word.slice(3)}`;
      if (roll < 0.25) return 'zzqx';
      return word;
    }).join(' '),
  );
}

const LIMITS = [1, 2, 5, 10, 15, 50, 200, 1000];

function assertSame(corpus: Corpus, query: string, options: SearchOptions): void {
  const pruned = corpus.pruned.search(query, options);
  const exhaustive = corpus.exhaustive.search(query, options);
  // The same documents in the same order with the same scores, to the bit.
  assert.deepEqual(pruned, exhaustive, `query ${JSON.stringify(query)} with ${JSON.stringify({ ...options, filter: options.filter ? 'set' : 'none' })}`);
}

describe('bm25 pruned scorer (MaxScore)', () => {
  it('returns the same top k as scoring every posting, on random corpora with removals, replacements and background documents', () => {
    for (let seed = 1; seed <= 40; seed++) {
      const random = seeded(seed * 7919);
      const c = corpus(seed, 200 + Math.floor(random() * 1500));
      for (const query of queries(random, c.words, 12)) {
        const limit = LIMITS[Math.floor(random() * LIMITS.length)] as number;
        assertSame(c, query, { limit });
        assertSame(c, query, { limit, prefix: false, fuzzy: false });
      }
    }
  });

  it('stays exact across windows of documents, on corpora larger than one window', () => {
    for (const seed of [101, 102, 103]) {
      const random = seeded(seed);
      const c = corpus(seed, 9_000 + Math.floor(random() * 4_000));
      for (const query of queries(random, c.words, 25)) for (const limit of [10, 200]) assertSame(c, query, { limit });
    }
  });

  it('keeps the filter out of what ranks, asking it only of documents that may', () => {
    for (let seed = 200; seed < 215; seed++) {
      const random = seeded(seed);
      const c = corpus(seed, 300 + Math.floor(random() * 3_000));
      const keep = (id: string) => id.endsWith('1') || id.endsWith('4') || id.startsWith('bg/');
      for (const query of queries(random, c.words, 8)) {
        const limit = LIMITS[Math.floor(random() * LIMITS.length)] as number;
        assertSame(c, query, { limit, filter: keep });
        let asked = 0;
        c.pruned.search(query, {
          limit,
          filter: (id) => {
            asked++;
            return keep(id);
          },
        });
        let askedAll = 0;
        c.exhaustive.search(query, {
          limit,
          filter: (id) => {
            askedAll++;
            return keep(id);
          },
        });
        assert.ok(asked <= askedAll, `${asked} filter calls, the exhaustive scorer's ${askedAll}`);
      }
    }
  });

  it('breaks ties by id as the exhaustive scorer does, whatever the order documents came in', () => {
    for (const seed of [300, 301, 302]) {
      const random = seeded(seed);
      // Many identical documents: scores tie, and only ids order them.
      const texts = Array.from(
        { length: 3_000 },
        (_, i) => [`d/${Math.floor(random() * 1e9)}-${i}`, random() < 0.5 ? 'alpha beta' : 'alpha gamma beta'] as const,
      );
      const [pruned, exhaustive] = [bm25Engine, bm25ExhaustiveEngine].map((engine) => {
        const index = engine.create();
        for (const [id, text] of texts) index.add(id, text);
        return index;
      }) as [TextIndex, TextIndex];
      for (const query of ['alpha', 'alpha beta', 'gamma alpha', 'beta gama']) {
        // The reference itself: every match, as a full sort orders them (score, then id).
        const all = exhaustive.search(query, { limit: 5_000 });
        const sorted = [...all].sort((a, b) => b.score - a.score || (a.id < b.id ? -1 : 1));
        assert.deepEqual(all, sorted, query);
        for (const limit of [1, 7, 100, 2_999, 5_000]) {
          assert.deepEqual(exhaustive.search(query, { limit }), sorted.slice(0, limit), `${query} ${limit}`);
          assert.deepEqual(pruned.search(query, { limit }), sorted.slice(0, limit), `${query} ${limit}`);
        }
      }
    }
  });

  it("breaks ties in a segment's ids by their bytes as strings order them, whatever the script", () => {
    // UTF-8 orders as code points, strings as UTF-16 units: the two differ between U+E000–U+FFFF and above U+FFFF.
    const parts = ['a', 'z', 'é', 'ÿ', '中', '\uE000', '\uFFFD', '😀', '𝒜', 'n:', 'n:a'];
    const ids = parts.flatMap((x) => parts.map((y) => `${x}${y}`));
    const expected = [...new Set(ids)].sort((a, b) => (a < b ? -1 : 1));
    for (const engine of [bm25Engine, bm25ExhaustiveEngine]) {
      const index = engine.create();
      for (const id of ids.slice(0, ids.length / 2)) index.add(id, 'same words');
      index.compact();
      for (const id of ids.slice(ids.length / 2)) index.add(id, 'same words'); // some in the segment, some added since
      for (const searched of [index, engine.load(index.serialize())]) {
        const found = searched.search('words', { limit: ids.length });
        assert.deepEqual(
          found.map((hit) => hit.id),
          expected,
        );
      }
    }
  });
});

describe("bm25 pruned scorer on LoCoMo (the bench's dev split)", () => {
  it("returns the same top k as scoring every posting for every dev question, on each conversation's turns", () => {
    for (const conversation of loadLocomo(SPLITS.dev)) {
      const day = new Map(conversation.sessions.map((session) => [session.number, session.day]));
      // As the bench writes them: a note per turn (its day, its text, a photo's caption), as recall ids them.
      const texts = conversation.turns.map((turn) => [`n:${turn.diaId}`, noteText(turn, day.get(turn.session) ?? '')] as const);
      const [pruned, exhaustive] = [bm25Engine, bm25ExhaustiveEngine].map((engine) => {
        // Half in a loaded segment, half added after it: both kinds of postings under the cursors.
        const index = engine.create(INDEX_OPTIONS);
        const split = texts.length >> 1;
        for (const [id, text] of texts.slice(0, split)) index.add(id, text);
        const loaded = engine.load(index.serialize(), INDEX_OPTIONS);
        for (const [id, text] of texts.slice(split)) loaded.add(id, text);
        return loaded;
      }) as [TextIndex, TextIndex];
      assert.ok(conversation.questions.length > 100);
      for (const { question } of conversation.questions)
        for (const limit of [5, 10, 50])
          assert.deepEqual(pruned.search(question, { limit }), exhaustive.search(question, { limit }), `${conversation.id}: ${question} (${limit})`);
    }
  });
});
