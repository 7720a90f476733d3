/**
 * Summaries updates on the memory driver, with the real openai adapter talking to a scripted
 * OpenAI-compatible server: first runs, incremental runs, failures, full rebuilds, dry runs,
 * concurrent runners, permissions and validation.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import type { Caller } from '../../../../src/core/caller.js';
import { createCore } from '../../../../src/core/core.js';
import { readFences } from '../../../../src/core/prompt-fence.js';
import { stampToIso } from '../../../../src/core/note-name.js';
import type { LevelReport } from '../../../../src/core/recall/summaries/run-types.js';
import { isLiveMemError } from '../../../../src/shared/errors.js';
import { listKeys } from '../../../../src/storage/list.js';
import { createMemoryDriver } from '../../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../../src/storage/types.js';
import type { LlmClient } from '../../../../src/llm/types.js';
import { owner, steppingClock } from '../../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../../../helpers/scripted-llm.js';
import { assertCoverage, storedSummaries, summaryStep } from '../../../helpers/summaries.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

/** Small sizes so a few notes make several windows: notes of 500 chars, windows of 2 notes. */
const SMALL = { window_chars: 1000, min_flush_chars: 500, group_chars: 1000, batch_delay_ms: 0, concurrency: 1 };

interface Setup {
  steps?: Step[];
  notes?: number;
  storage?: StorageDriver;
  timeoutMs?: number;
  warnings?: string[];
}

async function setup({ steps = [summaryStep()], notes = 8, storage = createMemoryDriver(), timeoutMs = 2_000, warnings }: Setup = {}) {
  const server = await startScriptedLlm(steps);
  servers.push(server);
  const clock = steppingClock('2026-02-20T18:00:00.000Z', 1000);
  const logger = {
    debug: () => undefined,
    info: () => undefined,
    warn: (message: string) => void warnings?.push(message),
    error: () => undefined,
  };
  const core = createCore({ storage, clock, llm: server.client(), consolidation: { retryBackoffMs: 5, timeoutMs }, logger });
  await core.spaces.create(owner, { space_id: 'proj' });
  const names: string[] = [];
  const write = async (count: number, chars = 500) => {
    for (let i = 0; i < count; i++) {
      const text = `Note ${names.length}: `;
      names.push(
        (
          await core.notes.write(owner, {
            space_id: 'proj',
            category: 'progress',
            content: text + 'x'.repeat(chars - text.length),
            agent: i % 2 ? 'cline' : 'claude',
          })
        ).filename,
      );
    }
  };
  await write(notes);
  return { core, storage, server, clock, names, write };
}

/**
 * A setup whose model answers only once the gate opens (`open`, or `afterRefusal`: once a second
 * runner has been refused the space's summaries lease, so a pass is sure to be under way when it
 * asks). The store is the memory driver: a refused runner goes on in microtasks, while the gated
 * pass needs the scripted model's HTTP answer, so what follows the refusal runs before the pass ends.
 */
async function gated() {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  let refused: () => void = () => undefined;
  const refusal = new Promise<void>((resolve) => {
    refused = resolve;
  });
  const memory = createMemoryDriver();
  const storage: StorageDriver = {
    ...memory,
    put: async (key, body, options) => {
      try {
        return await memory.put(key, body, options);
      } catch (error) {
        if (key === 'proj/_summaries/lock.json' && isLiveMemError(error, 'precondition_failed')) refused();
        throw error;
      }
    },
  };
  const made = await setup({ storage });
  const client = made.server.client();
  const llm: LlmClient = {
    ...client,
    label: client.label,
    chat: async (request) => {
      await opened;
      return client.chat(request);
    },
  };
  const core = createCore({ storage, llm, consolidation: { retryBackoffMs: 5, timeoutMs: 2_000 } });
  return {
    ...made,
    core,
    llm,
    gate: {
      open,
      afterRefusal: async () => {
        await refusal;
        open();
      },
    },
  };
}

const byLevel = (result: { levels: LevelReport[] }, level: number) => result.levels.find((l) => l.level === level) as LevelReport;

