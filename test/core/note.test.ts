import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { formatNoteFile, parseNoteFile } from '../../src/core/note/note-file.js';
import { compareNewestFirst, diffListings, formatNoteName, type NoteName, parseNoteName, sortOldestFirst } from '../../src/core/note-name.js';
import { toAgentName } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { isLiveMemError } from '../../src/shared/errors.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../src/storage/list.js';
import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { counting, makeCore, owner, steppingClock } from '../helpers/core.js';
import { tempDir } from '../helpers/tmp.js';

describe('note names', () => {
  it('formats {YYYYMMDDTHHMMSS}_{agent}_{category}_{id8}.md and parses it back', () => {
    const name = formatNoteName(new Date('2026-02-20T18:05:12.345Z'), 'cline-dev', 'observation', 'abcdef');
    assert.equal(name, `20260220T180512_cline-dev_observation_${(345).toString(36)}abcdef.md`);
    const parsed = parseNoteName(name);
    assert.equal(parsed?.agent, 'cline-dev');
    assert.equal(parsed?.category, 'observation');
    assert.equal(parsed?.stamp, '20260220T180512');
  });

  it('sorts names written in the same second by millisecond', () => {
    const early = formatNoteName(new Date('2026-02-20T18:05:12.009Z'), 'a', 'todo', 'zzzzzz');
    const late = formatNoteName(new Date('2026-02-20T18:05:12.999Z'), 'a', 'todo', '000000');
    assert.ok(parseNoteName(early)!.id < parseNoteName(late)!.id);
  });

  it('sorts a listing oldest first as a whole sort would: same-second names by millisecond, any input order', () => {
    const agents = ['zed', 'ada', 'mo_x', 'bob'];
    const names = Array.from({ length: 200 }, (_, i) => {
      const time = new Date(Date.UTC(2026, 1, 20, 18, 5, Math.floor(i / 7), (i * 37) % 1000));
      return parseNoteName(formatNoteName(time, agents[i % agents.length] as string, 'todo', (i * 7919).toString(36).padStart(6, '0'))) as NoteName;
    });
    const expected = [...names].sort((a, b) => compareNewestFirst(b, a)).map((name) => name.filename);
    // As a listing gives them: key order, where agents decide within a second.
    const keyOrder = [...names].sort((a, b) => (a.filename < b.filename ? -1 : 1));
    assert.notDeepEqual(
      keyOrder.map((name) => name.filename),
      expected,
      'the case this is for: key order is not time order',
    );
    assert.deepEqual(
      sortOldestFirst(keyOrder).map((name) => name.filename),
      expected,
    );
    // Any other order is sorted whole.
    const shuffled = [...names].reverse();
    assert.deepEqual(
      sortOldestFirst(shuffled).map((name) => name.filename),
      expected,
    );
    assert.deepEqual(sortOldestFirst([]), []);
  });

  it('tells two listings apart by the names added and removed, same-second twins included', () => {
    let seed = 11;
    const random = () => (seed = (seed * 1_103_515_245 + 12_345) % 2 ** 31) / 2 ** 31;
    // Few seconds, few ids, several agents: names that tie on stamp and id and differ by agent are common.
    const pool = Array.from({ length: 120 }, (_, i) => {
      const time = new Date(Date.UTC(2026, 1, 20, 18, 5, Math.floor(random() * 4)));
      return parseNoteName(formatNoteName(time, ['ada', 'bob', 'cy'][i % 3] as string, 'todo', String(Math.floor(random() * 3)).repeat(6))) as NoteName;
    });
    const unique = [...new Map(pool.map((name) => [name.filename, name])).values()];
    for (let round = 0; round < 50; round++) {
      const before = unique.filter(() => random() < 0.6);
      const after = unique.filter(() => random() < 0.6);
      const { added, removed } = diffListings(sortOldestFirst([...before]), sortOldestFirst([...after].reverse()));
      const names = (list: NoteName[]) => list.map((name) => name.filename).sort();
      const has = (list: NoteName[]) => new Set(list.map((name) => name.filename));
      assert.deepEqual(names(added), names(after.filter((name) => !has(before).has(name.filename))));
      assert.deepEqual(names(removed), names(before.filter((name) => !has(after).has(name.filename))));
    }
  });

  it('parses names written by the Python server, agents with underscores included', () => {
    const parsed = parseNoteName('20260220T180512_my_agent_decision_a3f8b2c1.md');
    assert.equal(parsed?.agent, 'my_agent');
    assert.equal(parsed?.category, 'decision');
    assert.equal(parseNoteName('.keep'), null);
    assert.equal(parseNoteName('notes.md'), null);
  });

  it('reduces agent names to a filename-safe form', () => {
    assert.equal(toAgentName('Cline Dev'), 'Cline-Dev');
    assert.equal(toAgentName('../../etc'), 'etc');
    assert.equal(toAgentName('Émile_Zola/2'), 'Emile-Zola-2');
    assert.equal(toAgentName('   '), 'agent');
    assert.equal(toAgentName('x'.repeat(100)).length, 64);
  });
});

