import assert from 'node:assert/strict';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { createCore, type Core } from '../../../src/core/core.js';
import { readFences } from '../../../src/core/prompt-fence.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import type { Logger } from '../../../src/shared/log.js';
import { readSections } from '../../../src/shared/sections.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import { createFsDriver } from '../../../src/storage/fs/fs-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { plan, rewrite } from '../../../fixtures/llm/scenarios.js';
import { counting, owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm } from '../../helpers/scripted-llm.js';
import { tempDir } from '../../helpers/tmp.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

/**
 * A lossy scripted model: it folds every note into the bank but keeps only the facts whose number
 * is a multiple of three, the way a real model drops detail. Recall must find the rest in history.
 */
function lossyPlan(messages: Array<{ role: string; content: string }>): string {
  const prompt = messages.map((m) => m.content).join('\n');
  const kept = [...prompt.matchAll(/Fact (\d+): ([^\n]+)/g)].filter((m) => Number(m[1]) % 3 === 0).map((m) => `- ${m[2]}`);
  const previous = readFences(prompt, 'file').find((file) => file.label === 'facts.md')?.text ?? '# Facts\n';
  return plan([rewrite('facts.md', `${previous.trim()}\n${kept.join('\n')}\n`)], `Synthesis: ${kept.length} facts kept this time.`);
}

const logs: string[] = [];
const logger: Logger = {
  debug: () => undefined,
  info: (message) => void logs.push(`info ${message}`),
  warn: (message) => void logs.push(`warn ${message}`),
  error: (message) => void logs.push(`error ${message}`),
};

async function makeCore(storage: StorageDriver, llm?: ScriptedLlm): Promise<Core> {
  let n = 0;
  return createCore({
    storage,
    clock: steppingClock('2026-03-01T09:00:00.000Z', 1000),
    randomId: () => (n++).toString(36).padStart(6, '0'),
    logger,
    ...(llm ? { llm: llm.client() } : {}),
    consolidation: { retryBackoffMs: 5, timeoutMs: 5_000 },
  });
}

const SERVICES = ['zephyr', 'quokka', 'marmot', 'ibis', 'tapir', 'okapi', 'narwhal', 'axolotl', 'pangolin', 'wombat', 'caracal', 'dugong'];
const fact = (i: number) =>
  `Fact ${i}: the ${SERVICES[i % 12]}-${Math.floor(i / 12)} service stores its sessions in bucket b${i * 7} and retries ${i % 5} times`;

/** A project with 60 facts noted across 5 consolidations by the lossy model, plus 4 live notes. */
async function project() {
  const storage = createMemoryDriver();
  const llm = await startScriptedLlm([{ dynamic: lossyPlan }]);
  servers.push(llm);
  const core = await makeCore(storage, llm);
  await core.spaces.create(owner, { space_id: 'proj' });
  for (let round = 0; round < 5; round++) {
    for (let i = round * 12; i < round * 12 + 12; i++) {
      await core.notes.write(owner, { space_id: 'proj', category: i % 2 ? 'decision' : 'observation', content: fact(i), agent: i % 4 ? 'cline' : 'claude' });
    }
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
  }
  await core.notes.write(owner, {
    space_id: 'proj',
    category: 'todo',
    content: 'Migrer la base de données vers PostgreSQL avant les décisions de déploiement',
    agent: 'claude',
  });
  await core.notes.write(owner, {
    space_id: 'proj',
    category: 'issue',
    content: 'The authentication middleware rejects expired refresh tokens twice',
    agent: 'cline',
    tags: 'auth,security',
  });
  return { storage, core, llm };
}

