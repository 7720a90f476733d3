import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createCore } from '../../../src/core/core.js';
import type { ConsolidationSettings } from '../../../src/core/context.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import { listKeys } from '../../../src/storage/list.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { DEFAULT_FILES, FIRST_PLAN, longSynthesisPlan, plan, rewrite, scenarios } from '../../../fixtures/llm/scenarios.js';
import { historyNoteNames, owner, steppingClock } from '../../helpers/core.js';
import { decodeHistoryNotes } from '../../../src/core/commit/history.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../../helpers/scripted-llm.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

interface Setup {
  steps: Step[];
  notes?: number;
  storage?: StorageDriver;
  llm?: { contextWindow?: number; maxTokens?: number };
  consolidation?: Partial<ConsolidationSettings>;
  fault?: (point: string) => Promise<void>;
}

/** A space with `notes` live notes, and a core whose LLM is the scripted server. */
async function setup({ steps, notes = 15, storage = createMemoryDriver(), llm, consolidation, fault }: Setup) {
  const server = await startScriptedLlm(steps);
  servers.push(server);
  const core = createCore({
    storage,
    clock: steppingClock('2026-02-20T18:00:00.000Z', 1000),
    llm: server.client(llm),
    consolidation: { retryBackoffMs: 5, timeoutMs: 2_000, ...consolidation },
    ...(fault ? { fault } : {}),
  });
  if (!(await storage.stat('proj/_meta.json'))) await core.spaces.create(owner, { space_id: 'proj' });
  const stamps: string[] = [];
  for (let i = 0; i < notes; i++) {
    const written = await core.notes.write(owner, {
      space_id: 'proj',
      category: i % 2 ? 'decision' : 'progress',
      content: `note ${i}`,
      agent: i % 3 ? 'cline' : 'claude',
      tags: 'a,b',
    });
    stamps.push(written.timestamp);
  }
  return { core, storage, server, stamps };
}

const liveCount = async (storage: StorageDriver) => (await listKeys(storage, 'proj/live/')).filter((k) => k.endsWith('.md')).length;
const bankText = async (storage: StorageDriver, file: string) => (await storage.get(`proj/bank/${file}`))?.body.toString() ?? null;