describe('note files', () => {
  it('writes the seed format byte for byte', () => {
    const text = formatNoteFile(
      { timestamp: '2026-02-20T18:05:12Z', agent: 'cline-dev', category: 'observation', tags: ['auth', 'module'], space_id: 'projet-alpha' },
      "Le module d'authentification fonctionne correctement.",
    );
    assert.equal(
      text,
      '---\ntimestamp: "2026-02-20T18:05:12Z"\nagent: "cline-dev"\ncategory: "observation"\ntags: ["auth", "module"]\nspace_id: "projet-alpha"\n---\n\nLe module d\'authentification fonctionne correctement.',
    );
    const parsed = parseNoteFile(text);
    assert.deepEqual(parsed.tags, ['auth', 'module']);
    assert.equal(parsed.content, "Le module d'authentification fonctionne correctement.");
  });

  it('round-trips awkward content and tags', () => {
    const content = '---\nnot: front-matter\n---\n"quotes" \\ back\\slash\n\ttab\u2028';
    const text = formatNoteFile({ timestamp: 't', agent: 'a', category: 'todo', tags: ['x"y', 'ü'], space_id: 's' }, content);
    const parsed = parseNoteFile(text);
    assert.equal(parsed.content, content);
    assert.deepEqual(parsed.tags, ['x"y', 'ü']);
  });

  it('treats a file without front-matter as all content', () => {
    assert.deepEqual(parseNoteFile('just text'), { content: 'just text' });
    assert.equal(parseNoteFile('---\n: : bad yaml [\n---\nbody').content, '---\n: : bad yaml [\n---\nbody');
  });
});

