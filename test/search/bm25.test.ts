import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import { readSections, type Section, writeSections } from '../../src/shared/sections.js';
import { bm25Engine } from '../../src/search/bm25.js';
import { boundedEditDistance, forEachFuzzy, prefixRange } from '../../src/search/term-match.js';
import { TermList } from '../../src/search/bm25-terms.js';
import { CorruptIndexError, type SearchHit, type SearchOptions, type TextIndex } from '../../src/search/types.js';

function indexOf(docs: Record<string, string>): TextIndex {
  const index = bm25Engine.create();
  for (const [id, text] of Object.entries(docs)) index.add(id, text);
  return index;
}

const ids = (index: TextIndex, query: string, options: Partial<SearchOptions> = {}): string[] =>
  index.search(query, { limit: 10, ...options }).map((hit) => hit.id);

/** Filler notes that make the common words common, so idf tells rare from frequent. */
function withFiller(docs: Record<string, string>, count = 40): Record<string, string> {
  const filler: Record<string, string> = {};
  for (let i = 0; i < count; i++) filler[`filler-${i}`] = `the server log of day ${i} mentions the server and a note`;
  return { ...filler, ...docs };
}

/** A deterministic corpus over a small vocabulary, with inflections, accents and typos to match. */
function corpus(size: number): Record<string, string> {
  const vocabulary = [
    'server',
    'servers',
    'database',
    'databases',
    'décision',
    'décisions',
    'authentication',
    'token',
    'tokens',
    'deploy',
    'deployment',
    'running',
    'runs',
    'configuration',
    'configured',
    'élève',
    'serveur',
    'mémoire',
    'index',
    'indexing',
    'search',
    'query',
    'queries',
    'cache',
    'latency',
    'release',
    'rollback',
    'kubernetes',
    'note',
    'notebook',
    'agent',
    'agents',
    'réunion',
    'budget',
    'client',
    'clients',
    'test',
    'tests',
    '2024',
    'v2',
  ];
  let seed = 7;
  const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
  const docs: Record<string, string> = {};
  for (let i = 0; i < size; i++) {
    const length = 3 + Math.floor(next() * 25);
    docs[`space/note-${i}`] = Array.from({ length }, () => vocabulary[Math.floor(next() * next() * vocabulary.length)]).join(' ');
  }
  return docs;
}

const QUERIES = [
  'server',
  'décisions',
  'DECISION',
  'authen',
  'databse',
  'authentification',
  'running configuration',
  'élève serveur',
  'kubernetes rollback',
  'note',
  'notebook agent',
  'queries latency cache',
  '2024',
  'v2 release',
  'the',
  'depl',
  'tokens client budget',
  'mémoire index',
  'réunions',
  'configurations',
  'seach',
  'agents tests',
];

/** A search's ids and scores (a document's number is the engine's own, renumbered by a compaction). */
const ranked = (hits: readonly SearchHit[]): Array<{ id: string; score: number }> => hits.map(({ id, score }) => ({ id, score }));

function allResults(index: TextIndex): unknown[] {
  return QUERIES.flatMap((query) => [
    ranked(index.search(query, { limit: 20 })),
    ranked(index.search(query, { limit: 5, prefix: false, fuzzy: false })),
    ranked(index.search(query, { limit: 7, filter: (id) => !id.endsWith('3') })),
  ]);
}