describe('consolidation (seed 000 §8)', () => {
  it('scenario 1: a first consolidation creates the bank and moves every note into history', async () => {
    const { core, storage, server, stamps } = await setup({ steps: scenarios.validPlan });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(result.notes_processed, 15);
    assert.equal(result.notes_remaining, 0);
    assert.equal(result.bank_files_created, 6);
    assert.equal(result.bank_files_updated, 0);
    assert.equal(result.windows, 1);
    assert.ok(result.llm_prompt_tokens > 0 && result.llm_completion_tokens > 0);
    assert.equal(await liveCount(storage), 0);
    for (const file of DEFAULT_FILES) assert.ok(await bankText(storage, file), file);
    assert.equal((await storage.get('proj/_synthesis.md'))?.body.toString(), 'Synthesis: the team set up the project.');
    const info = await core.spaces.info(owner, { space_id: 'proj' });
    assert.equal(info.consolidation_count, 1);
    assert.equal(info.total_notes_processed, 15);
    assert.ok(info.last_consolidation);
    const [cid] = result.consolidations;
    const record = JSON.parse((await storage.get(`proj/history/${cid}/record.json`))!.body.toString());
    assert.equal(record.notes.length, 15);
    assert.deepEqual(record.time_range, { oldest: stamps[0], newest: stamps.at(-1) });
    assert.notEqual(stamps[0], stamps.at(-1));
    const moved = decodeHistoryNotes((await storage.get(`proj/history/${cid}/notes.json`))!.body, 'notes.json');
    assert.deepEqual(
      moved.map((note) => note.filename),
      record.notes,
      'every note in history, byte for byte',
    );
    assert.match(moved[0]!.body.toString('utf8'), /^---\n[\s\S]*\n---\n\nnote 0\n?$/);
    assert.equal(await storage.get('proj/_consolidation/pending.json'), null);
    assert.equal(await storage.get('proj/_consolidation/lock.json'), null, 'the lease is released');
    // The prompt carries seed 000 §3: rules verbatim, notes with timestamp/agent/category/tags, JSON mode.
    const prompt = server.requests[0]!;
    assert.equal(prompt.response_format?.type, 'json_object');
    const user = prompt.messages[1]!.content;
    assert.ok(user.includes((await core.spaces.rules(owner, { space_id: 'proj' })).rules));
    assert.ok(user.includes(`Timestamp: ${stamps[0]}\nAgent: claude\nCategory: progress\nTags: a, b\n\nnote 0`), user);
    assert.ok(user.indexOf('note 0') < user.indexOf('note 14'), 'oldest first');
  });

  it('scenario 2: an incremental consolidation edits sections and leaves the rest unchanged', async () => {
    const storage = createMemoryDriver();
    await (await setup({ steps: scenarios.validPlan, storage })).core.consolidation.consolidate(owner, { space_id: 'proj' });
    const { core } = await setup({ steps: scenarios.sectionEdits, storage, notes: 30 });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(result.notes_processed, 30);
    assert.equal(result.bank_files_updated, 2);
    assert.equal(result.bank_files_unchanged, 4);
    assert.equal(result.operations_applied, 4);
    assert.equal(
      await bankText(storage, 'progress.md'),
      '# Progress\n\n## What works\n\n- the build\n\n- the export\n\n## Known issues\n\n- the LLM timeout is too short\n\n- none yet\n\n## Next\n\n- backups\n',
    );
    assert.equal((await core.spaces.info(owner, { space_id: 'proj' })).consolidation_count, 2);
  });

  it('scenario 3: past MAX_NOTES, the oldest are processed and notes_remaining says how many wait', async () => {
    const { core, storage } = await setup({ steps: scenarios.validPlan, notes: 12, consolidation: { maxNotes: 10 } });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.notes_processed, 10);
    assert.equal(result.notes_remaining, 2);
    const left = await core.notes.read(owner, { space_id: 'proj' });
    assert.deepEqual(
      left.notes.map((n) => n.content),
      ['note 11', 'note 10'],
    );
    assert.equal(await liveCount(storage), 2);
  });

  it('scenario 4: no notes → ok at once, without an LLM call', async () => {
    const { core, server } = await setup({ steps: scenarios.validPlan, notes: 0 });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok');
    assert.equal(result.notes_processed, 0);
    assert.equal(server.requests.length, 0);
  });

  it("takes only one agent's notes when asked, matched exactly", async () => {
    const { core } = await setup({ steps: scenarios.validPlan });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj', agent: 'clin' });
    assert.equal(result.notes_processed, 0);
    const cline = await core.consolidation.consolidate(owner, { space_id: 'proj', agent: 'cline' });
    assert.equal(cline.notes_processed, 10);
    assert.deepEqual([...new Set((await core.notes.read(owner, { space_id: 'proj' })).notes.map((n) => n.agent))], ['claude']);
  });

  it("accepts the Python server's reply format", async () => {
    const { core, storage } = await setup({ steps: scenarios.seedFormat });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(result.bank_files_created, 6);
    assert.match((await bankText(storage, 'techContext.md')) ?? '', /From the seed format/);
  });
});