describe('note service', () => {
  const setup = async () => {
    const clock = steppingClock();
    const storage = counting(createMemoryDriver());
    const { core } = makeCore({ storage, clock });
    await core.spaces.create(owner, { space_id: 'proj' });
    return { core, storage, clock };
  };

  it('reads newest first, with category, agent and since filters answered from names', async () => {
    const { core, clock } = await setup();
    for (let i = 0; i < 30; i++) {
      await core.notes.write(owner, {
        space_id: 'proj',
        category: i % 3 === 0 ? 'decision' : 'observation',
        content: `note ${i}`,
        agent: i % 2 ? 'odd' : 'even',
      });
    }
    const all = await core.notes.read(owner, { space_id: 'proj', limit: 1000 });
    assert.equal(all.total, 30);
    assert.deepEqual(
      all.notes.slice(0, 3).map((n) => n.content),
      ['note 29', 'note 28', 'note 27'],
    );
    const decisions = await core.notes.read(owner, { space_id: 'proj', category: 'decision', agent: 'even', limit: 100 });
    assert.deepEqual(
      decisions.notes.map((n) => n.content),
      ['note 24', 'note 18', 'note 12', 'note 6', 'note 0'],
    );
    const since = all.notes.find((n) => n.content === 'note 25')!.timestamp;
    const recent = await core.notes.read(owner, { space_id: 'proj', since });
    assert.deepEqual(
      recent.notes.map((n) => n.content),
      ['note 29', 'note 28', 'note 27', 'note 26', 'note 25'],
    );
    clock.set('2030-01-01T00:00:00Z');
    assert.equal((await core.notes.read(owner, { space_id: 'proj', since: '2029-12-31T00:00:00Z' })).total, 0);

    // Paging: `before` a page's last filename gives the next page, to the oldest note, with the filters kept.
    const pages: string[][] = [];
    let before: string | undefined;
    for (;;) {
      const page = await core.notes.read(owner, { space_id: 'proj', limit: 12, ...(before ? { before } : {}) });
      pages.push(page.notes.map((n) => n.content));
      if (!page.has_more) break;
      before = page.notes.at(-1)!.filename;
    }
    assert.deepEqual(
      pages.flat(),
      all.notes.map((n) => n.content),
    );
    assert.deepEqual(
      pages.map((p) => p.length),
      [12, 12, 6],
    );
    const olderDecisions = await core.notes.read(owner, { space_id: 'proj', category: 'decision', agent: 'even', before: decisions.notes[1]!.filename });
    assert.deepEqual(
      olderDecisions.notes.map((n) => n.content),
      ['note 12', 'note 6', 'note 0'],
    );
    await assert.rejects(core.notes.read(owner, { space_id: 'proj', before: 'not-a-note' }), (error) => isLiveMemError(error, 'invalid_input'));
  });

  it('reads at most `limit` note bodies, however many notes exist', async () => {
    const { core: writer, storage, clock } = await setup();
    for (let i = 0; i < 300; i++) await writer.notes.write(owner, { space_id: 'proj', category: 'todo', content: `n${i}` });
    // Read by another process: the writer already knows its own notes' texts (see below).
    const { core } = makeCore({ storage, clock });
    storage.reset();
    const page = await core.notes.read(owner, { space_id: 'proj', limit: 50 });
    assert.equal(page.total, 50);
    assert.equal(page.has_more, true);
    assert.equal(storage.counts.get, 50);
    storage.reset();
    const filtered = await core.notes.read(owner, { space_id: 'proj', limit: 10, agent: 'nobody' });
    assert.equal(filtered.total, 0);
    assert.equal(storage.counts.get ?? 0, 0);
  });

  it('reads no file for the notes it wrote itself: a search or a live_read of them answers from what was stored', async () => {
    const { core, storage } = await setup();
    const tags = ['ci', 'Deploy'];
    for (let i = 0; i < 30; i++)
      await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `step ${i}: the pipeline caches layers`, tags });
    storage.reset();
    const page = await core.notes.read(owner, { space_id: 'proj', limit: 10 });
    const found = await core.recall.search(owner, { space_id: 'proj', query: 'pipeline layers', limit: 5 });
    assert.equal(storage.counts.get ?? 0, 0);
    // The same answers as a process that reads the files.
    const other = makeCore({ storage }).core;
    assert.deepEqual(page, await other.notes.read(owner, { space_id: 'proj', limit: 10 }));
    const again = await other.recall.search(owner, { space_id: 'proj', query: 'pipeline layers', limit: 5 });
    assert.deepEqual(found.results, again.results);
    assert.deepEqual(page.notes[0]?.tags, ['ci', 'Deploy']);
    assert.ok((storage.counts.get ?? 0) >= 10, 'the other process read the files');
  });

  it('keeps each note it wrote exactly as a read of its file finds it, whatever the text', async () => {
    const { core, storage } = await setup();
    const contents = [
      '\nstarts with a blank line',
      'a rule\n---\nbelow it: not front-matter',
      '---\ntimestamp: "1999-01-01T00:00:00Z"\n---\nlooks like a header',
      'ends with blank lines\n\n\n',
      'trailing spaces   ',
      'quotes " and \\ backslashes \\n, tabs\tand ünïcödé 🚀',
      'windows\r\nline endings\r\n',
    ];
    // Tags as callers send them: untrimmed, repeated, empty, one comma-separated string, none.
    const tagSets: Array<string | string[] | undefined> = [['ops', 'Été 2026'], [' a ', 'a', ''], 'x, y', [], undefined];
    for (const [i, content] of contents.entries())
      await core.notes.write(owner, { space_id: 'proj', category: 'observation', content, tags: tagSets[i % tagSets.length] });
    storage.reset();
    const mine = await core.notes.read(owner, { space_id: 'proj', limit: 50 });
    assert.equal(storage.counts.get ?? 0, 0, 'answered from what it wrote');
    const read = await makeCore({ storage }).core.notes.read(owner, { space_id: 'proj', limit: 50 });
    assert.ok((storage.counts.get ?? 0) >= contents.length, 'the other process read the files');
    assert.deepEqual(mine, read);
    assert.equal(mine.notes.length, contents.length);
  });

  it('searches case-insensitively in content and tags, stopping early', async () => {
    const { core, storage } = await setup();
    for (let i = 0; i < 200; i++) {
      await core.notes.write(owner, {
        space_id: 'proj',
        category: 'insight',
        content: i % 10 === 0 ? `Found a NEEDLE ${i}` : `hay ${i}`,
        tags: i === 5 ? 'needle-tag' : '',
      });
    }
    storage.reset();
    const found = await core.notes.search(owner, { space_id: 'proj', query: 'needle', limit: 3 });
    assert.deepEqual(
      found.notes.map((n) => n.content),
      ['Found a NEEDLE 190', 'Found a NEEDLE 180', 'Found a NEEDLE 170'],
    );
    assert.equal(found.has_more, true);
    assert.ok((storage.counts.get ?? 0) < 200, `read ${storage.counts.get} bodies`);
    const byTag = await core.notes.search(owner, { space_id: 'proj', query: 'NEEDLE-TAG' });
    assert.deepEqual(
      byTag.notes.map((n) => n.content),
      ['hay 5'],
    );
  });

  it('never overwrites a note: a name collision (two processes, one millisecond, one id) is retried with a new id', async () => {
    const storage = createMemoryDriver();
    const clock = () => new Date('2026-02-20T18:00:00.000Z');
    const ids = ['aaaaaa', 'bbbbbb'];
    const { createCore } = await import('../../src/core/core.js');
    const one = createCore({ storage, clock, randomId: () => 'aaaaaa' });
    const other = createCore({ storage, clock, randomId: () => ids.shift() ?? 'cccccc' });
    await one.spaces.create(owner, { space_id: 'proj' });
    const a = await one.notes.write(owner, { space_id: 'proj', category: 'todo', content: 'first' });
    const b = await other.notes.write(owner, { space_id: 'proj', category: 'todo', content: 'second' });
    assert.notEqual(a.filename, b.filename);
    assert.match(b.filename, /bbbbbb\.md$/);
    assert.equal((await one.notes.read(owner, { space_id: 'proj' })).total, 2);
  });

  it('names notes in write order within a process, even several in one millisecond', async () => {
    const storage = createMemoryDriver();
    const clock = () => new Date('2026-02-20T18:00:00.000Z');
    const ids = ['zzzzzz', 'mmmmmm', '000000'];
    const { createCore } = await import('../../src/core/core.js');
    const core = createCore({ storage, clock, randomId: () => ids.shift() ?? '111111' });
    await core.spaces.create(owner, { space_id: 'proj' });
    for (const content of ['one', 'two', 'three']) await core.notes.write(owner, { space_id: 'proj', category: 'todo', content });
    const read = await core.notes.read(owner, { space_id: 'proj' });
    assert.deepEqual(
      read.notes.map((n) => n.content),
      ['three', 'two', 'one'],
    );
  });

  it('refuses bad input before writing anything', async () => {
    const { core, storage } = await setup();
    storage.reset();
    const bad = [
      { space_id: 'proj', category: 'nope', content: 'x' },
      { space_id: 'proj', category: 'todo', content: '' },
      { space_id: '-bad', category: 'todo', content: 'x' },
      { space_id: 'proj', category: 'todo', content: 'x', tags: Array.from({ length: 40 }, (_, i) => `t${i}`) },
    ];
    for (const input of bad) await assert.rejects(core.notes.write(owner, input), (e) => isLiveMemError(e, 'invalid_input'));
    assert.equal(storage.counts.put ?? 0, 0);
    const small = makeCore({ limits: { maxNoteChars: 10 } }).core;
    await small.spaces.create(owner, { space_id: 'p' });
    await assert.rejects(small.notes.write(owner, { space_id: 'p', category: 'todo', content: 'x'.repeat(11) }), /limit is 10/);
  });

  it('lets the local owner choose an agent name, but not a restricted caller', async () => {
    const { core } = await setup();
    const named = await core.notes.write(owner, { space_id: 'proj', category: 'todo', content: 'x', agent: 'Claude Code' });
    assert.equal(named.agent, 'Claude-Code');
    const token = { ...owner, agent: 'reviewer', canChooseAgent: false };
    const forced = await core.notes.write(token, { space_id: 'proj', category: 'todo', content: 'x', agent: 'someone-else' });
    assert.equal(forced.agent, 'reviewer');
  });
});