describe('bm25 index: matching', () => {
  it('matches French and English inflections in either direction', () => {
    const index = indexOf({ a: 'We made a decision about the schema', b: 'She runs every morning', c: 'Les serveurs sont lents', d: 'unrelated text' });
    assert.deepEqual(ids(index, 'décisions'), ['a']);
    assert.deepEqual(ids(index, 'running'), ['b']);
    assert.deepEqual(ids(index, 'serveur'), ['c']);
  });

  it('folds case and accents', () => {
    const index = indexOf({ a: "L'élève a écrit un Résumé", b: 'nothing here' });
    assert.deepEqual(ids(index, 'ELEVE'), ['a']);
    assert.deepEqual(ids(index, 'resume'), ['a']);
    assert.deepEqual(ids(index, 'RÉSUMÉ'), ['a']);
  });

  it('ignores stopwords in queries', () => {
    const index = indexOf(withFiller({ a: 'the database of the project', b: 'a database migration' }));
    assert.deepEqual(ids(index, 'the'), []);
    assert.deepEqual(ranked(index.search('the of les database', { limit: 10 })), ranked(index.search('database', { limit: 10 })));
  });

  it('matches prefixes of 3+ characters only when prefix matching is on', () => {
    const index = indexOf({ a: 'Authentication uses tokens', b: 'Deployment notes' });
    assert.deepEqual(ids(index, 'authen'), ['a']);
    assert.deepEqual(ids(index, 'authen', { prefix: false, fuzzy: false }), []);
    assert.deepEqual(ids(index, 'au'), []);
  });

  it('matches typos of 5+ characters only when fuzzy matching is on', () => {
    const index = indexOf({ a: 'The database is slow', b: 'Authentication uses tokens', c: 'release notes' });
    assert.deepEqual(ids(index, 'databse'), ['a']);
    assert.deepEqual(ids(index, 'databse', { fuzzy: false }), []);
    assert.deepEqual(ids(index, 'authentification', { prefix: false }), ['b']);
    assert.deepEqual(ids(index, 'relase'), ['c']);
    assert.deepEqual(ids(index, 'relse', { prefix: false }), []); // two edits on a short word
  });

  it('never treats numbers as typos of each other', () => {
    const index = indexOf({ a: 'listening on port 8080', b: 'release 20240' });
    assert.deepEqual(ids(index, '8081'), []);
    assert.deepEqual(ids(index, '20241'), []);
    assert.deepEqual(ids(index, '8080'), ['a']);
  });

  it('answers a query as long as a whole note', () => {
    const docs = corpus(200);
    const index = indexOf(docs);
    const query = Object.values(docs).slice(0, 20).join(' ');
    assert.equal(index.search(query, { limit: 5 }).length, 5);
  });
});

describe('bm25 index: ranking', () => {
  it('ranks a document with the rare query term above one with only the common one', () => {
    const index = indexOf(withFiller({ rare: 'notes about kubernetes upgrades', common: 'notes about the server upgrades' }));
    const ranked = ids(index, 'server kubernetes', { limit: 100 });
    assert.equal(ranked[0], 'rare');
    assert.ok(ranked.indexOf('common') > 0);
  });

  it('ranks documents matching more query words higher', () => {
    const index = indexOf(withFiller({ one: 'rollback procedure', two: 'rollback procedure for the budget', three: 'rollback budget latency procedure' }));
    assert.deepEqual(ids(index, 'rollback budget latency').slice(0, 3), ['three', 'two', 'one']);
  });

  it('ranks an exact match above a prefix match above a fuzzy match', () => {
    // "notebook" is rarer than "note", yet the note asked for comes first.
    const notes = indexOf(withFiller({ exact: 'note about it', prefix: 'notebook about it' }));
    const ranked = ids(notes, 'note', { limit: 100 });
    assert.ok(ranked.indexOf('exact') < ranked.indexOf('prefix'), ranked.join());
    assert.deepEqual(ids(indexOf({ exact: 'token rotation', fuzzy: 'tokem rotation' }), 'token'), ['exact', 'fuzzy']);
    assert.deepEqual(ids(indexOf({ fuzzy: 'confog file', prefix: 'configuration file' }), 'config'), ['prefix', 'fuzzy']);
  });

  it('returns scores best first, ties broken by id, at most `limit`', () => {
    const index = indexOf({ c: 'alpha text', a: 'alpha text', b: 'alpha text', d: 'other words' });
    const hits = index.search('alpha', { limit: 10 });
    assert.deepEqual(
      hits.map((h) => h.id),
      ['a', 'b', 'c'],
    );
    assert.equal(hits[0]?.score, hits[2]?.score);
    assert.deepEqual(ids(index, 'alpha', { limit: 2 }), ['a', 'b']);
    assert.deepEqual(ids(index, 'alpha', { limit: 0 }), []);
    const ranked = indexOf(corpus(500)).search('server database', { limit: 50 });
    for (let i = 1; i < ranked.length; i++) assert.ok((ranked[i - 1]?.score ?? 0) >= (ranked[i]?.score ?? 0));
  });
});