describe('consolidation: the model misbehaves, nothing is lost', () => {
  const nothingChanged = async (storage: StorageDriver, notes: number) => {
    assert.equal(await liveCount(storage), notes);
    assert.deepEqual(await listKeys(storage, 'proj/history/'), []);
    assert.equal(await storage.get('proj/_consolidation/pending.json'), null);
    assert.equal(await storage.get('proj/_consolidation/lock.json'), null);
  };

  it('retries once with a stricter reminder after a reply that is not JSON', async () => {
    const { core, server } = await setup({ steps: scenarios.invalidThenValid });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 2);
    assert.match(server.requests[1]!.messages.at(-1)!.content, /could not be used/);
  });

  for (const [name, steps, pattern] of [
    ['invalid JSON twice', scenarios.invalidTwice, /no usable plan twice/],
    ['a reply cut by the token limit', scenarios.truncated, /cut by the token limit/],
  ] as const) {
    it(`gives up after ${name}: error, nothing changed`, async () => {
      const { core, storage } = await setup({ steps: [...steps] });
      const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
      assert.equal(result.status, 'error');
      assert.equal(result.code, 'llm_error');
      assert.match(result.message ?? '', pattern);
      await nothingChanged(storage, 15);
    });
  }

  it('asks again without JSON mode when the endpoint refuses response_format', async () => {
    const { core, server } = await setup({ steps: [{ status: 400, message: "Unrecognized request argument: 'response_format'" }, { reply: FIRST_PLAN }] });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests[0]!.response_format?.type, 'json_object');
    assert.equal(server.requests[1]!.response_format, undefined);
  });

  it('rides out 429 and 500 answers with retries', async () => {
    const { core, server } = await setup({ steps: scenarios.rateLimitedThenOk });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 3);
  });

  it('reports a timeout as an error and changes nothing', async () => {
    const { core, storage } = await setup({ steps: [{ delayMs: 3_000, then: { reply: FIRST_PLAN } }], consolidation: { timeoutMs: 200 } });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error');
    assert.match(result.message ?? '', /did not answer within/);
    await nothingChanged(storage, 15);
  });

  for (const [name, steps, pattern] of [
    ['a path-traversal file name', scenarios.pathTraversal, /unsafe file "\.\.\/_meta\.json"/],
    ['an invisible character in a file name', scenarios.invisibleName, /unsafe file/],
    ['an edit of a missing heading', scenarios.missingHeading, /no section "Progress" > "Nowhere"/],
  ] as const) {
    it(`refuses a plan with ${name}: nothing written`, async () => {
      const storage = createMemoryDriver();
      await (await setup({ steps: scenarios.validPlan, storage, notes: 2 })).core.consolidation.consolidate(owner, { space_id: 'proj' });
      // The refused plan was paid for: its spend record is the one thing written (besides the new notes).
      const content = async () => (await listKeys(storage, 'proj/')).filter((key) => !key.startsWith('proj/_spend/'));
      const before = await content();
      const bankBefore = await bankText(storage, 'activeContext.md');
      const { core } = await setup({ steps: [...steps], storage, notes: 3 });
      const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
      assert.equal(result.status, 'error');
      assert.equal(result.code, 'invalid_input');
      assert.match(result.message ?? '', pattern);
      assert.ok(result.operations_failed >= 1);
      assert.equal(await liveCount(storage), 3);
      assert.equal(await bankText(storage, 'activeContext.md'), bankBefore);
      assert.equal((await content()).length, before.length + 3);
      assert.equal(await storage.get('_meta.json'), null);
    });
  }

  it('refuses a rewrite that shrinks a file by more than 70%', async () => {
    const storage = createMemoryDriver();
    await createCore({ storage }).spaces.create(owner, { space_id: 'proj' });
    await storage.put('proj/bank/projectbrief.md', `# Brief\n\n${'A long and careful description of the project. '.repeat(20)}\n`);
    const { core } = await setup({ steps: scenarios.destructiveRewrite, storage });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error');
    assert.match(result.message ?? '', /shrinks it by 9\d%/);
    assert.match((await bankText(storage, 'projectbrief.md')) ?? '', /careful description/);
  });

  it('lets an append-only file (per the rules) only grow', async () => {
    const storage = createMemoryDriver();
    await (await setup({ steps: scenarios.validPlan, storage, notes: 1 })).core.consolidation.consolidate(owner, { space_id: 'proj' });
    const { core } = await setup({ steps: scenarios.appendOnlyShrink, storage, notes: 1 });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error');
    assert.match(result.message ?? '', /progress\.md is append-only/);
  });

  it('says how to configure a model when none is', async () => {
    const core = createCore({ storage: createMemoryDriver() });
    await core.spaces.create(owner, { space_id: 'proj' });
    await assert.rejects(
      core.consolidation.consolidate(owner, { space_id: 'proj' }),
      (e) => isLiveMemError(e, 'config_error') && /LIVE_MEM_LLM_BASE_URL/.test(e.message),
    );
  });
});