describe('notes into a space another process deletes', () => {
  /** A store without folders, like S3: the memory driver without its `removeFolder`. */
  const withoutFolders = (driver: StorageDriver): StorageDriver => {
    const { removeFolder: _folders, ...rest } = driver;
    return rest;
  };
  const KNOWN_MS = 150;
  const drivers: Array<[string, () => Promise<{ storage: StorageDriver; remove(): Promise<void> }>]> = [
    [
      'fs (folders)',
      async () => {
        const tmp = await tempDir();
        return { storage: createFsDriver(tmp.dir), remove: tmp.remove };
      },
    ],
    ['memory (folders)', async () => ({ storage: createMemoryDriver(), remove: async () => undefined })],
    ['no folders (as S3)', async () => ({ storage: withoutFolders(createMemoryDriver()), remove: async () => undefined })],
  ];
  for (const [name, open] of drivers) {
    it(`${name}: one request per note once the space is known, and a deleted space is never resurrected`, async () => {
      const { storage: raw, remove } = await open();
      try {
        const storage = counting(raw);
        const limits = { knownSpaceMs: KNOWN_MS };
        const { core: writer } = makeCore({ storage, limits });
        const { core: other } = makeCore({ storage: raw, limits }); // another process on the same store
        await other.spaces.create(owner, { space_id: 'doomed' });
        await writer.notes.write(owner, { space_id: 'doomed', category: 'todo', content: 'first: checks the space' });
        storage.reset();
        await writer.notes.write(owner, { space_id: 'doomed', category: 'todo', content: 'second: the space is known' });
        assert.deepEqual(storage.counts, { put: 1 });
        if (!raw.removeFolder) {
          // Known for a while only: past it, the space is checked again before the write.
          await new Promise((resolve) => setTimeout(resolve, KNOWN_MS + 20));
          storage.reset();
          await writer.notes.write(owner, { space_id: 'doomed', category: 'todo', content: 'third: checked again' });
          assert.deepEqual(storage.counts, { stat: 1, put: 1 });
        }

        await other.spaces.delete(owner, { space_id: 'doomed', confirm: true });
        await assert.rejects(writer.notes.write(owner, { space_id: 'doomed', category: 'todo', content: 'after the delete' }), (error) =>
          isLiveMemError(error, 'not_found'),
        );
        assert.deepEqual(await listKeys(raw, 'doomed/'), [], 'nothing written under the deleted space');
        assert.deepEqual((await other.spaces.list(owner)).spaces, []);

        // Created again by the other process: the writer's notes land in the new space.
        await other.spaces.create(owner, { space_id: 'doomed' });
        await writer.notes.write(owner, { space_id: 'doomed', category: 'todo', content: 'in the new space' });
        const read = await other.notes.read(owner, { space_id: 'doomed' });
        assert.deepEqual(
          read.notes.map((note) => note.content),
          ['in the new space'],
        );
      } finally {
        await remove();
      }
    });
  }

  it('no folders (as S3): a note written while the space is being deleted goes with it', async () => {
    const raw = withoutFolders(createMemoryDriver());
    const limits = { knownSpaceMs: KNOWN_MS };
    const { core: writer } = makeCore({ storage: raw, limits });
    const { core: other } = makeCore({ storage: raw, limits });
    await other.spaces.create(owner, { space_id: 'doomed' });
    await writer.notes.write(owner, { space_id: 'doomed', category: 'todo', content: 'known' });
    const deleting = other.spaces.delete(owner, { space_id: 'doomed', confirm: true });
    // The meta is gone at once (memory), the last sweep comes after knownSpaceMs: this note still trusts the space.
    await new Promise((resolve) => setTimeout(resolve, 10));
    assert.equal(await raw.stat('doomed/_meta.json'), null);
    assert.equal((await writer.notes.write(owner, { space_id: 'doomed', category: 'todo', content: 'during the delete' })).status, 'created');
    await deleting;
    assert.deepEqual(await listKeys(raw, 'doomed/'), [], 'the last sweep took it');
  });

  it('refuses a note into a space that never existed without writing anything', async () => {
    const tmp = await tempDir();
    try {
      const storage = createFsDriver(tmp.dir);
      const { core } = makeCore({ storage });
      await assert.rejects(core.notes.write(owner, { space_id: 'nope', category: 'todo', content: 'x' }), (error) => isLiveMemError(error, 'not_found'));
      assert.deepEqual(await listKeys(storage, ''), []);
    } finally {
      await tmp.remove();
    }
  });
});