describe('bm25 index: documents', () => {
  it('applies the filter once per document, before scoring', () => {
    const index = indexOf({ a: 'database database', b: 'database', c: 'database index' });
    const asked: string[] = [];
    const hits = ids(index, 'database index', {
      filter: (id) => {
        asked.push(id);
        return id !== 'a';
      },
    });
    assert.deepEqual(hits, ['c', 'b']);
    assert.deepEqual(asked.sort(), ['a', 'b', 'c']);
  });

  it('replaces a document added again under the same id and forgets removed ones', () => {
    const index = indexOf({ a: 'apple pie', b: 'apple juice' });
    index.add('a', 'banana bread');
    assert.deepEqual(ids(index, 'apple'), ['b']);
    assert.deepEqual(ids(index, 'banana'), ['a']);
    index.remove('b');
    index.remove('missing');
    assert.deepEqual(ids(index, 'apple'), []);
    assert.equal(index.size, 1);
    assert.equal(index.has('a'), true);
    assert.equal(index.has('b'), false);
    assert.deepEqual([...index.ids()], ['a']);
  });

  it('counts only live documents, so results after removals equal a fresh build', () => {
    const docs = corpus(300);
    const churned = indexOf(docs);
    for (let i = 0; i < 300; i += 3) churned.remove(`space/note-${i}`);
    for (let i = 1; i < 300; i += 7) churned.add(`space/note-${i}`, docs[`space/note-${i}`] as string);
    const live = (i: number): boolean => i % 3 !== 0 || i % 7 === 1;
    const fresh = indexOf(Object.fromEntries(Object.entries(docs).filter(([id]) => live(Number(id.split('-')[1])))));
    assert.deepEqual(allResults(churned), allResults(fresh));
  });

  it('stays right across the compaction that many removals trigger', () => {
    const docs = corpus(3000);
    const index = indexOf(docs);
    for (let i = 0; i < 2000; i++) index.remove(`space/note-${i}`);
    const fresh = indexOf(Object.fromEntries(Object.entries(docs).slice(2000)));
    assert.equal(index.size, 1000);
    assert.deepEqual(allResults(index), allResults(fresh));
  });

  it('packs a large delta into the segment while adding (a build holds its postings once), answering the same', () => {
    // 2^21 postings trigger the packing: 50,000 documents of 48 distinct terms each cross it once.
    const docs: Record<string, string> = {};
    for (let i = 0; i < 50_000; i++)
      docs[`doc-${i}`] = Array.from({ length: 48 }, (_, j) => `w${(i * 7 + j * 131) % 9_973}x${j % 3}`).join(' ') + (i % 1000 === 0 ? ' zeppelin' : '');
    const index = indexOf(docs);
    const packed = bm25Engine.load(index.serialize());
    const fresh = indexOf(docs);
    // Unpacked, the postings alone would be over 5 times the packed index (whose ids are bytes, not strings).
    assert.ok(fresh.bytes() < packed.bytes() * 3, `the delta was packed while adding: ${fresh.bytes()} bytes against ${packed.bytes()} packed`);
    for (const query of ['zeppelin', 'w17x0 w4000x1', 'w9000x2', 'w123x0 zeppelin']) assert.deepEqual(ids(fresh, query), ids(packed, query), query);
    fresh.remove('doc-0');
    assert.equal(ids(fresh, 'zeppelin').includes('doc-0'), false);
    assert.equal(fresh.size, 49_999);
  });

  it('estimates its memory from what it holds: more documents, more bytes; compacting gives the delta back', () => {
    const index = bm25Engine.create();
    const empty = index.bytes();
    assert.ok(empty > 0);
    for (const [id, text] of Object.entries(corpus(500))) index.add(id, text);
    const built = index.bytes();
    assert.ok(built > empty + 500 * 100, `${built} bytes for 500 documents`);
    index.compact();
    assert.ok(index.bytes() < built, 'the packed form is smaller');
    assert.deepEqual(allResults(index), allResults(indexOf(corpus(500))));
  });

  it('lets a caller remove documents while iterating ids(), across a compaction', () => {
    const index = indexOf(corpus(3000));
    let seen = 0;
    for (const id of index.ids()) {
      seen++;
      if (id !== 'space/note-2999') index.remove(id);
    }
    assert.equal(seen, 3000);
    assert.deepEqual([...index.ids()], ['space/note-2999']);
    assert.equal(index.size, 1);
  });

  it('handles empty texts and an empty index', () => {
    const index = bm25Engine.create();
    assert.deepEqual(index.search('anything', { limit: 5 }), []);
    index.add('empty', '');
    index.add('stop', 'the and of');
    assert.equal(index.size, 2);
    assert.deepEqual(index.search('anything', { limit: 5 }), []);
  });
});