describe('consolidation: large backlogs, synthesis, concurrency', () => {
  const appendPlan = (n: number) => ({ dynamic: () => plan([rewrite('activeContext.md', `# Active\n\nWindow ${n}.\n`)], `Synthesis after window ${n}.`) });

  it('cuts a backlog into windows that fit the context, each committed on its own', async () => {
    const steps: Step[] = [1, 2, 3, 4, 5, 6, 7, 8].map(appendPlan);
    const { core, storage, server } = await setup({ steps, notes: 40, llm: { contextWindow: 4_100, maxTokens: 1_000 } });
    for (let i = 0; i < 40; i++) await core.notes.write(owner, { space_id: 'proj', category: 'insight', content: `long note ${i} ${'word '.repeat(150)}` });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.ok(result.windows >= 3, `${result.windows} windows`);
    assert.equal(result.notes_processed, 80);
    assert.equal(result.consolidations.length, result.windows);
    assert.equal(server.requests.length, result.windows);
    for (const request of server.requests) {
      const tokens = request.messages.reduce((n, m) => n + m.content.length / 3.5, 0);
      assert.ok(tokens + 1_000 <= 4_000, `a prompt of ~${Math.round(tokens)} tokens fits`);
    }
    assert.match(server.requests[1]!.messages[1]!.content, /Synthesis after window 1\./, 'each window sees the previous one');
    assert.equal((await core.spaces.info(owner, { space_id: 'proj' })).consolidation_count, result.windows);
    assert.equal(await liveCount(storage), 0);
  });

  it('keeps the windows before a failure and reports partial', async () => {
    const { core, storage } = await setup({ steps: [appendPlan(1), { reply: 'not json' }], notes: 0, llm: { contextWindow: 4_100, maxTokens: 1_000 } });
    for (let i = 0; i < 30; i++) await core.notes.write(owner, { space_id: 'proj', category: 'insight', content: `long note ${i} ${'word '.repeat(150)}` });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'partial');
    assert.equal(result.windows, 1);
    assert.ok(result.notes_processed > 0 && result.notes_remaining > 0);
    assert.equal(result.notes_processed + result.notes_remaining, 30);
    assert.equal(await liveCount(storage), result.notes_remaining);
  });

  it('compresses a synthesis past the word limit with one more call', async () => {
    const { core, storage, server } = await setup({ steps: [{ reply: longSynthesisPlan(700) }, { reply: 'A compact synthesis.' }] });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok');
    assert.equal(result.synthesis_compressed, true);
    assert.equal((await storage.get('proj/_synthesis.md'))?.body.toString(), 'A compact synthesis.');
    assert.match(server.requests[1]!.messages[1]!.content, /about 8 sentences/);
  });

  it('keeps the long synthesis whole when the compression fails or returns nothing', async () => {
    for (const failing of [[{ status: 500 }] as Step[], [{ reply: '   ' }] as Step[]]) {
      const { core, storage } = await setup({ steps: [{ reply: longSynthesisPlan(700) }, ...failing] });
      const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
      assert.equal(result.status, 'ok');
      assert.equal(result.synthesis_compressed, false);
      assert.match(result.warnings?.join() ?? '', /kept whole/);
      assert.equal((await storage.get('proj/_synthesis.md'))?.body.toString().split(' ').length, 700);
    }
  });

  it('leaves notes written during a consolidation in live/ for the next one', async () => {
    let core!: Awaited<ReturnType<typeof setup>>['core'];
    const steps: Step[] = [
      {
        dynamic: () => {
          void core.notes.write(owner, { space_id: 'proj', category: 'todo', content: 'written meanwhile' });
          return FIRST_PLAN;
        },
      },
    ];
    ({ core } = await setup({ steps }));
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.notes_processed, 15);
    assert.deepEqual(
      (await core.notes.read(owner, { space_id: 'proj' })).notes.map((n) => n.content),
      ['written meanwhile'],
    );
  });

  it('runs one consolidation per space at a time: a second caller gets conflict at once', async () => {
    // The first's model answers only once the second was refused: "at once" is "while the first still runs", not a time.
    let answer!: () => void;
    const refused = new Promise<void>((resolve) => (answer = resolve));
    const { core, server } = await setup({ steps: [{ until: refused, then: { reply: FIRST_PLAN } }], consolidation: { timeoutMs: 600_000 } });
    let firstEnded = false;
    const first = core.consolidation.consolidate(owner, { space_id: 'proj' }).finally(() => (firstEnded = true));
    while (server.requests.length === 0) await new Promise((resolve) => setImmediate(resolve)); // the first holds the lease: its model call is out
    await assert.rejects(
      core.consolidation.consolidate(owner, { space_id: 'proj' }),
      (e) => isLiveMemError(e, 'conflict') && /already running/.test(e.message),
    );
    assert.equal(firstEnded, false, 'refused while the first runs, not after it');
    answer();
    assert.equal((await first).status, 'ok');
  });
});

describe('consolidation: a crash at any point is finished by the next run, exactly once', () => {
  for (const point of ['before-commit', 'after-commit', 'after-bank-writes', 'after-meta', 'after-history', 'after-live-delete']) {
    it(`crash ${point}`, async () => {
      const storage = createMemoryDriver();
      const crash = new Error(`crash ${point}`);
      const { core: crashing } = await setup({
        steps: scenarios.validPlan,
        storage,
        fault: async (p) => {
          if (p === point) throw crash;
        },
      });
      await assert.rejects(
        crashing.consolidation.consolidate(owner, { space_id: 'proj' }).then((r) => {
          if (r.status !== 'ok') throw crash;
          return r;
        }),
      );
      // The lease of a crashed process would expire; here the holder released it in `finally`.
      const { core, server } = await setup({
        steps: [{ reply: plan([rewrite('activeContext.md', '# Active\n\nSecond run.\n')], 'Second.') }],
        storage,
        notes: 0,
      });
      const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
      assert.equal(result.status, 'ok', result.message);
      const committed = point !== 'before-commit';
      assert.equal(result.recovered !== undefined, committed);
      assert.equal(server.requests.length, committed ? 0 : 1, 'a committed consolidation is not asked again');
      const info = await core.spaces.info(owner, { space_id: 'proj' });
      assert.equal(info.total_notes_processed, 15, 'every note counted once');
      assert.equal(info.consolidation_count, 1);
      assert.equal(await liveCount(storage), 0);
      const history = await historyNoteNames(storage, 'proj');
      assert.equal(history.length, 15, 'every note in history once');
      assert.equal(new Set(history).size, 15);
    });
  }
});