describe('note files written by other tools', () => {
  it('reads YAML front-matter that is not in our own one-JSON-value-per-line form', () => {
    const parsed = parseNoteFile('---\ntimestamp: 2026-02-20T18:05:12Z\nagent: cline\ncategory: todo\ntags:\n  - a\n  - b\nspace_id: s\n---\n\nbody');
    assert.equal(parsed.timestamp, '2026-02-20T18:05:12Z');
    assert.deepEqual(parsed.tags, ['a', 'b']);
    assert.equal(parsed.agent, 'cline');
    assert.equal(parsed.content, 'body');
    assert.deepEqual(parseNoteFile('---\ntags: "x, y"\n---\nz').tags, ['x', 'y']);
  });
});

describe('a first note to a space that does not exist (autoCreateSpaces)', () => {
  const coreWith = (autoCreateSpaces: 'on' | 'off' | 'auto') => createCore({ storage: createMemoryDriver(), autoCreateSpaces });
  const tokenWriter = { ...owner, canChooseAgent: false, localOwner: false };
  const note = { space_id: 'fresh', category: 'todo', content: 'first' };

  it('auto: creates it for the local owner only; off: never; on: for any writer', async () => {
    const auto = coreWith('auto');
    await assert.rejects(auto.notes.write(tokenWriter, note), (error) => isLiveMemError(error, 'not_found'));
    const made = await auto.notes.write(owner, note);
    assert.equal(made.space_created, true);
    assert.equal((await auto.spaces.info(owner, { space_id: 'fresh' })).owner, owner.agent);

    const off = coreWith('off');
    await assert.rejects(off.notes.write(owner, note), (error) => isLiveMemError(error, 'not_found'));
    await assert.rejects(off.spaces.info(owner, { space_id: 'fresh' }), (error) => isLiveMemError(error, 'not_found'));

    assert.equal((await coreWith('on').notes.write(tokenWriter, note)).space_created, true);
  });

  it('reads never create it', async () => {
    const core = coreWith('on');
    await assert.rejects(core.notes.read(owner, { space_id: 'fresh' }), (error) => isLiveMemError(error, 'not_found'));
    await assert.rejects(core.notes.search(owner, { space_id: 'fresh', query: 'x' }), (error) => isLiveMemError(error, 'not_found'));
    assert.deepEqual((await core.spaces.list(owner)).spaces, []);
  });

  it('ten first notes at once: one space, ten notes, one of them made it', async () => {
    const core = coreWith('on');
    const results = await Promise.all(Array.from({ length: 10 }, (_, i) => core.notes.write(owner, { ...note, content: `n${i}` })));
    assert.equal(results.filter((result) => result.space_created).length, 1);
    assert.equal((await core.notes.read(owner, { space_id: 'fresh' })).total, 10);
  });
});