describe('bm25 index: background documents', () => {
  const background = (id: string) => id.startsWith('digest/');
  /** Every id but the digests' counts: the corpus's (`space/…`) and the one named `note`. */
  const options = { countedPrefixes: ['space/', 'note'] };
  /** Digests that repeat the corpus's words many times over, as a summary of it does. */
  const digests = (count: number): Record<string, string> =>
    Object.fromEntries(
      Array.from({ length: count }, (_, i) => [`digest/${i}`, `server database token deploy running configuration décision ${'server token '.repeat(i % 5)}`]),
    );
  /** Every query of allResults, background documents filtered out before scoring: the others' hits and scores. */
  const foreground = (index: TextIndex) =>
    QUERIES.flatMap((query) => [
      ranked(index.search(query, { limit: 20, filter: (id) => !background(id) })),
      ranked(index.search(query, { limit: 5, prefix: false, fuzzy: false, filter: (id) => !background(id) })),
    ]);

  it('are found, but leave every other document scored as before they came, across removals, compaction and snapshots', () => {
    const docs = corpus(300);
    const plain = bm25Engine.create(options);
    for (const [id, text] of Object.entries(docs)) plain.add(id, text);
    const before = foreground(plain);

    const mixed = bm25Engine.create(options);
    const extra = digests(40);
    for (const [id, text] of Object.entries({ ...extra, ...docs })) mixed.add(id, text);
    assert.deepEqual(foreground(mixed), before, 'the same hits with the same scores');
    assert.equal(ids(mixed, 'server token', { filter: background }).length, 10, 'background documents are still found');

    // Without the option the digests reweigh the words: the case this is for.
    const reweighed = bm25Engine.create();
    for (const [id, text] of Object.entries({ ...extra, ...docs })) reweighed.add(id, text);
    assert.notDeepEqual(foreground(reweighed), before);

    for (let i = 0; i < 40; i += 2) mixed.remove(`digest/${i}`);
    mixed.add('digest/new', 'server server server token');
    assert.deepEqual(foreground(mixed), before, 'after background documents come and go');
    mixed.compact();
    assert.deepEqual(foreground(mixed), before, 'after a compaction renumbers documents');
    const loaded = bm25Engine.load(mixed.serialize(), options);
    assert.deepEqual(foreground(loaded), before, 'a loaded snapshot classifies its ids by the option');
    assert.deepEqual(allResults(loaded), allResults(mixed));
  });

  it('finds a word only background documents hold, and ranks an index of them alone by their own statistics', () => {
    const index = bm25Engine.create(options);
    index.add('note', 'the deploy pipeline caches layers');
    index.add('digest/1', 'the zebracorn service and the deploy pipeline');
    assert.deepEqual(ids(index, 'zebracorn'), ['digest/1']);
    const alone = bm25Engine.create({ countedPrefixes: [] });
    alone.add('a', 'the deploy pipeline caches layers');
    alone.add('b', 'lunch is at noon, then the deploy');
    alone.add('c', 'lunch again');
    const plain = bm25Engine.create();
    for (const [id, text] of [
      ['a', 'the deploy pipeline caches layers'],
      ['b', 'lunch is at noon, then the deploy'],
      ['c', 'lunch again'],
    ] as const)
      plain.add(id, text);
    assert.deepEqual(ranked(alone.search('deploy pipeline lunch', { limit: 5 })), ranked(plain.search('deploy pipeline lunch', { limit: 5 })));
  });
});