describe('memory_search', () => {
  it('finds every one of 60 facts in the top 5, though the lossy model kept a third of them in the bank', async () => {
    const { core } = await project();
    const bank = (await core.bank.read(owner, { space_id: 'proj', filename: 'facts.md' })).content;
    assert.equal(bank.split('\n').filter((line) => line.startsWith('- ')).length, 20, 'the bank kept a third');
    for (let i = 0; i < 60; i++) {
      const name = `${SERVICES[i % 12]}-${Math.floor(i / 12)}`;
      const { results } = await core.recall.search(owner, { space_id: 'proj', query: `${name} sessions bucket`, limit: 5 });
      assert.ok(
        results.some((hit) => hit.text.includes(`${name} service`)),
        `fact ${i} (${name}) not in the top 5: ${JSON.stringify(results.map((r) => r.ref))}`,
      );
    }
  });

  it('says where each hit comes from, with a ref to read it whole', async () => {
    const { core } = await project();
    const { results } = await core.recall.search(owner, { space_id: 'proj', query: 'zephyr-1', limit: 10 });
    const history = results.find((hit) => hit.source === 'history');
    assert.ok(history, 'a consolidated note');
    assert.equal(history.level, 0);
    assert.match(history.ref, /^\d{8}T\d{6}_(cline|claude)_(decision|observation)_\w+\.md$/);
    assert.ok(history.consolidation_id);
    const record = await core.history.read(owner, { space_id: 'proj', consolidation_id: history.consolidation_id });
    assert.ok(record.notes.some((note) => note.filename === history.ref));

    const live = (await core.recall.search(owner, { space_id: 'proj', query: 'authentication refresh', limit: 3 })).results[0];
    assert.equal(live?.source, 'live');
    assert.equal(live?.category, 'issue');

    const bank = (await core.recall.search(owner, { space_id: 'proj', query: 'sessions', sources: ['bank'] })).results;
    assert.ok(bank.length > 0 && bank.every((hit) => hit.source === 'bank' && hit.level === null && hit.ref.startsWith('facts.md')));
    const synthesis = (await core.recall.search(owner, { space_id: 'proj', query: 'facts kept this time', sources: ['synthesis'] })).results;
    assert.equal(synthesis[0]?.ref, '_synthesis.md');
  });

  it('matches French and English inflections, accents and typos', async () => {
    const { core } = await project();
    const top = async (query: string) => (await core.recall.search(owner, { space_id: 'proj', query, limit: 3 })).results[0]?.text ?? '';
    assert.match(await top('migration base donnees postgresql'), /PostgreSQL/);
    assert.match(await top('décision déploiement'), /PostgreSQL/);
    assert.match(await top('authenticate middleware'), /authentication middleware/);
    assert.match(await top('autentication midleware'), /authentication middleware/);
  });

  it('answers its filters: levels, sources, category, agent, time range', async () => {
    const { core } = await project();
    const search = (extra: Record<string, unknown>) => core.recall.search(owner, { space_id: 'proj', query: 'service sessions bucket', limit: 50, ...extra });
    const claude = (await search({ agent: 'claude' })).results;
    assert.ok(claude.length > 0 && claude.every((hit) => hit.agent === 'claude'));
    const decisions = (await search({ category: 'decision' })).results;
    assert.ok(decisions.length > 0 && decisions.every((hit) => hit.category === 'decision'));
    assert.ok((await search({ levels: [0] })).results.every((hit) => hit.level === 0));
    assert.ok((await search({ sources: ['history'] })).results.every((hit) => hit.source === 'history'));
    const all = (await search({ levels: [0] })).results.map((hit) => hit.timestamp as string).sort();
    const middle = all[Math.floor(all.length / 2)] as string;
    const late = (await search({ since: middle, levels: [0] })).results;
    assert.ok(late.length > 0 && late.every((hit) => (hit.timestamp as string) >= middle));
    const early = (await search({ until: middle, levels: [0] })).results;
    assert.ok(early.length > 0 && early.every((hit) => (hit.timestamp as string) <= middle));
  });

  it('refuses bad input with a clear error and changes nothing', async () => {
    const { core, storage } = await project();
    const before = await listKeys(storage, '');
    const refuses = async (input: Record<string, unknown>, pattern: RegExp) =>
      assert.rejects(
        core.recall.search(owner, { space_id: 'proj', query: 'x', ...input }),
        (error) => isLiveMemError(error, 'invalid_input') && pattern.test(error.message),
      );
    await refuses({ query: '  ' }, /query is empty/);
    await refuses({ limit: 0 }, /limit/);
    await refuses({ levels: [9] }, /levels/);
    await refuses({ sources: ['web'] }, /unknown source/);
    await refuses({ category: 'idea' }, /unknown category/);
    await refuses({ since: 'yesterday' }, /invalid since/);
    await refuses({ until: '2026-13-45' }, /invalid until/);
    await assert.rejects(core.recall.search(owner, { space_id: 'nope', query: 'x' }), (error) => isLiveMemError(error, 'not_found'));
    assert.deepEqual(
      (await listKeys(storage, '')).filter((key) => !key.includes('/_index/')),
      before.filter((key) => !key.includes('/_index/')),
    );
  });

  it('refuses a 1 MB query in every search before reading the store', async () => {
    const storage = counting(createMemoryDriver());
    const core = await makeCore(storage);
    await core.spaces.create(owner, { space_id: 'proj' });
    await core.notes.write(owner, { space_id: 'proj', category: 'observation', content: 'the cache is warm' });
    storage.reset();
    const huge = 'cache '.repeat(174_763); // 1 MB
    const tooLong = (error: unknown) => isLiveMemError(error, 'invalid_input') && /query is too long \(\d+ characters\): at most 4000/.test(error.message);
    await assert.rejects(core.recall.search(owner, { space_id: 'proj', query: huge }), tooLong);
    await assert.rejects(core.recall.context(owner, { space_id: 'proj', query: huge }), tooLong);
    await assert.rejects(core.notes.search(owner, { space_id: 'proj', query: huge }), tooLong);
    assert.deepEqual(storage.counts, {}, 'no storage call');
    // At the cap, a query is served as before.
    const atCap = `cache ${'x'.repeat(3_994)}`;
    assert.equal((await core.recall.search(owner, { space_id: 'proj', query: atCap })).status, 'ok');
    assert.equal((await core.notes.search(owner, { space_id: 'proj', query: 'cache' })).total, 1);
  });

  it('keeps a snapshot in the store: a new process loads it and reads only what is newer', async () => {
    const { storage, core } = await project();
    await core.recall.search(owner, { space_id: 'proj', query: 'zephyr', limit: 1 });
    await core.idle();
    const snapshots = (await listKeys(storage, 'proj/_index/')).filter((key) => key.endsWith('.snapshot'));
    assert.equal(snapshots.length, 1, 'the first build is written');

    const spy = counting(storage);
    const cold = await makeCore(spy);
    await cold.notes.write(owner, { space_id: 'proj', category: 'insight', content: 'Brand new fact about the kiwi cache', agent: 'x' });
    spy.reset();
    const { results } = await cold.recall.search(owner, { space_id: 'proj', query: 'kiwi cache', limit: 1 });
    assert.match(results[0]?.text ?? '', /kiwi cache/);
    // The snapshot, the new note and the few objects that describe the space: never the 60 notes again.
    assert.ok((spy.counts.get ?? 0) <= 8, `a catch-up read ${spy.counts.get} objects`);
  });

  it('rebuilds from the store when the snapshot is corrupt, says so, and answers the same', async () => {
    const { storage, core } = await project();
    const expected = (await core.recall.search(owner, { space_id: 'proj', query: 'quokka bucket', limit: 5 })).results.map((r) => r.ref);
    await core.idle();
    const [key] = (await listKeys(storage, 'proj/_index/')).filter((k) => k.endsWith('.snapshot'));
    const body = (await storage.get(key as string))!.body;
    const at = Math.floor(body.length * 0.7);
    body[at] = (body[at] as number) ^ 0xff;
    await storage.put(key as string, body);
    logs.length = 0;
    const fresh = await makeCore(storage);
    const again = (await fresh.recall.search(owner, { space_id: 'proj', query: 'quokka bucket', limit: 5 })).results.map((r) => r.ref);
    assert.deepEqual(again, expected);
    assert.ok(
      logs.some((line) => line.startsWith('warn') && line.includes('unusable')),
      logs.join('\n'),
    );
    assert.equal(await storage.stat(key as string), null, 'the damaged snapshot is gone');
  });

  it('finds a corrupt byte in each section kind of its snapshot when that section is first used, rebuilds that part alone, and answers the same', async () => {
    const { storage, core } = await project();
    const query = { space_id: 'proj', query: 'quokka bucket', limit: 5 };
    const expected = (await core.recall.search(owner, query)).results.map((r) => r.ref);
    await core.idle();
    const [key] = (await listKeys(storage, 'proj/_index/')).filter((k) => k.endsWith('.snapshot'));
    const pristine = Buffer.from((await storage.get(key as string))!.body);
    const frame = readSections(pristine, pristine.subarray(0, 8)).sections;
    const engine = frame.get('engine')?.bytes as Buffer;
    const inner = readSections(engine, engine.subarray(0, 8)).sections;
    const offsetOf = (bytes: Buffer) => bytes.byteOffset - pristine.byteOffset;
    // The byte to flip in each section: its middle, and in the postings the first of a term the query reads.
    const terms = inner.get('terms')?.bytes as Buffer;
    const u32 = (bytes: Buffer) => new Uint32Array(bytes.buffer, bytes.byteOffset, bytes.length / 4);
    const termEnds = u32(inner.get('term-ends')?.bytes as Buffer);
    const quokka = Array.from(termEnds, (end, t) => terms.toString('utf8', t === 0 ? 0 : termEnds[t - 1], end)).indexOf('quokka');
    assert.ok(quokka >= 0, 'the query term is indexed');
    const targets = new Map<string, number>();
    for (const [name, section] of frame) if (name !== 'engine') targets.set(name, offsetOf(section.bytes) + (section.bytes.length >> 1));
    for (const [name, section] of inner) targets.set(name, offsetOf(section.bytes) + (section.bytes.length >> 1));
    targets.set('postings', offsetOf(inner.get('postings')?.bytes as Buffer) + (u32(inner.get('offsets')?.bytes as Buffer)[quokka] as number));
    // What each kind costs: a derived part computed again alone (the snapshot kept, written again), or the index rebuilt from the store.
    const alone = ['timeline', 'id-table', 'id-ranks', 'term-table', 'postings~crc'];
    const atFirstRead = ['postings'];
    for (const [name, at] of targets) {
      for (const old of (await listKeys(storage, 'proj/_index/')).filter((k) => k.endsWith('.snapshot'))) await storage.delete(old);
      const damaged = Buffer.from(pristine);
      damaged[at] = (damaged[at] as number) ^ 0x40;
      await storage.put(key as string, damaged);
      logs.length = 0;
      const fresh = await makeCore(storage);
      const again = (await fresh.recall.search(owner, query)).results.map((r) => r.ref);
      assert.deepEqual(again, expected, `${name}: the same answer`);
      const said = logs.join('\n');
      if (alone.includes(name)) {
        assert.ok(said.includes(`computed ${name} again`), `${name}: computed again alone\n${said}`);
        assert.ok(await storage.stat(key as string), `${name}: the snapshot is kept`);
      } else {
        const why = atFirstRead.includes(name) ? 'is damaged' : 'unusable';
        assert.ok(said.includes(why), `${name}: found ${atFirstRead.includes(name) ? 'as first read' : 'at load'}\n${said}`);
        assert.equal(await storage.stat(key as string), null, `${name}: the damaged snapshot is gone`);
      }
      await fresh.idle();
    }
    assert.deepEqual(
      [...targets.keys()].sort(),
      [...alone, ...atFirstRead, 'header', 'meta', 'id-ends', 'ids', 'lengths', 'term-ends', 'terms', 'df', 'offsets'].sort(),
    );
  });

  it('follows a note from live/ into history without losing or doubling it', async () => {
    const storage = createMemoryDriver();
    const llm = await startScriptedLlm([{ dynamic: lossyPlan }]);
    servers.push(llm);
    const core = await makeCore(storage, llm);
    await core.spaces.create(owner, { space_id: 'proj' });
    await core.notes.write(owner, { space_id: 'proj', category: 'decision', content: 'Fact 1: the heron queue drains nightly' });
    const before = (await core.recall.search(owner, { space_id: 'proj', query: 'heron queue' })).results;
    assert.deepEqual(
      before.map((hit) => hit.source),
      ['live'],
    );
    await core.consolidation.consolidate(owner, { space_id: 'proj' });
    const afterwards = (await core.recall.search(owner, { space_id: 'proj', query: 'heron queue', levels: [0] })).results;
    assert.deepEqual(
      afterwards.map((hit) => [hit.source, hit.ref]),
      [['history', before[0]?.ref]],
    );
  });
});

