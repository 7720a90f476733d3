import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAnalyzer, fold, MAX_TOKEN_LENGTH, tokenize, words } from '../../src/search/analyze.js';

const shareATerm = (a: string, b: string, analyzer = createAnalyzer()): boolean => {
  const left = new Set(analyzer.termsOf(a));
  return analyzer.termsOf(b).some((term) => left.has(term));
};

describe('tokenize', () => {
  it('splits on anything but letters and digits and keeps offsets into the original text', () => {
    const text = 'Décision: use snake_case-ids, port 8080 (été)';
    const tokens = tokenize(text);
    assert.deepEqual(
      tokens.map((t) => t.token),
      ['Décision', 'use', 'snake', 'case', 'ids', 'port', '8080', 'été'],
    );
    for (const { token, start, end } of tokens) assert.equal(text.slice(start, end), token);
  });

  it('keeps a word typed with combining accents in one piece', () => {
    assert.deepEqual(
      tokenize('de\u0301cision prise').map((t) => t.token),
      ['de\u0301cision', 'prise'],
    );
  });

  it('words() gives the same words without offsets', () => {
    const text = "l'authentification du serveur, v2.1";
    assert.deepEqual(
      words(text),
      tokenize(text).map((t) => t.token),
    );
    assert.deepEqual(words('  ... '), []);
  });
});

describe('fold', () => {
  it('lowercases and strips diacritics', () => {
    assert.equal(fold('Décisions'), 'decisions');
    assert.equal(fold('ÉLÈVE'), 'eleve');
    assert.equal(fold('de\u0301cision'), 'decision');
    assert.equal(fold('Ça'), 'ca');
  });

  it('spells out ligatures', () => {
    assert.equal(fold('Œuvre'), 'oeuvre');
    assert.equal(fold('Straße'), 'strasse');
  });
});

describe('termsOf', () => {
  const analyzer = createAnalyzer();

  it('drops English and French stopwords and single characters', () => {
    for (const word of ['the', 'The', 'and', 'of', 'le', 'la', 'les', 'des', 'est', 'une', 'été', 'x', '7']) {
      assert.deepEqual(analyzer.termsOf(word), [], word);
    }
  });

  it('conflates English inflections', () => {
    assert.ok(shareATerm('running', 'runs'));
    assert.ok(shareATerm('runs', 'run'));
    assert.ok(shareATerm('configured', 'configuration'));
    assert.ok(shareATerm('databases', 'database'));
  });

  it('conflates French inflections, accents or not', () => {
    assert.ok(shareATerm('décisions', 'decision'));
    assert.ok(shareATerm('serveurs', 'serveur'));
    assert.ok(shareATerm('élève', 'ELEVE'));
  });

  it('does not conflate unrelated words', () => {
    assert.ok(!shareATerm('database', 'decision'));
    assert.ok(!shareATerm('token', 'table'));
  });

  it('indexes a word under both its English and its French stem, without duplicates', () => {
    const terms = analyzer.termsOf('décisions');
    assert.equal(new Set(terms).size, terms.length);
    assert.ok(terms.length >= 1 && terms.length <= 2);
    assert.deepEqual(analyzer.termsOf('database'), ['databas']);
  });

  it('keeps numbers and identifiers with digits as written', () => {
    assert.deepEqual(analyzer.termsOf('2024'), ['2024']);
    assert.deepEqual(analyzer.termsOf('IPv6'), ['ipv6']);
  });

  it('drops overlong tokens (hashes, base64)', () => {
    assert.deepEqual(analyzer.termsOf('a'.repeat(MAX_TOKEN_LENGTH + 1)), []);
    assert.equal(analyzer.termsOf('ab'.repeat(MAX_TOKEN_LENGTH / 2)).length, 1);
  });

  it('gives the same answer from the cache, without one, and after the cache is cleared', () => {
    const uncached = createAnalyzer({ cacheLimit: 0 });
    const tiny = createAnalyzer({ cacheLimit: 2 });
    for (const word of ['Décisions', 'running', 'the', 'IPv6', 'Décisions', 'serveurs', 'running']) {
      assert.deepEqual(tiny.termsOf(word), uncached.termsOf(word), word);
      assert.deepEqual(analyzer.termsOf(word), uncached.termsOf(word), word);
    }
  });
});

describe('analyze', () => {
  it('lists every term in order with repeats and without stopwords', () => {
    const analyzer = createAnalyzer();
    const terms = analyzer.analyze('The database, the databases and les bases');
    assert.deepEqual(terms.slice(0, 2), ['databas', 'databas']);
    assert.ok(!terms.includes('the'));
    assert.ok(!terms.includes('les'));
    assert.deepEqual(analyzer.analyze(''), []);
  });

  it('agrees with termsOf over tokenize', () => {
    const analyzer = createAnalyzer();
    const text = "Nous avons pris des décisions sur l'authentification; running configs in 2024.";
    assert.deepEqual(
      analyzer.analyze(text),
      analyzer.tokenize(text).flatMap((t) => [...analyzer.termsOf(t.token)]),
    );
  });
});