describe('bm25 index: snapshots', () => {
  it('answers every search the same after serialize and load', () => {
    const docs = corpus(800);
    const index = indexOf(docs);
    for (let i = 0; i < 800; i += 5) index.remove(`space/note-${i}`);
    index.add('space/note-1', 'a replaced note about kubernetes and the budget');
    const before = allResults(index);
    const loaded = bm25Engine.load(index.serialize());
    assert.deepEqual(allResults(loaded), before);
    assert.deepEqual(allResults(index), before, 'serialize must not change the answers of the index itself');
    assert.equal(loaded.size, index.size);
    assert.deepEqual([...loaded.ids()].sort(), [...index.ids()].sort());
  });

  it('accepts adds, replacements and removals after load, and round-trips them again', () => {
    const loaded = bm25Engine.load(indexOf(corpus(200)).serialize());
    loaded.add('new', 'zeppelin maintenance schedule');
    loaded.add('space/note-3', 'zeppelin hangar');
    loaded.remove('space/note-4');
    assert.deepEqual(ids(loaded, 'zeppelin'), ['space/note-3', 'new']);
    assert.equal(loaded.has('space/note-4'), false);
    assert.equal(loaded.size, 200);
    const again = bm25Engine.load(loaded.serialize());
    assert.deepEqual(allResults(again), allResults(loaded));
    assert.deepEqual(ids(again, 'zepelin'), ['space/note-3', 'new']);
  });

  it('keeps any id, newlines and non-ASCII included', () => {
    const index = indexOf({ 'a\nb': 'first note', 'é/🙂': 'second note', '': 'third note' });
    const loaded = bm25Engine.load(index.serialize());
    assert.deepEqual([...loaded.ids()].sort(), ['', 'a\nb', 'é/🙂']);
    assert.deepEqual(ids(loaded, 'second'), ['é/🙂']);
  });

  it('round-trips an empty index and loads from an unaligned buffer', () => {
    assert.equal(bm25Engine.load(bm25Engine.create().serialize()).size, 0);
    const snapshot = indexOf({ a: 'unaligned buffers work' }).serialize();
    const shifted = Buffer.alloc(snapshot.length + 1);
    snapshot.copy(shifted, 1);
    assert.deepEqual(ids(bm25Engine.load(shifted.subarray(1)), 'buffers'), ['a']);
  });

  it('rejects a truncated, altered, foreign or empty buffer with CorruptIndexError', () => {
    const snapshot = indexOf(corpus(50)).serialize();
    const flipped = Buffer.from(snapshot);
    flipped[flipped.length >> 1] = (flipped[flipped.length >> 1] as number) ^ 0x10;
    const magic = Buffer.from(snapshot);
    magic.write('XXXX', 0, 'latin1');
    const cases: Record<string, Buffer> = {
      empty: Buffer.alloc(0),
      truncated: snapshot.subarray(0, snapshot.length - 10),
      'cut in half': snapshot.subarray(0, snapshot.length >> 1),
      extended: Buffer.concat([snapshot, Buffer.from([0])]),
      flipped,
      'wrong magic': magic,
      json: Buffer.from(JSON.stringify({ documents: [] })),
    };
    for (const [name, buffer] of Object.entries(cases)) {
      assert.throws(() => bm25Engine.load(buffer), CorruptIndexError, name);
    }
  });

  it('finds every id of a large loaded index, non-ASCII ones across the chunks ids are written in, and forgets removed ones', () => {
    const docs: Record<string, string> = {};
    for (let i = 0; i < 10_000; i++) docs[i % 3 === 0 ? `h:café-${i}/é🙂${i}` : `n:note-${i}`] = `word${i % 97} shared`;
    const loaded = bm25Engine.load(indexOf(docs).serialize());
    assert.deepEqual([...loaded.ids()].sort(), Object.keys(docs).sort());
    for (const id of Object.keys(docs)) assert.equal(loaded.has(id), true, id);
    assert.equal(loaded.has('n:note-10000'), false);
    assert.equal(loaded.has('h:café-3/é🙂'), false);
    loaded.remove('h:café-3/é🙂3');
    loaded.remove('n:note-4');
    loaded.add('n:note-4', 'zeppelin');
    assert.equal(loaded.has('h:café-3/é🙂3'), false);
    assert.deepEqual(ids(loaded, 'zeppelin'), ['n:note-4']);
    assert.equal(loaded.size, 9_999);
    const again = bm25Engine.load(loaded.serialize());
    assert.deepEqual(allResults(again), allResults(loaded));
    assert.equal(again.has('h:café-3/é🙂3'), false);
  });

  it('leaves headroom before the snapshot for a caller to frame it without copying', () => {
    const index = indexOf(corpus(100));
    const plain = index.serialize();
    const framed = index.serialize(48);
    assert.equal(framed.length, plain.length + 48);
    assert.ok(framed.subarray(48).equals(plain));
    assert.deepEqual(allResults(bm25Engine.load(framed.subarray(48))), allResults(index));
    assert.throws(() => index.serialize(6), RangeError);
  });

  it('keeps every section of its snapshot apart: a damaged table is computed again alone, a damaged index refused', () => {
    const index = indexOf(corpus(300));
    const snapshot = index.serialize();
    const { sections } = readSections(snapshot, snapshot.subarray(0, 8));
    assert.deepEqual(bm25Engine.load(snapshot).rebuilt, [], 'a sound snapshot rebuilds nothing');
    const damaged = (name: string): Buffer => {
      const copy = Buffer.from(snapshot);
      const section = sections.get(name) as Section;
      const at = section.bytes.byteOffset - snapshot.byteOffset + (section.bytes.length >> 1);
      copy[at] = (copy[at] as number) ^ 0x40;
      return copy;
    };
    for (const table of ['id-table', 'id-ranks', 'term-table']) {
      const loaded = bm25Engine.load(damaged(table));
      assert.deepEqual(loaded.rebuilt, [table], `${table}: only it is computed again`);
      assert.deepEqual(allResults(loaded), allResults(index), `${table}: the same answers`);
      for (const id of index.ids()) assert.equal(loaded.has(id), true, id);
      assert.deepEqual(allResults(bm25Engine.load(loaded.serialize())), allResults(index), `${table}: written sound again`);
    }
    for (const name of ['meta', 'id-ends', 'ids', 'lengths', 'term-ends', 'terms', 'df', 'offsets'])
      assert.throws(() => bm25Engine.load(damaged(name)), CorruptIndexError, `${name}: the index itself, refused whole`);
  });

  it('checks its postings by blocks as a search first reads them: a damaged block is found before any answer is made of it', () => {
    const docs: Record<string, string> = {};
    for (let i = 0; i < 24_000; i++) docs[`n:note-${i}`] = `alpha${i % 7} word${i} shared zulu${i % 11}`;
    const index = indexOf(docs);
    const snapshot = index.serialize();
    const { sections } = readSections(snapshot, snapshot.subarray(0, 8));
    const postings = sections.get('postings') as Section;
    assert.ok(postings.bytes.length > 2 * 64 * 1024, `postings of ${postings.bytes.length} bytes span several blocks`);
    const section = (name: string) => sections.get(name)?.bytes as Buffer;
    const u32 = (bytes: Buffer) => new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    const terms = new TermList(section('terms'), u32(section('term-ends')));
    const offsets = u32(section('offsets'));
    const termNumber = (term: string) => Array.from({ length: terms.length }, (_, t) => terms.at(t)).indexOf(term);
    // 'alpha0' sorts first and 'zulu0' last: their postings lie blocks apart.
    const [first, last] = [termNumber('alpha0'), termNumber('zulu0')];
    assert.ok((offsets[last] as number) - (offsets[first + 1] as number) > 64 * 1024, 'the two terms are blocks apart');
    const damaged = Buffer.from(snapshot);
    const at = postings.bytes.byteOffset - snapshot.byteOffset + (offsets[first] as number);
    damaged[at] = (damaged[at] as number) ^ 0x40;

    const loaded = bm25Engine.load(damaged);
    assert.deepEqual(loaded.rebuilt, [], 'loaded: its postings are not read yet');
    assert.deepEqual(ids(loaded, 'zulu0', { limit: 1000 }), ids(index, 'zulu0', { limit: 1000 }), 'a term in a sound block answers as before');
    assert.throws(() => loaded.search('alpha0', { limit: 10 }), CorruptIndexError, 'a term in the damaged block: refused, not answered');
    assert.throws(() => loaded.verify(), CorruptIndexError, 'verify checks every block');
    assert.throws(() => bm25Engine.load(damaged).serialize(), CorruptIndexError, 'never written into a new snapshot under a fresh checksum');
    const sound = bm25Engine.load(snapshot);
    sound.verify();
    assert.deepEqual(allResults(sound), allResults(index));

    // A snapshot written before the blocks (no companion section): its postings are checked whole, when first read.
    const kept = [...sections.values()].filter((s) => s.name !== 'postings~crc');
    const older = writeSections(
      snapshot.subarray(0, 8),
      snapshot.readUInt32LE(8),
      kept.map((s) => ({ name: s.name, version: s.version, bytes: s.bytes.length, write: (into: Buffer) => s.bytes.copy(into) })),
    );
    assert.deepEqual(allResults(bm25Engine.load(older)), allResults(index));
    const olderSections = readSections(older, older.subarray(0, 8)).sections;
    const olderAt = (olderSections.get('postings') as Section).bytes.byteOffset - older.byteOffset + (offsets[first] as number);
    older[olderAt] = (older[olderAt] as number) ^ 0x40;
    assert.throws(() => bm25Engine.load(older).search('zulu0', { limit: 10 }), CorruptIndexError, 'any term: the postings are one block');
  });

  it('computes the ranks of a snapshot written before them, and breaks ties by id as before', () => {
    // Ties everywhere: one word, documents of one length, ids indexed out of their order.
    const ids = ['n:b', 'h:z/1', 'n:a', 'b:x', 'n:é', 'n:😀', 'n:\uE000', 'h:c/2'];
    const index = bm25Engine.create();
    for (const id of ids) index.add(id, 'same words here');
    const snapshot = index.serialize();
    const { version, sections } = readSections(snapshot, snapshot.subarray(0, 8));
    const kept = [...sections.values()].filter((section) => section.name !== 'id-ranks');
    const older = writeSections(
      snapshot.subarray(0, 8),
      version,
      kept.map((section) => ({ name: section.name, version: section.version, bytes: section.bytes.length, write: (into: Buffer) => section.bytes.copy(into) })),
    );
    const loaded = bm25Engine.load(older);
    assert.deepEqual(loaded.rebuilt, ['id-ranks']);
    const order = [...ids].sort();
    assert.deepEqual(
      loaded.search('words', { limit: ids.length }).map((hit) => hit.id),
      order,
      'equal scores in the order of the ids as strings',
    );
    assert.deepEqual(
      loaded.search('words', { limit: 3 }).map((hit) => hit.id),
      order.slice(0, 3),
    );
  });

  it('reads the snapshots of format 1 (one SHA-256, no tables), computing the tables', async () => {
    const frame = await readFile(new URL('../../fixtures/index-format-1/old/_index/20261128T050223067Z-fixture1.snapshot', import.meta.url));
    const engineAt = 44 + frame.readUInt32LE(8); // frame 1: prefix, JSON header, no vectors
    const old = frame.subarray(engineAt);
    assert.equal(old.readUInt32LE(8), 1, 'the fixture is of format 1');
    const loaded = bm25Engine.load(old);
    assert.deepEqual(loaded.rebuilt, ['format-1']);
    assert.equal(loaded.size, 80);
    assert.equal(loaded.has('n:20261113T050222_claude_question_m200001o.md'), true);
    const again = bm25Engine.load(loaded.serialize());
    assert.deepEqual(again.rebuilt, []);
    assert.deepEqual(allResults(again), allResults(loaded));
    const flipped = Buffer.from(old);
    flipped[flipped.length >> 1] = (flipped[flipped.length >> 1] as number) ^ 0x10;
    assert.throws(() => bm25Engine.load(flipped), CorruptIndexError, 'its checksum still holds');
  });

  it('lists ids by prefix without the others', () => {
    const index = indexOf({ 'n:a': 'one', 'h:c/b': 'two', 'n:é': 'three', 'b:x': 'four' });
    const loaded = bm25Engine.load(index.serialize());
    loaded.add('n:new', 'five');
    loaded.remove('n:a');
    assert.deepEqual([...loaded.ids('n:')].sort(), ['n:new', 'n:é']);
    assert.deepEqual([...loaded.ids('h:')], ['h:c/b']);
    assert.deepEqual([...loaded.ids()].sort(), ['b:x', 'h:c/b', 'n:new', 'n:é']);
  });

  it('names the engine', () => {
    assert.equal(bm25Engine.name, 'bm25-v1');
  });
});

