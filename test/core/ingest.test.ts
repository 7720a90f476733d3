/**
 * `ingest` (core/note/ingest.ts): notes written with their original times, named from what they
 * hold, so a re-run writes nothing twice; every entry checked before the first write; owner or
 * admin only. The formats' parsers (ingest-formats.ts) on the fixtures of test/fixtures/ingest.
 */
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { describe, it } from 'node:test';
import type { Caller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import type { IngestEntry, IngestItem } from '../../src/core/note/ingest.js';
import { parseTimestamp } from '../../src/core/note/ingest-entry.js';
import { jsonlEntries, markdownEntry, mcpMemoryEntries } from '../../src/core/note/ingest-formats.js';
import { parseNoteFile } from '../../src/core/note/note-file.js';
import { parseNoteName } from '../../src/core/note-name.js';
import { isLiveMemError } from '../../src/shared/errors.js';
import { spaceKeys } from '../../src/core/layout.js';
import { acquireLease } from '../../src/storage/lease.js';
import { listKeys } from '../../src/storage/list.js';
import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { scenarios } from '../../fixtures/llm/scenarios.js';
import { owner, steppingClock } from '../helpers/core.js';
import { makeS3Harness, requireS3OrSkip } from '../helpers/s3.js';
import { startScriptedLlm } from '../helpers/scripted-llm.js';

const FIXTURES = new URL('../fixtures/ingest/', import.meta.url);
const fixtureLines = async (name: string) => (await readFile(new URL(name, FIXTURES), 'utf8')).split('\n');

/** Clock in 2026: every ingested note is years old. */
function setup(options: { storage?: StorageDriver; autoCreateSpaces?: 'on' | 'off' | 'auto'; redact?: 'mask' | 'refuse' | 'off' } = {}) {
  const storage = options.storage ?? createMemoryDriver();
  const core = createCore({
    storage,
    clock: steppingClock('2026-02-20T18:00:00.000Z', 1000),
    autoCreateSpaces: options.autoCreateSpaces ?? 'auto',
    ...(options.redact ? { redact: options.redact } : {}),
  });
  return { core, storage };
}

const liveKeys = async (storage: StorageDriver, space = 'hist') => (await listKeys(storage, `${space}/live/`)).filter((key) => key.endsWith('.md'));

const entry = (n: number, fields: Partial<IngestEntry> = {}): IngestEntry => ({
  at: `line ${n}`,
  timestamp: '2023-01-01T00:00:00Z',
  content: `entry ${n}`,
  ...fields,
});

const tokenCaller = (permissions: Array<'read' | 'write' | 'admin'>, spaces: '*' | string[] = '*'): Caller => ({
  agent: 'bot',
  permissions: new Set(permissions),
  spaces: spaces === '*' ? '*' : new Set(spaces),
  canChooseAgent: false,
});

describe('ingest: notes with their original times', () => {
  it('names and dates each note by its entry, exactly as a note written then', async () => {
    const { core, storage } = setup();
    const result = await core.notes.ingest(owner, { space_id: 'hist' }, jsonlEntries(await fixtureLines('history.jsonl')));
    assert.equal(result.written, 4);
    assert.equal(result.already_present, 0);
    assert.equal(result.space_created, true, 'the first note of the owner makes the space, as live_note does');
    assert.deepEqual(result.time_range, { oldest: '2023-03-01T09:00:00Z', newest: '2023-09-20T00:00:00Z' });
    assert.deepEqual(result.agents, ['alice', 'bob', 'carol']);

    const keys = await liveKeys(storage);
    const names = keys.map((key) => parseNoteName(key.slice('hist/live/'.length))!);
    assert.deepEqual(names.map((name) => `${name.stamp} ${name.agent} ${name.category}`).sort(), [
      '20230301T090000 alice decision',
      '20230315T133000 bob observation',
      '20230602T081500 alice issue',
      '20230920T000000 carol progress',
    ]);
    const bob = keys.find((key) => key.includes('_bob_'))!;
    const parsed = parseNoteFile((await storage.get(bob))!.body.toString());
    assert.deepEqual(parsed, {
      timestamp: '2023-03-15T13:30:00Z',
      agent: 'bob',
      category: 'observation',
      tags: ['export', 'warehouse'],
      space_id: 'hist',
      content: 'The nightly export to the warehouse takes 40 minutes.',
    });
  });

  it('is found by live_read since/before and memory_search since/until, though the newest listing starts an hour back', async () => {
    const { core } = setup();
    await core.notes.ingest(owner, { space_id: 'hist' }, jsonlEntries(await fixtureLines('history.jsonl')));
    const today = (await core.notes.write(owner, { space_id: 'hist', category: 'progress', content: 'a note written today about the export' })).timestamp;

    const read = async (input: { since?: string; before?: string; limit?: number }) =>
      (await core.notes.read(owner, { space_id: 'hist', ...input })).notes.map((note) => note.timestamp);
    assert.deepEqual(await read({}), [today, '2023-09-20T00:00:00Z', '2023-06-02T08:15:00Z', '2023-03-15T13:30:00Z', '2023-03-01T09:00:00Z']);
    assert.deepEqual(await read({ since: '2023-06-01T00:00:00Z' }), [today, '2023-09-20T00:00:00Z', '2023-06-02T08:15:00Z']);
    const page = await core.notes.read(owner, { space_id: 'hist', since: '2023-01-01T00:00:00Z', limit: 2 });
    assert.equal(page.has_more, true);
    assert.deepEqual(await read({ before: page.notes[1]!.filename }), ['2023-06-02T08:15:00Z', '2023-03-15T13:30:00Z', '2023-03-01T09:00:00Z']);

    const search = async (since?: string, until?: string) =>
      (await core.recall.search(owner, { space_id: 'hist', query: 'export', ...(since ? { since } : {}), ...(until ? { until } : {}) })).results
        .map((hit) => hit.timestamp)
        .sort();
    assert.deepEqual(await search(), ['2023-03-15T13:30:00Z', '2023-09-20T00:00:00Z', today]);
    assert.deepEqual(await search('2023-01-01T00:00:00Z', '2023-12-31T23:59:59Z'), ['2023-03-15T13:30:00Z', '2023-09-20T00:00:00Z']);
    assert.deepEqual(await search(undefined, '2023-06-30T00:00:00Z'), ['2023-03-15T13:30:00Z']);
    assert.deepEqual(await search('2024-01-01T00:00:00Z'), [today]);
  });

  it('writes nothing twice: a re-run finds every note, repeats in the input name one note, another time is another note', async () => {
    const { core, storage } = setup();
    const lines = await fixtureLines('history.jsonl');
    await core.notes.ingest(owner, { space_id: 'hist' }, jsonlEntries(lines));
    const again = await core.notes.ingest(owner, { space_id: 'hist' }, jsonlEntries([...lines, lines[0]!]));
    assert.equal(again.written, 0);
    assert.equal(again.already_present, 5);
    assert.deepEqual(again.first, []);
    assert.equal((await liveKeys(storage)).length, 4);

    const moved = JSON.parse(lines[0]!) as Record<string, unknown>;
    const later = await core.notes.ingest(owner, { space_id: 'hist' }, jsonlEntries([JSON.stringify({ ...moved, timestamp: '2023-03-02T09:00:00Z' })]));
    assert.equal(later.written, 1, 'the same content at another time is another note');
    assert.equal((await liveKeys(storage)).length, 5);
  });

  it('does not write again a note consolidated since, nor one a person forgot', async () => {
    const server = await startScriptedLlm(scenarios.validPlan);
    try {
      const storage = createMemoryDriver();
      const core = createCore({ storage, clock: steppingClock('2026-02-20T18:00:00.000Z', 1000), llm: server.client(), autoCreateSpaces: 'auto' });
      const lines = await fixtureLines('history.jsonl');
      await core.notes.ingest(owner, { space_id: 'hist' }, jsonlEntries(lines));
      const consolidated = await core.consolidation.consolidate(owner, { space_id: 'hist' });
      assert.equal(consolidated.status, 'ok', String(consolidated.message));
      assert.equal((await liveKeys(storage)).length, 0);
      const extra = JSON.stringify({ timestamp: '2024-01-01T00:00:00Z', content: 'after the consolidation' });
      const written = await core.notes.ingest(owner, { space_id: 'hist' }, jsonlEntries([...lines, extra]));
      const target = written.first[0]!.filename;
      assert.deepEqual([written.written, written.already_present], [1, 4]);

      await core.forget.forget(owner, { space_id: 'hist', refs: [target], confirm: true });
      const after = await core.notes.ingest(owner, { space_id: 'hist' }, jsonlEntries([...lines, extra]));
      assert.deepEqual([after.written, after.already_present, after.forgotten], [0, 4, 1]);
      assert.deepEqual(await liveKeys(storage), []);
    } finally {
      await server.close();
    }
  });

  it('writes under the space lease: while a consolidation holds it, nothing is written; then every note is', async () => {
    const { core, storage } = setup();
    await core.spaces.create(owner, { space_id: 'hist' });
    const lease = await acquireLease(storage, spaceKeys('hist').lock, {
      owner: 'consolidation:other@host:1',
      ttlMs: 600_000,
      clock: () => new Date('2026-02-20T18:00:00.000Z'),
    });
    const ingesting = core.notes.ingest(owner, { space_id: 'hist' }, [entry(1), entry(2, { timestamp: '2023-01-02T00:00:00Z' })]);
    await new Promise((resolve) => setTimeout(resolve, 300));
    assert.deepEqual(await liveKeys(storage), [], 'nothing written while the lease is held');
    await lease.release();
    assert.equal((await ingesting).written, 2);
    assert.equal((await liveKeys(storage)).length, 2);
  });

  it('refuses the whole input for one bad entry, naming each by its line, and writes nothing', async () => {
    const { core, storage } = setup();
    const lines = [
      JSON.stringify({ timestamp: '2023-01-01T00:00:00Z', content: 'fine' }),
      '{"timestamp": "2023-01-01T00:00:00Z", "content": ',
      JSON.stringify({ timestamp: 'last tuesday', content: 'x' }),
      '',
      JSON.stringify({ timestamp: '2023-02-30T00:00:00Z', content: 'x' }),
      JSON.stringify({ timestamp: '2023-01-01T00:00:00Z', category: 'memo', content: 'x' }),
      JSON.stringify({ timestamp: '2023-01-01T00:00:00Z', content: 'x'.repeat(100_001) }),
      JSON.stringify({ timestamp: '2023-01-01T00:00:00Z', agent: '***', content: 'x' }),
      JSON.stringify({ content: 'no time' }),
      JSON.stringify({ timestamp: '2023-01-01T00:00:00Z', content: 'x', tags: [{ a: 1 }] }),
      JSON.stringify({ timestamp: '2099-01-01T00:00:00Z', content: 'from the future' }),
      JSON.stringify({ timestamp: 1700000000, content: 'epoch seconds' }),
      '["an", "array"]',
    ];
    await assert.rejects(
      () => core.notes.ingest(owner, { space_id: 'hist' }, jsonlEntries(lines)),
      (error: unknown) => {
        assert.ok(isLiveMemError(error, 'invalid_input'));
        const refused = error.data.refused as Array<{ at: string; problem: string }>;
        assert.deepEqual(
          refused.map((p) => p.at),
          ['line 2', 'line 3', 'line 5', 'line 6', 'line 7', 'line 8', 'line 9', 'line 10', 'line 11', 'line 12', 'line 13'],
        );
        const why = Object.fromEntries(refused.map((p) => [p.at, p.problem]));
        assert.match(why['line 2']!, /^not JSON/);
        assert.match(why['line 3']!, /not an ISO 8601 date-time/);
        assert.match(why['line 5']!, /no such day/);
        assert.match(why['line 6']!, /unknown category "memo"/);
        assert.match(why['line 7']!, /100001 characters; the limit is 100000/);
        assert.match(why['line 8']!, /agent "\*\*\*" has no letter or digit/);
        assert.match(why['line 9']!, /timestamp is missing/);
        assert.match(why['line 10']!, /tags must be/);
        assert.match(why['line 11']!, /in the future/);
        assert.match(why['line 12']!, /ISO 8601 string/);
        assert.match(why['line 13']!, /not a JSON object/);
        assert.match(error.message, /^11 of 12 entries refused, nothing was written: line 2: not JSON/);
        return true;
      },
    );
    assert.deepEqual(await listKeys(storage, ''), [], 'no note, and no space made');
  });

  it('reads ISO 8601 dates and date-times, one without an offset as UTC (a file names the same notes on every machine)', () => {
    const now = new Date('2026-02-20T18:00:00Z');
    const read = (text: string) => parseTimestamp(text, now).toISOString();
    assert.equal(read('2023-05-01 10:00'), '2023-05-01T10:00:00.000Z');
    assert.equal(read('2023-05-01T10:00:00.25'), '2023-05-01T10:00:00.250Z');
    assert.equal(read('2023-05-01t10:00:00+0200'), '2023-05-01T08:00:00.000Z');
    assert.equal(read('2023-05-01'), '2023-05-01T00:00:00.000Z');
    assert.equal(read('2026-02-20T18:09:00Z'), '2026-02-20T18:09:00.000Z', 'a clock a few minutes ahead is no mistake');
    for (const text of ['05/01/2023', '2023-05-01T10:00 GMT', '2023-05-01T10:00:00+02', '2023-05-01T25:00:00Z', '2023-5-1', 'May 1, 2023']) {
      assert.throws(() => parseTimestamp(text, now), /not an ISO 8601 date-time/, text);
    }
  });

  it('a dry run checks everything, says what would be written, and writes nothing (nor makes the space)', async () => {
    const { core, storage } = setup();
    const dry = await core.notes.ingest(owner, { space_id: 'hist', dry_run: true }, jsonlEntries(await fixtureLines('history.jsonl')));
    assert.equal(dry.dry_run, true);
    assert.equal(dry.would_write, 4);
    assert.equal(dry.would_create_space, true);
    assert.equal(dry.first.length, 4);
    assert.deepEqual(await listKeys(storage, ''), []);
    await assert.rejects(
      () => core.notes.ingest(owner, { space_id: 'hist', dry_run: true }, [entry(1, { category: 'nope' })]),
      (error: unknown) => isLiveMemError(error, 'invalid_input'),
    );
  });

  it("writes a long input a few notes at a time: never more puts in flight than the store's parallelism", async () => {
    const driver = createMemoryDriver();
    let inFlight = 0;
    let most = 0;
    const put: StorageDriver['put'] = async (...args) => {
      inFlight++;
      most = Math.max(most, inFlight);
      try {
        await new Promise((resolve) => setImmediate(resolve));
        return await driver.put(...args);
      } finally {
        inFlight--;
      }
    };
    const storage: StorageDriver = Object.assign(Object.create(driver) as StorageDriver, { put, parallelism: 4 });
    const { core } = setup({ storage });
    async function* many() {
      for (let i = 1; i <= 300; i++) yield entry(i, { timestamp: new Date(Date.UTC(2023, 0, 1) + i * 60_000).toISOString() });
    }
    const result = await core.notes.ingest(owner, { space_id: 'hist' }, many());
    assert.equal(result.written, 300);
    assert.ok(most > 1 && most <= 4, `at most 4 puts at once, got ${most}`);
    assert.equal((await liveKeys(driver)).length, 300);
  });

  it('owner or admin only: a token with write permission is refused, an admin token of the space accepted', async () => {
    const { core, storage } = setup();
    await core.spaces.create(owner, { space_id: 'hist' });
    for (const caller of [tokenCaller(['read', 'write']), tokenCaller(['read', 'write', 'admin'], ['other'])]) {
      await assert.rejects(
        () => core.notes.ingest(caller, { space_id: 'hist' }, [entry(1)]),
        (error: unknown) => isLiveMemError(error, 'forbidden'),
      );
    }
    const admin = await core.notes.ingest(tokenCaller(['admin'], ['hist']), { space_id: 'hist' }, [entry(1, { agent: 'Alice Smith' }), entry(2)]);
    assert.equal(admin.written, 2);
    assert.deepEqual(admin.agents, ['Alice-Smith', 'bot'], 'an entry keeps its agent; one without is written as the caller');
    assert.equal((await liveKeys(storage)).length, 2);
    // A token never makes a space by writing to it (LIVE_MEM_AUTO_CREATE_SPACES=auto): not_found, nothing written.
    await assert.rejects(
      () => core.notes.ingest(tokenCaller(['admin']), { space_id: 'elsewhere' }, [entry(1)]),
      (error: unknown) => isLiveMemError(error, 'not_found'),
    );
    assert.deepEqual(await listKeys(storage, 'elsewhere/'), []);
  });

  it('redacts as any note: secrets masked (named from the note as stored), or the line refused with LIVE_MEM_REDACT=refuse', async () => {
    const secret = `the key is AKIA${'Q7LMZ2XR4TN8WB5K'} <private>and this is mine</private> ok`;
    const masked = setup();
    const result = await masked.core.notes.ingest(owner, { space_id: 'hist' }, [entry(1, { content: secret })]);
    assert.deepEqual(result.redacted, [{ kind: 'aws-access-key-id', count: 1 }]);
    assert.equal(result.private_removed, 1);
    const [key] = await liveKeys(masked.storage);
    const stored = (await masked.storage.get(key!))!.body.toString();
    assert.ok(!stored.includes('AKIA') && !stored.includes('mine'), stored);
    assert.equal((await masked.core.notes.ingest(owner, { space_id: 'hist' }, [entry(1, { content: secret })])).written, 0);

    const refusing = setup({ redact: 'refuse' });
    await assert.rejects(
      () => refusing.core.notes.ingest(owner, { space_id: 'hist' }, [entry(1), entry(2, { content: secret })]),
      (error: unknown) =>
        isLiveMemError(error, 'invalid_input') && /^1 of 2 entries refused.*line 2: the note's content holds what looks like secrets/.test(error.message),
    );
    assert.deepEqual(await listKeys(refusing.storage, ''), []);
  });
});

const s3 = requireS3OrSkip('ingest on S3');
if (s3) {
  describe('ingest on S3 (radosgw)', () => {
    it('writes the notes with their times, finds them by time, and writes nothing on a re-run', async () => {
      const harness = await makeS3Harness();
      try {
        const { core, storage } = setup({ storage: harness.driver });
        const lines = await fixtureLines('history.jsonl');
        assert.equal((await core.notes.ingest(owner, { space_id: 'hist' }, jsonlEntries(lines))).written, 4);
        assert.equal((await core.notes.ingest(owner, { space_id: 'hist' }, jsonlEntries(lines))).already_present, 4);
        assert.equal((await liveKeys(storage)).length, 4);
        const since = await core.notes.read(owner, { space_id: 'hist', since: '2023-06-01T00:00:00Z' });
        assert.deepEqual(
          since.notes.map((note) => note.timestamp),
          ['2023-09-20T00:00:00Z', '2023-06-02T08:15:00Z'],
        );
      } finally {
        await harness.cleanup();
      }
    });
  });
}

describe('ingest formats', () => {
  const collect = async (items: AsyncIterable<IngestItem>) => {
    const out: IngestItem[] = [];
    for await (const item of items) out.push(item);
    return out;
  };

  it('mcp-memory: an entity is a note with its observations and relations, tagged with its type and name, at the time given', async () => {
    const items = await collect(mcpMemoryEntries(await fixtureLines('memory.jsonl'), new Date('2024-02-01T12:00:00Z')));
    assert.deepEqual(items, [
      {
        at: 'line 1',
        timestamp: '2024-02-01T12:00:00.000Z',
        category: 'observation',
        content: 'Alice_Smith (person)\n- Leads the orders team\n- Prefers Postgres\n\nRelations:\n- Alice_Smith owns Orders_Service',
        tags: ['person', 'Alice_Smith'],
      },
      {
        at: 'line 3',
        timestamp: '2024-02-01T12:00:00.000Z',
        category: 'observation',
        content: 'Orders_Service (service)\n- Written in Go\n- Deployed on Fridays\n\nRelations:\n- Alice_Smith owns Orders_Service',
        tags: ['service', 'Orders_Service'],
      },
      { at: 'line 4', timestamp: '2024-02-01T12:00:00.000Z', category: 'observation', content: 'Bob (person)', tags: ['person', 'Bob'] },
    ]);
    const bad = await collect(
      mcpMemoryEntries(['{"type":"entity","name":"x"}', '{"type":"relation","from":"a"}', '{"type":"event"}', 'nope'], new Date('2024-01-01T00:00:00Z')),
    );
    assert.deepEqual(
      bad.map((item) => item.at),
      ['line 1', 'line 2', 'line 3', 'line 4'],
    );
    assert.ok(bad.every((item) => 'problem' in item));
  });

  it('markdown: front-matter date/timestamp, agent/author, category, tags and title; the file time when it names none', () => {
    const mtime = new Date('2022-01-02T03:04:05.678Z');
    const retro = '---\ntitle: Sprint retro\ndate: 2023-04-10T16:00:00Z\nauthor: dana\ncategory: insight\ntags: [retro, process]\n---\n\nShorter sprints.\n';
    assert.deepEqual(markdownEntry(retro, 'retro.md', mtime), {
      at: 'retro.md',
      timestamp: '2023-04-10T16:00:00Z',
      agent: 'dana',
      category: 'insight',
      content: '# Sprint retro\n\nShorter sprints.',
      tags: ['retro', 'process'],
    });
    assert.deepEqual(markdownEntry('# Plain\n\ntext\n', 'plain.md', mtime), {
      at: 'plain.md',
      timestamp: '2022-01-02T03:04:05.678Z',
      agent: undefined,
      category: undefined,
      content: '# Plain\n\ntext',
      tags: undefined,
    });
  });
});