describe('summaries in recall', () => {
  it('finds summaries by level, and memory_context shows the unrolled level 1 and the overview', async () => {
    const llm = await startScriptedLlm([
      {
        dynamic: (messages) => {
          const user = messages.find((m) => m.role === 'user')?.content ?? '';
          const notes = readFences(user, 'note').length;
          const summary = notes > 0 ? `Window of ${notes} notes about the heliotrope ingestion.` : 'Overview: the heliotrope ingestion over weeks.';
          return JSON.stringify({ summary, key_findings: ['ingestion is idempotent'], topics: ['ingestion'], agents: [], files_mentioned: ['src/ingest.ts'] });
        },
      },
    ]);
    servers.push(llm);
    const storage = createMemoryDriver();
    const core = await makeCore(storage, llm);
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let i = 0; i < 40; i++)
      await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Batch ${i}: ${'ingested rows from the partner feed; '.repeat(8)}` });
    const run = await core.summaries.update(owner, { space_id: 'proj', window_chars: 2000, group_chars: 600, batch_delay_ms: 0 });
    assert.equal(run.status, 'ok');
    const l1 = (await core.recall.search(owner, { space_id: 'proj', query: 'heliotrope window', levels: [1] })).results;
    assert.ok(l1.length > 0 && l1.every((hit) => hit.source === 'summary' && hit.level === 1 && hit.ref.startsWith('L1-') && hit.range_start && hit.range_end));
    const high = (await core.recall.search(owner, { space_id: 'proj', query: 'heliotrope overview', levels: [2, 3, 4, 5, 6] })).results;
    assert.ok(high.length > 0 && high.every((hit) => (hit.level as number) >= 2));
    const read = await core.summaries.read(owner, { space_id: 'proj', summary_id: l1[0]?.ref as string });
    assert.equal(read.status, 'ok');
    const context = await core.recall.context(owner, { space_id: 'proj', max_tokens: 6000 });
    assert.match(context.text, /## Overview \(higher-level summaries\)/);
    assert.match(context.text, /Overview: the heliotrope ingestion/);
  });
});

describe('live_search', () => {
  it('keeps its contract and reads no body twice', async () => {
    const storage = counting(createMemoryDriver());
    const core = await makeCore(storage);
    await core.spaces.create(owner, { space_id: 'proj' });
    for (let i = 0; i < 30; i++)
      await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Step ${i} of the ${i % 2 ? 'Export' : 'import'}` });
    const first = await core.notes.search(owner, { space_id: 'proj', query: 'EXPORT', limit: 5 });
    assert.equal(first.notes.length, 5);
    assert.ok(first.has_more);
    assert.deepEqual(
      first.notes.map((n) => n.content),
      ['Step 29 of the Export', 'Step 27 of the Export', 'Step 25 of the Export', 'Step 23 of the Export', 'Step 21 of the Export'],
    );
    storage.reset();
    const second = await core.notes.search(owner, { space_id: 'proj', query: 'of the ex', limit: 100 });
    assert.equal(second.notes.length, 15);
    assert.equal(storage.counts.get ?? 0, 0, 'bodies come from the cache');
  });
});