describe('bm25 helpers', () => {
  /** Plain optimal-string-alignment distance, the reference for the banded, bounded one. */
  function reference(a: string, b: string): number {
    const d = Array.from({ length: a.length + 1 }, (_, i) => Array.from({ length: b.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)));
    for (let i = 1; i <= a.length; i++) {
      for (let j = 1; j <= b.length; j++) {
        const row = d[i] as number[];
        const up = d[i - 1] as number[];
        let v = Math.min((up[j] as number) + 1, (row[j - 1] as number) + 1, (up[j - 1] as number) + (a[i - 1] === b[j - 1] ? 0 : 1));
        if (i > 1 && j > 1 && a[i - 1] === b[j - 2] && a[i - 2] === b[j - 1]) v = Math.min(v, ((d[i - 2] as number[])[j - 2] as number) + 1);
        row[j] = v;
      }
    }
    return (d[a.length] as number[])[b.length] as number;
  }

  it('bounded edit distance agrees with the full computation within the bound', () => {
    let seed = 3;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const word = (): string => Array.from({ length: 1 + Math.floor(next() * 8) }, () => 'abc'[Math.floor(next() * 3)]).join('');
    for (let k = 0; k < 5000; k++) {
      const [a, b] = [word(), word()];
      const exact = reference(a, b);
      for (const max of [1, 2]) {
        const bounded = boundedEditDistance(a, b, max);
        assert.equal(bounded <= max ? bounded : 'beyond', exact <= max ? exact : 'beyond', `${a} ${b} ${max}`);
      }
    }
    assert.equal(boundedEditDistance('databse', 'database', 1), 1);
    assert.equal(boundedEditDistance('teh', 'the', 1), 1);
  });

  /** A TermList as a snapshot loads it: bytes only, each term decoded when first read. */
  const bytesOnly = (terms: string[]): TermList => {
    const made = TermList.of(terms);
    return new TermList(made.bytes, made.ends);
  };

  it('the fuzzy scan finds exactly the terms within the bound, skipping dead prefixes', () => {
    let seed = 7;
    const next = (): number => (seed = (seed * 1103515245 + 12345) % 2147483648) / 2147483648;
    const word = (alphabet: string[]): string =>
      Array.from({ length: 1 + Math.floor(next() * 9) }, () => alphabet[Math.floor(next() * alphabet.length)]).join('');
    for (let k = 0; k < 300; k++) {
      // Dense runs of shared prefixes (as ids are) and a few accented or astral characters.
      const alphabet = [...(k % 3 === 0 ? 'ab' : k % 3 === 1 ? 'abcd' : 'aé😀b')];
      const terms = [...new Set(Array.from({ length: 1 + Math.floor(next() * 400) }, () => word(alphabet)))].sort();
      const form = word(alphabet);
      for (const max of [1, 2]) {
        const expected = terms.filter((t) => t[0] === form[0] && t !== form && reference(t, form) <= max);
        for (const list of [terms, bytesOnly(terms)]) {
          const found: string[] = [];
          forEachFuzzy(list, form, max, (t) => found.push(t));
          assert.deepEqual(found, expected, `${form} ${max}`);
        }
      }
    }
  });

  it('prefixRange finds exactly the terms that start with the prefix', () => {
    const sorted = ['auth', 'authen', 'authent', 'author', 'autz', 'b'];
    const [from, to] = prefixRange(sorted, 'authe');
    assert.deepEqual(sorted.slice(from, to), ['authen', 'authent']);
    assert.deepEqual(prefixRange(sorted, 'zzz'), [6, 6]);
  });
});
