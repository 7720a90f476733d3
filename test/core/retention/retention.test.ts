/**
 * The retention check's pure parts (core/retention): what counts as an item, the one normal form
 * items are compared in, rarity by the window's and bank's own statistics, a window's verdicts, and
 * a stored record's `retention` read as input.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createAnalyzer } from '../../../src/search/analyze.js';
import { checkDigested, checkWindow, type NoteFate } from '../../../src/core/retention/check.js';
import { extractItems, type Item } from '../../../src/core/retention/items.js';
import { haystack } from '../../../src/core/retention/lookup.js';
import { documentsOf, rareWords } from '../../../src/core/retention/rarity.js';
import { checkRetention, readRetention, type RetentionEntry, retentionWithout } from '../../../src/core/retention/record.js';
import { valuesOf } from '../../../src/core/retention/units.js';

const analyzer = createAnalyzer();
const items = (text: string) => extractItems(text).items.map((item) => [item.kind, item.text]);
const found = (item: Item | undefined, text: string) => haystack(text, analyzer).has(item as Item);
const one = (text: string, kind: Item['kind']) => extractItems(text).items.find((item) => item.kind === kind);

describe('what counts as an item', () => {
  it('numbers with their units, dates and times, versions, paths, URLs, flags, hashes, identifiers and names', () => {
    assert.deepEqual(
      items('Deployed v2.3.1 on 2026-01-03 at 14:30; the API listens on port 8443 (see /etc/nginx/conf.d/app.conf and https://example.com/docs/).'),
      [
        ['version', 'v2.3.1'],
        ['date', '2026-01-03'],
        ['time', '14:30'],
        ['name', 'API'],
        ['number', '8443'],
        ['path', '/etc/nginx/conf.d/app.conf'],
        ['url', 'https://example.com/docs/'],
      ],
    );
    assert.deepEqual(items('Timeout 30 s (was 10s), max_tokens = 8,192; run `npm run build` with --dry-run, parsePlan() at a1b2c3d4e5, build kalnurbex-3.'), [
      ['number', '30 s'],
      ['number', '10s'],
      ['identifier', 'max_tokens'],
      ['number', '8,192'],
      ['identifier', 'npm run build'],
      ['flag', '--dry-run'],
      ['identifier', 'parsePlan'],
      ['hash', 'a1b2c3d4e5'],
      ['identifier', 'kalnurbex-3'],
    ]);
  });

  it('names: capitalised words in a sentence, acronyms, inner capitals, several in a row as one; not the first word of a sentence', () => {
    assert.deepEqual(items('Yesterday we met Jean-Pierre Dupont in New York about GitHub and the CPU. Then Max left.'), [
      ['name', 'Jean-Pierre Dupont'],
      ['name', 'New York'],
      ['name', 'GitHub'],
      ['name', 'CPU'],
      ['name', 'Max'],
    ]);
    assert.deepEqual(items('Max left early. I told Max.'), [['name', 'Max']], 'a first word is a name when the text capitalises it elsewhere too');
    assert.deepEqual(items('Deploys went fine. Nothing else.'), []);
  });

  it('a bare number is shown with what it counts; a year is a date; a list marker is nothing', () => {
    assert.deepEqual(items('1. We run 3 replicas since 2023.\n2. Then 12 more'), [
      ['number', '3 replicas'],
      ['date', '2023'],
      ['number', '12 more'],
    ]);
  });

  it('numbers compare by value and unit, whatever the format', () => {
    assert.deepEqual(valuesOf('1,000'), ['1000', '1']);
    assert.deepEqual(valuesOf('1.5'), ['1.5']);
    assert.deepEqual(valuesOf('1.234.567,8'), ['1234567.8']);
    assert.ok(found(one('a budget of 1,500 EUR', 'number'), 'budget: 1500 eur'));
    assert.ok(found(one('a budget of 1,500 EUR', 'number'), 'budget: 1.5k€'.replace('k€', ' thousand euros')));
    assert.ok(found(one('timeout 30 s', 'number'), 'a 30-second timeout'));
    assert.ok(found(one('timeout 30 s', 'number'), 'timeout: 30 seconds'));
    assert.ok(!found(one('timeout 30 s', 'number'), 'timeout: 30 ms'), 'another unit is another fact');
    assert.ok(found(one('we run 3 replicas', 'number'), 'three replicas run'));
    assert.ok(found(one('we have 2.5 million users', 'number'), '2,500,000 users'));
    assert.ok(found(one('Redis 7.2', 'number'), 'Redis v7.2'));
  });

  it('dates and times compare by their key: 8 May 2023 is 2023-05-08 is 05/08/2023; a month answers for its days', () => {
    const date = one('the launch on 8 May 2023', 'date');
    assert.equal(date?.key, '2023-05-08');
    assert.ok(found(date, 'launched 2023-05-08'));
    assert.ok(found(date, 'launched May 8th, 2023'));
    assert.ok(found(date, 'lancé le 8 mai 2023'));
    assert.ok(!found(date, 'launched 2023-05-09'));
    assert.ok(found(one('planned for May 2023', 'date'), 'planned: 2023-05-20'));
    assert.ok(found(one('at 2:30 pm', 'time'), 'at 14:30'));
    assert.ok(found(one('à 14h30', 'time'), 'at 2:30 PM'));
  });

  it('identifiers, paths and URLs compare whole, case and accents aside; hashes by their prefix; names word by word', () => {
    assert.ok(found(one('see https://www.example.com/docs/', 'url'), 'docs at example.com/docs'));
    assert.ok(found(one('written to /var/log/app.log', 'path'), 'logs: `/var/log/app.log`.'));
    assert.ok(!found(one('written to /var/log/app.log', 'path'), 'logs: /var/log/app.log.1'));
    assert.ok(found(one('commit a1b2c3d4e5f6', 'hash'), 'fixed in a1b2c3d'));
    assert.ok(found(one('owner Émilie Durand', 'name'), 'EMILIE DURAND owns it'));
    assert.ok(found(one('moved to PostgreSQL', 'name'), 'moved to Postgres'), 'a long word and its prefix');
    assert.ok(!found(one('met Kowalski', 'name'), 'met Kowal'));
  });
});

describe('rarity by the space’s own statistics', () => {
  it("a note's rare words are those no other note of the window and no section of the bank holds, longest first", () => {
    const notes = ['the ingest worker retries failures with backoff', 'the ingest worker is fine'].map((content) => ({
      content,
      words: extractItems(content).words,
    }));
    const [first, second] = rareWords(notes, documentsOf('# Bank\n\n## Queue\n\nfailures go to a queue\n'), analyzer);
    assert.deepEqual(
      first?.map((item) => item.text),
      ['backoff', 'retries'],
    );
    assert.deepEqual(second, [], 'words every other note or section holds are not rare');
  });

  it('simple inflections: a stem of the word is enough', () => {
    const [rare] = rareWords([{ content: 'the migration stalled', words: ['migration', 'stalled'] }], [], analyzer);
    const migration = rare?.find((item) => item.text === 'migration');
    assert.ok(found(migration, 'we migrated it'));
  });
});

describe('a window’s verdicts', () => {
  const notes = [
    { filename: 'n1.md', content: 'The API listens on port 8443 behind nginx.' },
    { filename: 'n2.md', content: 'Backups run nightly at 02:00 to s3://bk-prod/nightly with restic.' },
    { filename: 'n3.md', content: 'Backups now run at 03:30.' },
    { filename: 'n4.md', content: 'Small talk about the weather in Lisbon.' },
  ];
  const bank = '# Tech\n\n## Network\n\n- The API listens on port 443 behind nginx.\n\n## Backups\n\n- Backups run at 03:30.\n';
  const fates: NoteFate[] = [
    { note: 'n1.md', status: 'integrated', into: ['tech.md#Tech > Network'] },
    { note: 'n2.md', status: 'superseded', by: 'n3.md' },
    { note: 'n3.md', status: 'integrated', into: ['tech.md#Tech > Backups'] },
    { note: 'n4.md', status: 'discarded' },
  ];
  const sections: Record<string, string> = {
    'n1.md': bank.slice(bank.indexOf('## Network'), bank.indexOf('## Backups')),
    'n3.md': bank.slice(bank.indexOf('## Backups')),
  };
  const check = () => checkWindow({ notes, fates, before: [], after: [bank], cited: (note) => [sections[note] ?? ''] });

  it('integrated: each item looked for in what the plan cites it for, then the whole bank; what is not found is named', () => {
    const [n1] = check().entries;
    assert.deepEqual(n1, { note: 'n1.md', status: 'partly_retained', items: 5, missing: [{ kind: 'number', text: '8443' }] });
    // A small number the bank holds only elsewhere, without the word it counts, is found only in what the note is cited for.
    const counted = { filename: 'n5.md', content: 'We run 3 replicas of the gateway.' };
    const bankWith3 = '# Tech\n\n## Gateway\n\n- the gateway runs replicas\n\n## Other\n\n- 3 teams\n';
    const verdict = (cited: string) =>
      checkWindow({
        notes: [counted],
        fates: [{ note: 'n5.md', status: 'integrated', into: ['t.md#Gateway'] }],
        before: [],
        after: [bankWith3],
        cited: () => [cited],
      }).entries[0] as RetentionEntry;
    assert.deepEqual(verdict('- the gateway runs replicas').missing, [{ kind: 'number', text: '3 replicas' }]);
    assert.equal(verdict('- 3 gateway replicas').status, 'retained');
  });

  it('superseded: the successor carries its subject (values may change), else it is flagged; discarded: let go', () => {
    const { entries, gaps } = check();
    assert.equal(entries[1]?.status, 'partly_retained');
    assert.deepEqual(
      entries[1]?.missing?.map((item) => item.text),
      ['s3://bk-prod/nightly', 'nightly', 'restic'],
    );
    assert.ok(!entries[1]?.missing?.some((item) => item.kind === 'time'), "02:00 is replaced by the successor's 03:30");
    assert.equal(entries[2]?.status, 'retained');
    assert.equal(entries[3]?.status, 'let_go');
    assert.deepEqual(
      gaps.map((gap) => gap.note),
      ['n1.md', 'n2.md'],
      'a discarded note is no gap',
    );
  });

  it('a note split across two sections is retained when both are cited', () => {
    const note = { filename: 'n.md', content: 'The ingest worker retries 3 times with a 250 ms backoff; failures go to the dead-letter queue dlq-ingest.' };
    const sections: Record<string, string> = {
      'a.md#Workers': '## Workers\n\n- ingest worker: retries 3 times, backoff 250 ms\n',
      'a.md#Queues': '## Queues\n\n- failures land in the dead-letter queue dlq-ingest\n',
    };
    const fate = (into: string[]): NoteFate[] => [{ note: 'n.md', status: 'integrated', into }];
    const run = (into: string[]) =>
      checkWindow({
        notes: [note],
        fates: fate(into),
        before: [],
        after: into.map((i) => sections[i] as string),
        cited: () => into.map((i) => sections[i] as string),
      });
    assert.equal(run(['a.md#Workers', 'a.md#Queues']).entries[0]?.status, 'retained');
    assert.equal(run(['a.md#Workers']).entries[0]?.status, 'partly_retained', 'one section alone lacks the queue');
  });

  it('wording: one passage cited for a note of everyday words holds half its content words, else it is partly retained', () => {
    const note = { filename: 'n.md', content: "[3 July 2023] Thanks! Yeah, I made this bowl in my class. It took some work, but I'm pretty proud of it." };
    // The bank already speaks of bowls, classes and pride: the note has no rare word, and each of its words is somewhere.
    const before = ['## Pottery\n\n- a bowl\n\n- the class\n\n- proud'];
    const verdict = (cited: string) =>
      checkWindow({
        notes: [note],
        fates: [{ note: 'n.md', status: 'integrated', into: ['p.md#Days'] }],
        before,
        after: [...before, cited],
        cited: () => [cited],
      }).entries[0] as RetentionEntry;
    const paraphrased = verdict('## 3 July 2023\n\n- Mel is proud of the bowl she made in her pottery class.\n- Caroline asked about the class.\n');
    assert.equal(paraphrased.status, 'retained', JSON.stringify(paraphrased));
    // Cut to its first words, its content words only in the lines written for other notes.
    const cut = verdict(
      '## 3 July 2023\n\n- Thanks! Yeah, I made this …\n- Caroline: that bowl looks great\n- Caroline: your class sounds fun\n- Caroline: be proud!\n',
    );
    assert.equal(cut.status, 'partly_retained', JSON.stringify(cut));
    // The passage saying most of it (the first to hold one of its words) has the bowl: one of three.
    assert.deepEqual(cut.missing?.map((item) => item.text).sort(), ['class', 'proud']);
    // A negation's stem is no content word: "won't" says nothing a paraphrase must keep.
    assert.deepEqual(extractItems("It won't be easy, I didn't know").words, ['easy', 'know']);
  });

  it('a compaction digest: every item of its section but rare words, in the digest or the file', () => {
    const before = '## Ops\n\n- 2026-01-05 moved the API to port 8443 (ticket OPS-1234), owner Kowalski\n';
    const [kept, lost] = checkDigested(
      [
        { filename: 'p.md', path: ['Ops'], before, after: '## Ops\n\n- 2026-01-05: API on 8443, OPS-1234, Kowalski\n' },
        { filename: 'p.md', path: ['Ops'], before, after: '## Ops\n\n- API moved\n' },
      ],
      '# P\n',
    );
    assert.equal(kept?.entry.status, 'retained');
    assert.equal(lost?.entry.status, 'partly_retained', 'the name API is kept');
    assert.deepEqual(
      lost?.lost.map((item) => item.text),
      ['2026-01-05', '8443', 'OPS-1234', 'Kowalski'],
    );
  });
});

describe('a record’s retention is input', () => {
  const record = { kind: 'consolidation' as const, notes: new Set(['a.md', 'b.md']), written: new Set(['x.md']) };

  it('accepts entries for its own notes; refuses a stranger, a duplicate, a bad status or item', () => {
    checkRetention(undefined, record);
    checkRetention([{ note: 'a.md', status: 'partly_retained', items: 3, missing: [{ kind: 'number', text: '8443' }] }], record);
    assert.throws(() => checkRetention([{ note: 'z.md', status: 'retained', items: 0 }], record), /not one of its notes/);
    assert.throws(
      () =>
        checkRetention(
          [
            { note: 'a.md', status: 'retained', items: 0 },
            { note: 'a.md', status: 'retained', items: 0 },
          ],
          record,
        ),
      /or twice/,
    );
    assert.throws(() => checkRetention([{ note: 'a.md', status: 'kept', items: 0 }], record), /malformed/);
    assert.throws(() => checkRetention([{ note: 'a.md', status: 'retained', items: 1, missing: [{ kind: 'spell', text: 'x' }] }], record), /malformed/);
    assert.throws(() => checkRetention({}, record), /not a list/);
    const compaction = { ...record, kind: 'compaction' as const };
    checkRetention(
      [{ filename: 'x.md', path: ['A'], status: 'partly_retained', items: 2, missing: [{ kind: 'name', text: 'Kowalski' }], to_meet_budget: true }],
      compaction,
    );
    assert.throws(() => checkRetention([{ filename: 'y.md', path: [], status: 'retained', items: 0 }], compaction), /does not write/);
  });

  it('reads what is well formed, and nothing from a record that has none; a forget takes its notes out', () => {
    assert.deepEqual(readRetention(undefined), []);
    assert.deepEqual(readRetention([{ note: 'a.md', status: 'retained', items: 1 }, { note: 'b.md', status: '??' }, 'junk']), [
      { note: 'a.md', status: 'retained', items: 1 },
    ]);
    assert.deepEqual(
      retentionWithout(
        [
          { note: 'a.md', status: 'retained', items: 1 },
          { note: 'b.md', status: 'retained', items: 2 },
        ],
        new Set(['a.md']),
      ),
      [{ note: 'b.md', status: 'retained', items: 2 }],
    );
  });
});