describe('memory_context', () => {
  it('never exceeds max_tokens, labels its sections, dedupes and counts what it left out', async () => {
    const { core } = await project();
    for (const maxTokens of [200, 500, 1500, 4000, 20000]) {
      const result = await core.recall.context(owner, { space_id: 'proj', query: 'zephyr sessions', max_tokens: maxTokens });
      assert.ok(result.tokens <= maxTokens, `${result.tokens} > ${maxTokens}`);
      assert.ok(Math.ceil(result.text.length / 3.5) <= maxTokens, 'the rendered text fits');
      const lines = result.text.split('\n').filter((line) => line.startsWith('- '));
      assert.equal(new Set(lines).size, lines.length, 'no item twice');
      if (maxTokens >= 1500) {
        assert.match(result.text, /## Recent notes/);
        assert.match(result.text, /## Relevant to "zephyr sessions"/);
        assert.match(result.text, /zephyr-\d service/);
      }
      if (maxTokens === 200) assert.ok(Object.values(result.omitted).some((n) => n > 0));
    }
    await assert.rejects(core.recall.context(owner, { space_id: 'proj', max_tokens: 10 }), (error) => isLiveMemError(error, 'invalid_input'));
  });
});

describe('history', () => {
  it('lists consolidations newest first, page by page, and reads one', async () => {
    const { core } = await project();
    const first = await core.history.list(owner, { space_id: 'proj', limit: 2 });
    assert.equal(first.consolidations.length, 2);
    assert.ok(first.has_more);
    assert.ok((first.consolidations[0]?.consolidation_id as string) > (first.consolidations[1]?.consolidation_id as string));
    assert.equal(first.consolidations[0]?.notes_count, 12);
    const rest = await core.history.list(owner, { space_id: 'proj', limit: 10, before: first.next_before as string });
    assert.equal(rest.consolidations.length, 3);
    assert.equal(rest.has_more, false);
    const one = await core.history.read(owner, { space_id: 'proj', consolidation_id: rest.consolidations[2]?.consolidation_id as string });
    assert.equal(one.notes.length, 12);
    assert.match(one.notes[0]?.content ?? '', /^Fact 0:/);
    await assert.rejects(core.history.read(owner, { space_id: 'proj', consolidation_id: '20260101T000000-zzzzzz' }), (error) =>
      isLiveMemError(error, 'not_found'),
    );
    await assert.rejects(core.history.read(owner, { space_id: 'proj', consolidation_id: '../x' }), (error) => isLiveMemError(error, 'invalid_input'));
  });

  it('checks permissions like every tool', async () => {
    const { core } = await project();
    const stranger = { agent: 'x', permissions: new Set(['read'] as const), spaces: new Set(['other']), canChooseAgent: false };
    await assert.rejects(core.recall.search(stranger, { space_id: 'proj', query: 'x' }), (error) => isLiveMemError(error, 'forbidden'));
    await assert.rejects(core.recall.context(stranger, { space_id: 'proj' }), (error) => isLiveMemError(error, 'forbidden'));
    await assert.rejects(core.history.list(stranger, { space_id: 'proj' }), (error) => isLiveMemError(error, 'forbidden'));
  });

  it('leaves out a bank file put by hand under a name no key may hold, instead of failing the search and the consolidation', async () => {
    const home = await tempDir();
    try {
      const llm = await startScriptedLlm([{ reply: plan([rewrite('progress.md', '# Progress\n\n- the zeppelin hangar opened\n')]) }]);
      servers.push(llm);
      const core = await makeCore(createFsDriver(home.dir), llm);
      await core.spaces.create(owner, { space_id: 'hand' });
      await writeFile(path.join(home.dir, 'hand/bank/title\u001b]0;owned\u0007.md'), '# zeppelin, put there by hand\n');
      await core.notes.write(owner, { space_id: 'hand', category: 'progress', content: 'the zeppelin hangar opened' });
      const { results } = await core.recall.search(owner, { space_id: 'hand', query: 'zeppelin' });
      assert.ok(results.length > 0 && results.every((hit) => !JSON.stringify(hit).includes('\u001b')));
      const run = await core.consolidation.consolidate(owner, { space_id: 'hand' });
      assert.equal(run.status, 'ok', run.message);
    } finally {
      await home.remove();
    }
  });
});