describe('summaries update', () => {
  it('a first run seals the full windows and builds the levels above', async () => {
    const { core, storage, server, names } = await setup();
    const result = await core.summaries.update(owner, { space_id: 'proj', ...SMALL });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(byLevel(result, 1).created, 4);
    assert.equal(byLevel(result, 1).sealed, 4);
    // L1 summaries of 300 chars: groups of three (900 ≥ 800), then one open group; then one L3 over both.
    assert.deepEqual([byLevel(result, 2).created, byLevel(result, 2).sealed, byLevel(result, 2).open], [2, 1, 1]);
    assert.deepEqual([byLevel(result, 3).created, byLevel(result, 3).open], [1, 1]);
    assert.equal(result.levels.length, 3);
    assert.equal(result.written, 7);
    assert.equal(result.llm_calls, 7);
    assert.equal(server.requests.length, 7);
    assert.ok(result.llm_prompt_tokens > 0 && result.llm_completion_tokens > 0);
    const all = await assertCoverage(storage, 'proj', names);
    const first = all.find((s) => s.level === 1)!;
    assert.equal(first.id, `L1-${names[0]!.slice(0, 15)}-${names[0]!.split('_').at(-1)!.replace('.md', '')}`);
    const record = JSON.parse((await storage.get(`proj/_summaries/L1/${first.id}.json`))!.body.toString());
    assert.equal(record.format, 'live-mem-summary');
    assert.equal(record.format_version, 1);
    assert.equal(record.range_start, stampToIso(names[0]!.slice(0, 15)));
    assert.match(record.hash, /^[0-9a-f]{64}$/);
    assert.deepEqual(record.agents, ['claude', 'cline'], 'agents from the notes, not from the model');
    assert.deepEqual(record.files_mentioned, ['src/export.ts']);
    assert.equal(record.chars_in, 1000);
    assert.equal(record.model, 'scripted-model');
    // The prompt carries the notes with their timestamp, agent and category, in JSON mode.
    const prompt = server.requests[0]!;
    assert.equal(prompt.response_format?.type, 'json_object');
    assert.ok(readFences(prompt.messages[1]!.content, 'note')[0]?.text.startsWith(`Timestamp: ${record.range_start}\nAgent: claude\nCategory: progress`));
    assert.match(readFences(server.requests[4]!.messages[1]!.content, 'summary')[0]?.text ?? '', /^\(level 1, /);
    assert.equal(await storage.get('proj/_summaries/lock.json'), null, 'the lease is released');
  });

  it('a second run with no new note calls no model and writes nothing', async () => {
    const { core, storage, server } = await setup();
    await core.summaries.update(owner, { space_id: 'proj', ...SMALL });
    const before = await storedSummaries(storage, 'proj');
    const calls = server.requests.length;
    const again = await core.summaries.update(owner, { space_id: 'proj', ...SMALL });
    assert.equal(again.status, 'ok');
    assert.equal(again.written, 0);
    assert.equal(again.deleted, 0);
    assert.equal(server.requests.length, calls);
    assert.deepEqual(await storedSummaries(storage, 'proj'), before);
  });

  it('new notes grow the open window under its id and regenerate it and its parents only', async () => {
    const { core, storage, server, names, write } = await setup({ notes: 7 });
    const first = await core.summaries.update(owner, { space_id: 'proj', ...SMALL });
    assert.equal(first.status, 'ok', first.message);
    assert.deepEqual([byLevel(first, 1).created, byLevel(first, 1).open], [4, 1], 'three full windows and an open one');
    const before = new Map((await storedSummaries(storage, 'proj')).map((s) => [s.id, s]));
    const openId = [...before.values()].find((s) => s.level === 1 && !s.sealed)!.id;
    const calls = server.requests.length;

    await write(1);
    const grown = await core.summaries.update(owner, { space_id: 'proj', ...SMALL });
    assert.equal(grown.status, 'ok', grown.message);
    assert.deepEqual([byLevel(grown, 1).regenerated, byLevel(grown, 1).unchanged, byLevel(grown, 1).sealed], [1, 3, 1]);
    assert.equal(server.requests.length - calls, grown.written);
    const after = await assertCoverage(storage, 'proj', names);
    const changed = after.filter((s) => before.get(s.id)?.hash !== s.hash).map((s) => s.id);
    const open = after.find((s) => s.id === openId)!;
    assert.equal(open.sealed, true, 'the window is full now: sealed, same id');
    assert.equal(open.covers.length, 2);
    const parents = after.filter((s) => s.level > 1 && changed.some((id) => s.covers.includes(id)));
    assert.deepEqual(changed.sort(), [openId, ...parents.map((s) => s.id)].sort(), 'only the window and its ancestors');
    assert.ok(changed.length >= 2 && changed.length < after.length);
  });

  it('a time flush seals the open window without calling the model', async () => {
    const { core, server, clock } = await setup({ notes: 5 });
    await core.summaries.update(owner, { space_id: 'proj', ...SMALL, level: 1 });
    const calls = server.requests.length;
    clock.set('2026-02-20T19:00:00.000Z');
    const flushed = await core.summaries.update(owner, { space_id: 'proj', ...SMALL, level: 1 });
    assert.equal(flushed.status, 'ok');
    assert.deepEqual([byLevel(flushed, 1).sealed, byLevel(flushed, 1).open, flushed.written], [1, 0, 1]);
    assert.equal(server.requests.length, calls);
  });

  it('a few notes below min_flush_chars wait, reported as pending', async () => {
    const { core, server } = await setup({ notes: 1 });
    const result = await core.summaries.update(owner, { space_id: 'proj', ...SMALL, min_flush_chars: 800 });
    assert.equal(result.status, 'ok');
    assert.deepEqual([result.pending_notes, result.pending_chars, result.written], [1, 500, 0]);
    assert.equal(server.requests.length, 0);
  });

  it('a note longer than a window is sliced, never cut: every character is summarised once', async () => {
    const { core, storage, server, names } = await setup({ notes: 0 });
    const long = await core.notes.write(owner, { space_id: 'proj', category: 'decision', content: 'y'.repeat(2_500) });
    names.push(long.filename);
    const result = await core.summaries.update(owner, { space_id: 'proj', ...SMALL, flush_after_ms: 0 });
    assert.equal(result.status, 'ok', result.message);
    const l1 = (await assertCoverage(storage, 'proj', names)).filter((s) => s.level === 1);
    assert.deepEqual(
      l1.flatMap((s) => s.covers),
      [1, 2, 3].map((i) => `${long.filename}#${i}/3`),
    );
    assert.deepEqual(
      l1.map((s) => s.id.replace(/^.*-/, '')),
      [long.filename.split('_').at(-1)!.replace('.md', ''), 'p2', 'p3'],
    );
    const sent = server.requests.slice(0, 3).map((r) => /\n\n(y+)$/.exec(readFences(r.messages[1]!.content, 'note')[0]?.text ?? '')?.[1]?.length ?? 0);
    assert.equal(
      sent.reduce((a, b) => a + b, 0),
      2_500,
    );
    assert.match(server.requests[1]!.messages[1]!.content, /Part 2 of 3 of a longer note/);
  });

  for (const [label, steps, timeoutMs] of [
    ['an HTTP 500', [summaryStep(), { status: 500 }, { status: 500 }, { status: 500 }, summaryStep()], 2_000],
    ['a timeout', [summaryStep(), { delayMs: 1_500 }, { delayMs: 1_500 }, { delayMs: 1_500 }, summaryStep()], 300],
    ['an empty answer', [summaryStep(), { reply: '' }, { reply: '' }, summaryStep()], 2_000],
    [
      'an answer that is not the JSON asked for',
      [summaryStep(), { reply: 'Sure! Here is a summary.' }, { reply: '{"text": "no summary field"}' }, summaryStep()],
      2_000,
    ],
  ] as const) {
    it(`${label} writes nothing for that window: partial, and the next run fills it`, async () => {
      const { core, storage, names } = await setup({ steps: [...steps] as Step[], timeoutMs });
      const result = await core.summaries.update(owner, { space_id: 'proj', ...SMALL });
      assert.equal(result.status, 'partial');
      assert.equal(result.failed, 1);
      assert.equal(result.written, 3);
      assert.equal(result.failures?.length, 1);
      assert.equal(result.levels.length, 1, 'the levels above wait for a complete level 1');
      assert.match(String(result.message), /level 1 is incomplete/);
      const l1 = (await storedSummaries(storage, 'proj')).filter((s) => s.level === 1);
      assert.equal(l1.length, 3);
      const again = await core.summaries.update(owner, { space_id: 'proj', ...SMALL });
      assert.equal(again.status, 'ok', again.message);
      assert.equal(byLevel(again, 1).created, 1);
      assert.equal(byLevel(again, 1).unchanged, 3);
      await assertCoverage(storage, 'proj', names);
    });
  }

  it('a failure before anything is written is an error, never ok', async () => {
    const { core, storage } = await setup({ steps: [{ status: 500 }] });
    const result = await core.summaries.update(owner, { space_id: 'proj', ...SMALL });
    assert.equal(result.status, 'error');
    assert.equal(result.written, 0);
    assert.equal(result.failed, 4);
    assert.deepEqual(await storedSummaries(storage, 'proj'), []);
  });

  it('full: recomputes every level with the new window size, reuses nothing stale, deletes the old ones after', async () => {
    const { core, storage, server, names } = await setup();
    await core.summaries.update(owner, { space_id: 'proj', ...SMALL });
    const old = (await storedSummaries(storage, 'proj')).map((s) => s.id);
    const same = await core.summaries.update(owner, { space_id: 'proj', ...SMALL, strategy: 'full' });
    assert.equal(same.written, 0, 'same sizes: every summary matches and is reused');
    const calls = server.requests.length;
    const wider = await core.summaries.update(owner, { space_id: 'proj', ...SMALL, strategy: 'full', window_chars: 2000, min_flush_chars: 500 });
    assert.equal(wider.status, 'ok', wider.message);
    assert.equal(byLevel(wider, 1).created, 2);
    assert.equal(byLevel(wider, 1).deleted, 4);
    assert.ok(server.requests.length > calls);
    const all = await assertCoverage(storage, 'proj', names);
    assert.deepEqual(
      all.filter((s) => s.level === 1).map((s) => s.covers.length),
      [4, 4],
    );
    assert.ok(
      all.filter((s) => s.level === 1).every((s) => !old.includes(s.id)),
      'the old level 1 is gone',
    );
    assert.equal(all.find((s) => s.level === 1)!.id, `${old[0]}-r2`, 'a sealed id never names another content');
  });

  it('dry_run: reports the plan, calls no model, writes nothing', async () => {
    const { core, storage, server } = await setup();
    const before = await listKeys(storage, 'proj/');
    const dry = await core.summaries.update(owner, { space_id: 'proj', ...SMALL, dry_run: true });
    assert.equal(dry.status, 'ok');
    assert.equal(dry.dry_run, true);
    assert.equal(byLevel(dry, 1).created, 4);
    assert.ok(byLevel(dry, 2).created >= 1);
    assert.ok(dry.actions!.some((a) => a.action === 'create' && a.level === 1));
    assert.equal(server.requests.length, 0);
    assert.deepEqual(await listKeys(storage, 'proj/'), before);
  });

  it('an update asked while this process runs a pass on the space joins it: its result, its progress, no second model call', async () => {
    const { core, storage, server, names, gate } = await gated();
    const job = await core.summaries.start(owner, { space_id: 'proj', ...SMALL });
    const progress: string[] = [];
    const joined = core.summaries.update(owner, { space_id: 'proj', ...SMALL }, { onProgress: (event) => progress.push(event.phase) });
    await gate.afterRefusal();
    const result = await joined;
    assert.equal(result.status, 'ok', result.message);
    assert.equal(result.joined, true);
    assert.equal(result.written, 7);
    assert.ok(progress.includes('llm'), 'the pass reported its progress to the joined call');
    assert.equal(server.requests.length, 7, 'one pass of model calls, not two');
    await core.idle();
    const [record] = (await core.summaries.status(owner, { space_id: 'proj', job_id: job.job_id })).jobs;
    assert.deepEqual({ ...result, joined: undefined }, { ...record!.result, joined: undefined }, 'the background pass is the answer');
    await assertCoverage(storage, 'proj', names);
  });

  it('an update that asks for something else waits for the pass of this process, then runs its own', async () => {
    const { core, storage, server, names, gate } = await gated();
    await core.summaries.start(owner, { space_id: 'proj', ...SMALL });
    const full = core.summaries.update(owner, { space_id: 'proj', ...SMALL, window_chars: 2000, min_flush_chars: 1000, strategy: 'full' });
    await gate.afterRefusal();
    const result = await full;
    assert.equal(result.status, 'ok', result.message);
    assert.equal(result.joined, undefined);
    assert.equal(result.strategy, 'full');
    assert.ok(result.written > 0 && result.llm_calls > 0, 'the full rebuild ran, with its own window size');
    assert.equal(server.requests.length, 7 + result.llm_calls, 'the pass, then the full rebuild');
    await core.idle();
    await assertCoverage(storage, 'proj', names);
  });

  it("another process's pass is still conflict at once, and nothing is written twice", async () => {
    const { core, storage, names, gate, llm } = await gated();
    const other = createCore({ storage, llm, consolidation: { retryBackoffMs: 5, timeoutMs: 2_000 } });
    await core.summaries.start(owner, { space_id: 'proj', ...SMALL });
    await assert.rejects(other.summaries.update(owner, { space_id: 'proj', ...SMALL }), (error) => isLiveMemError(error, 'conflict'));
    gate.open();
    await core.idle();
    await assertCoverage(storage, 'proj', names);
  });

  it('a corrupt summary is left out of records (with a warning) and rebuilt by the next run', async () => {
    const warnings: string[] = [];
    const { core, storage, names } = await setup({ warnings });
    await core.summaries.update(owner, { space_id: 'proj', ...SMALL, level: 1 });
    const [first] = (await storedSummaries(storage, 'proj')).filter((s) => s.level === 1);
    await storage.put(`proj/_summaries/L1/${first!.id}.json`, '{"format": "live-mem-summary", "trunc');
    const records = await core.summaries.records('proj');
    assert.equal(records.length, 3);
    assert.ok(warnings.some((w) => w.includes(first!.id)));
    const rebuilt = await core.summaries.update(owner, { space_id: 'proj', ...SMALL, level: 1 });
    assert.equal(rebuilt.status, 'ok', rebuilt.message);
    assert.equal(byLevel(rebuilt, 1).created, 1);
    assert.equal((await core.summaries.records('proj')).length, 4);
    await assertCoverage(storage, 'proj', names);
  });
});

describe('summaries list and read', () => {
  it('lists newest first per level with previews; reads a summary with its notes or children', async () => {
    const { core, names } = await setup();
    await core.summaries.update(owner, { space_id: 'proj', ...SMALL });
    const list = await core.summaries.list(owner, { space_id: 'proj' });
    assert.equal(list.total, 7);
    const l1 = list.summaries.filter((s) => s.level === 1);
    assert.ok(l1[0]!.range_end > l1[1]!.range_end, 'newest first');
    assert.equal(l1[0]!.covers, 2);
    assert.ok(l1[0]!.preview.length <= 301);
    assert.equal((await core.summaries.list(owner, { space_id: 'proj', level: 2 })).total, 2);
    const note = await core.summaries.read(owner, { space_id: 'proj', summary_id: l1.at(-1)!.id });
    assert.deepEqual(
      (note as { notes: Array<{ filename: string }> }).notes.map((n) => n.filename),
      names.slice(0, 2),
    );
    assert.equal((note as { notes: Array<{ timestamp: string }> }).notes[0]!.timestamp, stampToIso(names[0]!.slice(0, 15)));
    const l2 = list.summaries.find((s) => s.level === 2)!;
    const group = (await core.summaries.read(owner, { space_id: 'proj', summary_id: l2.id })) as { children: Array<{ id: string; range_start: string }> };
    assert.ok(group.children.length >= 1 && group.children.every((c) => c.id.startsWith('L1-') && c.range_start));
  });

  it('bad input is invalid_input and changes nothing; an unknown summary is not_found', async () => {
    const { core, storage, server } = await setup();
    const before = await listKeys(storage, 'proj/');
    const bad: Array<Record<string, unknown>> = [
      { level: 7 },
      { level: 0 },
      { window_chars: 10 },
      { wiggle: 0.9 },
      { concurrency: 0 },
      { strategy: 'sometimes' },
      { min_flush_chars: 5000, window_chars: 1000 },
      { batch_delay_ms: -1 },
    ];
    for (const input of bad) {
      await assert.rejects(
        core.summaries.update(owner, { space_id: 'proj', ...input } as never),
        (error) => isLiveMemError(error, 'invalid_input'),
        JSON.stringify(input),
      );
    }
    await assert.rejects(core.summaries.read(owner, { space_id: 'proj', summary_id: '../etc' }), (error) => isLiveMemError(error, 'invalid_input'));
    await assert.rejects(core.summaries.read(owner, { space_id: 'proj', summary_id: 'L1-20260101T000000-zz' }), (error) => isLiveMemError(error, 'not_found'));
    await assert.rejects(core.summaries.list(owner, { space_id: 'proj', level: 9 }), (error) => isLiveMemError(error, 'invalid_input'));
    await assert.rejects(core.summaries.list(owner, { space_id: 'ghost' }), (error) => isLiveMemError(error, 'not_found'));
    assert.deepEqual(await listKeys(storage, 'proj/'), before);
    assert.equal(server.requests.length, 0);
  });

  it('update needs write; list, read and status need read; another space is forbidden', async () => {
    const { core, server } = await setup();
    const reader: Caller = { agent: 'reader', permissions: new Set(['read']), spaces: new Set(['proj']), canChooseAgent: false };
    const elsewhere: Caller = { agent: 'other', permissions: new Set(['read', 'write']), spaces: new Set(['other']), canChooseAgent: false };
    await assert.rejects(core.summaries.update(reader, { space_id: 'proj' }), (error) => isLiveMemError(error, 'forbidden'));
    await assert.rejects(core.summaries.start(reader, { space_id: 'proj' }), (error) => isLiveMemError(error, 'forbidden'));
    assert.equal((await core.summaries.list(reader, { space_id: 'proj' })).status, 'ok');
    assert.equal((await core.summaries.status(reader, { space_id: 'proj' })).status, 'ok');
    for (const call of [
      () => core.summaries.update(elsewhere, { space_id: 'proj' }),
      () => core.summaries.list(elsewhere, { space_id: 'proj' }),
      () => core.summaries.read(elsewhere, { space_id: 'proj', summary_id: 'L1-20260101T000000-zz' }),
      () => core.summaries.status(elsewhere, { space_id: 'proj' }),
    ]) {
      await assert.rejects(call(), (error) => isLiveMemError(error, 'forbidden'));
    }
    assert.equal(server.requests.length, 0);
  });

  it('without a model: config_error, unless it is a dry run', async () => {
    const storage = createMemoryDriver();
    const core = createCore({ storage });
    await core.spaces.create(owner, { space_id: 'proj' });
    await assert.rejects(
      core.summaries.update(owner, { space_id: 'proj' }),
      (error) => isLiveMemError(error, 'config_error') && /LIVE_MEM_LLM_BASE_URL/.test(error.message),
    );
    assert.equal((await core.summaries.update(owner, { space_id: 'proj', dry_run: true })).status, 'ok');
  });
});
