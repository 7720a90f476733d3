import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { lockSpace } from '../../../src/core/commit/space-lock.js';
import { createCore } from '../../../src/core/core.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { readFences } from '../../../src/core/prompt-fence.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { bankModel, compactionRequest, digesting, progressFile } from '../../helpers/compaction.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../../helpers/scripted-llm.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

const BUDGET = 1200;

/** A space whose progress.md (append-only in the default rules) holds `entries` entries, and a core on the scripted model. */
async function setup(
  steps: Step[],
  options: { entries?: number; auto?: boolean; storage?: StorageDriver; budgets?: { fileTokens: number; bankTokens?: number } } = {},
) {
  const server = await startScriptedLlm(steps);
  servers.push(server);
  const storage = options.storage ?? createMemoryDriver();
  const core = createCore({
    storage,
    clock: steppingClock('2026-03-01T10:00:00.000Z', 1000),
    llm: server.client(),
    consolidation: { retryBackoffMs: 5, timeoutMs: 5_000 },
    budgets: options.budgets ?? { fileTokens: BUDGET },
    compaction: { auto: options.auto ?? false },
  });
  if (!(await storage.stat('proj/_meta.json'))) await core.spaces.create(owner, { space_id: 'proj' });
  if (options.entries !== undefined) await storage.put('proj/bank/progress.md', progressFile(options.entries));
  return { core, storage, server };
}

const progress = async (storage: StorageDriver) => (await storage.get('proj/bank/progress.md'))?.body.toString('utf8') ?? '';
const tokens = (text: string) => Math.ceil(text.length / 3.5);
const historyKeys = async (storage: StorageDriver) => listKeys(storage, 'proj/history/');

/** Consolidates one note at a time until progress.md is over its budget. */
async function driveOverBudget(core: Awaited<ReturnType<typeof setup>>['core'], storage: StorageDriver): Promise<number> {
  let runs = 0;
  while (tokens(await progress(storage)) <= BUDGET) {
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `step ${runs}` });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    runs++;
  }
  return runs;
}

describe('compaction (core, memory driver, scripted model)', () => {
  it('a file driven over budget by consolidations is compacted under budget; pre-images kept once, with the original text', async () => {
    const { core, storage, server } = await setup([bankModel()], { entries: 3 });
    const runs = await driveOverBudget(core, storage);
    assert.ok(runs > 3, `${runs} consolidations`);
    const before = await progress(storage);
    const requestsBefore = server.requests.length;

    const result = await core.compaction.compact(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    const [file] = result.files;
    assert.equal(file?.filename, 'progress.md');
    assert.equal(file?.tokens_before, tokens(before));
    assert.ok(file.tokens_after <= BUDGET && file.tokens_after < file.tokens_before, JSON.stringify(file));
    assert.equal(file.budget_tokens, BUDGET);
    assert.ok(file.sections_digested > 0);
    assert.equal(server.requests.length, requestsBefore + 1);
    const request = compactionRequest(server.requests.at(-1)?.messages ?? []);
    assert.equal(request?.file, 'progress.md');
    assert.equal(request?.budget_tokens, BUDGET);
    assert.equal(request?.target_tokens, 900);

    const after = await progress(storage);
    assert.equal(tokens(after), file.tokens_after);
    for (const line of before.split('\n').filter((l) => /\d{4}-\d{2}-\d{2}/.test(l))) assert.ok(after.includes(line), `dated line kept: ${line}`);
    const newest = before.slice(before.lastIndexOf('### Entry'));
    assert.ok(after.endsWith(newest), 'the newest entry byte for byte');

    const cid = result.compaction_id as string;
    const record = JSON.parse((await storage.get(`proj/history/${cid}/record.json`))?.body.toString() ?? '{}');
    assert.equal(record.kind, 'compaction');
    assert.deepEqual(record.notes, []);
    assert.deepEqual(record.bank_files, [{ filename: 'progress.md', kind: 'updated' }]);
    assert.equal(record.preimages, file.sections_digested);
    const preimages = JSON.parse((await storage.get(`proj/history/${cid}/preimages.json`))?.body.toString() ?? '{}');
    assert.equal(preimages.version, 1);
    assert.equal(preimages.sections.length, file.sections_digested);
    for (const section of preimages.sections) {
      assert.equal(section.filename, 'progress.md');
      assert.ok(before.includes(section.content) && !after.includes(section.content), `${section.path.join(' > ')}: the original text`);
      assert.match(section.content, /^#+ /);
    }
    assert.deepEqual(preimages.sections[1].path, ['Progress', 'History', 'Entry 0']);
    assert.equal(await storage.get(`proj/history/${cid}/notes.json`), null, 'a compaction moves no note');
    assert.equal(await storage.get('proj/_consolidation/pending.json'), null);
    assert.equal((await core.spaces.info(owner, { space_id: 'proj' })).consolidation_count, runs, 'no consolidation counted');

    // Within budget now: nothing more to do, no model call, no second set of pre-images.
    const again = await core.compaction.compact(owner, { space_id: 'proj' });
    assert.equal(again.status, 'ok');
    assert.match(again.message ?? '', /within its budget|nothing to compact/);
    assert.equal(server.requests.length, requestsBefore + 1);
    assert.equal((await historyKeys(storage)).filter((key) => key.endsWith('/preimages.json')).length, 1);
  });

  it('what a compaction digested away is found again by memory_search, as an earlier version of the section', async () => {
    const { core, storage } = await setup([digesting()], { entries: 20 });
    const original = (await progress(storage)).replace('### Entry 1\n\n', '### Entry 1\n\nThe quetzal migration was argued over for a week.\n');
    await storage.put('proj/bank/progress.md', original);
    const result = await core.compaction.compact(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.ok(!(await progress(storage)).includes('quetzal'), 'the digest dropped the undated line');
    const { results } = await core.recall.search(owner, { space_id: 'proj', query: 'quetzal migration' });
    const hit = results[0] as Record<string, unknown> | undefined;
    assert.equal(hit?.source, 'bank_history');
    assert.equal(hit?.compaction_id, result.compaction_id);
    assert.deepEqual(hit?.path, ['Progress', 'History', 'Entry 1']);
    const read = await core.history.read(owner, { space_id: 'proj', consolidation_id: result.compaction_id as string });
    assert.ok(read.preimages.some((section) => section.content.includes('quetzal')));
  });

  it('a bank over its own budget is compacted within it, the largest file first, though every file is within its file budget', async () => {
    const { core, storage } = await setup([digesting()], { entries: 20, budgets: { fileTokens: 100_000, bankTokens: BUDGET + 200 } });
    await storage.put('proj/bank/techContext.md', '# Tech\n\n- Node 20\n');
    const small = tokens('# Tech\n\n- Node 20\n');
    assert.ok(tokens(await progress(storage)) < 100_000 && tokens(await progress(storage)) + small > BUDGET + 200);
    const result = await core.compaction.compact(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.deepEqual(
      result.files.map((file) => file.filename),
      ['progress.md'],
      'the small file is left alone',
    );
    assert.ok(tokens(await progress(storage)) + small <= BUDGET + 200, 'the bank fits its budget');
    assert.equal(result.files[0]?.budget_tokens, BUDGET + 200 - small, 'the largest file gives back what the bank is over');
  });

  it('progress.md (append-only) is shrunk by compaction, but a consolidation plan that shrinks it is refused', async () => {
    const shrink: Step = {
      dynamic: (messages) =>
        compactionRequest(messages)
          ? (digesting() as { dynamic: (m: typeof messages) => string }).dynamic(messages)
          : // The last entry is always shown whole, even when the file is sent in part: deleting it shrinks the file.
            JSON.stringify({
              files: [{ filename: 'progress.md', action: 'edit', edits: [{ op: 'delete', section: 'Progress > History > Entry 13' }] }],
              synthesis: 's',
            }),
    };
    const { core, storage } = await setup([shrink], { entries: 20 });
    const compacted = await core.compaction.compact(owner, { space_id: 'proj', file: 'progress.md' });
    assert.equal(compacted.status, 'ok', compacted.message);
    assert.ok((compacted.files[0]?.tokens_after ?? 0) < (compacted.files[0]?.tokens_before ?? 0));
    const kept = await progress(storage);

    await storage.put('proj/bank/progress.md', progressFile(14));
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'x' });
    const consolidated = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(consolidated.status, 'error');
    assert.match(consolidated.message ?? '', /append-only/);
    assert.equal(await progress(storage), progressFile(14));
    assert.notEqual(kept, progressFile(14));
  });

  /** A compaction whose model spoils its digests: refused by `guard`, nothing changed. */
  async function refusal(step: Step | Step[], pattern: RegExp, expectedRequests = 1) {
    const { core, storage, server } = await setup(Array.isArray(step) ? step : [step], { entries: 20 });
    const before = await progress(storage);
    const result = await core.compaction.compact(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error', result.message);
    assert.match(result.message ?? '', pattern);
    assert.match(result.message ?? '', /nothing was changed/);
    assert.equal(result.files[0]?.tokens_after, result.files[0]?.tokens_before);
    assert.match(result.files[0]?.refused ?? '', pattern);
    assert.equal(result.compaction_id, undefined);
    assert.equal(await progress(storage), before, 'the file is untouched');
    assert.deepEqual(await historyKeys(storage), [], 'no history entry');
    assert.equal(await storage.get('proj/_consolidation/pending.json'), null);
    assert.equal(await storage.get('proj/_consolidation/lock.json'), null, 'the lease is released');
    assert.equal(server.requests.length, expectedRequests);
    return result;
  }
  const refused = async (step: Step | Step[], pattern: RegExp, expectedRequests = 1): Promise<void> => {
    await refusal(step, pattern, expectedRequests);
  };

  it('refuses digests that drop a recent dated fact', () =>
    refused(
      digesting((digests) => digests.map((d, i) => (i === digests.length - 1 ? { ...d, content: d.content.replace(/- 2026-\d\d-\d\d /, '- ') } : d))),
      /verbatim guard.*2026-/,
    ));

  it('refuses a file emptied down to its headings', () =>
    refused(
      digesting((_digests, request) => request.sections.map((s) => ({ id: s.id, content: s.content.split('\n')[0] }))),
      /floor guard/,
    ));

  it('refuses a digest that grows its section instead of shrinking it', () =>
    refused(
      digesting((digests, request) => [...digests.filter((d) => d.id !== 's2'), { id: 's2', content: `${request.sections[1]?.content} and more words` }]),
      /shorter guard/,
    ));

  it('refuses a protected (newest) section digested when the older ones free enough', () =>
    refused(
      digesting((digests, request) => {
        const newest = request.sections.at(-1);
        return [...digests, { id: newest?.id, content: newest?.content.split('\n').slice(0, 3).join('\n') }];
      }),
      /protected guard/,
    ));

  it('refuses a digest that opens a code fence and never closes it: every section after it would be code', async () => {
    const result = await refusal(
      digesting((digests) => digests.map((d, i) => (i === 0 ? { ...d, content: `${d.content}\n\n\`\`\`sh\nnpm test` } : d))),
      /outline guard: with the digests put back, the file hides \d+ section\(s\): "Progress > History", "Progress > History > Entry 0"/,
    );
    assert.equal(result.code, 'invalid_input');
  });

  it('refuses an unknown section id', () =>
    refused(
      digesting((digests) => [...digests, { id: 's999', content: '## x' }]),
      /known-ids guard/,
    ));

  it('refuses a result still over the budget, as invalid_input', async () => {
    const result = await refusal(
      digesting((digests) => digests.slice(0, 1)),
      /budget guard/,
    );
    assert.equal(result.code, 'invalid_input');
  });

  it('an invalid plan twice: an error after one retry with a reminder; nothing changed', () =>
    refused({ reply: 'I would rather not.' }, /no usable digests twice.*not valid JSON|no usable digests twice.*no JSON/, 2));

  it('a truncated plan twice: an error after one retry; nothing changed', () =>
    refused({ reply: '{"digests": [', finishReason: 'length' }, /no usable digests twice \(the reply was cut/, 2));

  it('a model that fails (HTTP 400): an llm_error, nothing changed', async () => {
    const result = await refusal({ status: 400, message: 'bad request' }, /bad request/);
    assert.equal(result.code, 'llm_error');
  });

  it('a truncated reply, then a good one: compacted, the retry carrying a reminder', async () => {
    const { core, server } = await setup([{ reply: '{"digests": [', finishReason: 'length' }, digesting()], { entries: 20 });
    const result = await core.compaction.compact(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 2);
    const told = server.requests[1]?.messages.at(-1)?.content ?? '';
    assert.match(told, /could not be used/);
    assert.match(readFences(told, 'refusal')[0]?.text ?? '', /^the reply was cut/);
  });

  it('dry_run reports what would change and writes nothing', async () => {
    const { core, storage } = await setup([digesting()], { entries: 20 });
    const before = await progress(storage);
    const result = await core.compaction.compact(owner, { space_id: 'proj', dry_run: true });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(result.dry_run, true);
    assert.equal(result.compaction_id, undefined);
    assert.ok((result.files[0]?.tokens_after ?? 0) < (result.files[0]?.tokens_before ?? 0));
    assert.ok((result.files[0]?.sections_digested ?? 0) > 0);
    assert.ok(result.llm_tokens_used > 0);
    assert.equal(await progress(storage), before);
    assert.deepEqual(await historyKeys(storage), []);
  });

  it('a named file within its budget is left alone without a model call; an unknown one is not_found', async () => {
    const { core, server } = await setup([digesting()], { entries: 2 });
    const result = await core.compaction.compact(owner, { space_id: 'proj', file: 'progress.md' });
    assert.equal(result.status, 'ok');
    assert.match(result.message ?? '', /within its budget/);
    assert.deepEqual(result.files, []);
    assert.equal(server.requests.length, 0);
    await assert.rejects(core.compaction.compact(owner, { space_id: 'proj', file: 'nope.md' }), (error) => isLiveMemError(error, 'not_found'));
    await assert.rejects(core.compaction.compact(owner, { space_id: 'proj', file: '../x.md' }), (error) => isLiveMemError(error, 'invalid_input'));
  });

  it('without a model: nothing over budget is answered ok; a file over budget asks for one', async () => {
    const storage = createMemoryDriver();
    const core = createCore({ storage, budgets: { fileTokens: BUDGET } });
    await core.spaces.create(owner, { space_id: 'proj' });
    await storage.put('proj/bank/progress.md', progressFile(2));
    const calm = await core.compaction.compact(owner, { space_id: 'proj' });
    assert.equal(calm.status, 'ok');
    assert.match(calm.message ?? '', /nothing to compact/);
    await storage.put('proj/bank/progress.md', progressFile(20));
    await assert.rejects(core.compaction.compact(owner, { space_id: 'proj' }), (error) => isLiveMemError(error, 'config_error'));
  });

  it('a space whose lease is held: conflict, nothing asked', async () => {
    const { core, server } = await setup([digesting()], { entries: 20 });
    const held = await lockSpace(core.context, 'proj', owner, 'consolidation');
    try {
      await assert.rejects(core.compaction.compact(owner, { space_id: 'proj' }), (error) => isLiveMemError(error, 'conflict'));
    } finally {
      await held.release();
    }
    assert.equal(server.requests.length, 0);
  });

  it('a consolidation waits for a compaction holding the lease, not for another consolidation', async () => {
    const { core } = await setup([bankModel()], { entries: 3 });
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'while compacting' });
    const compacting = await lockSpace(core.context, 'proj', owner, 'compaction');
    const waiting = core.consolidation.consolidate(owner, { space_id: 'proj' });
    await new Promise((resolve) => setTimeout(resolve, 300));
    await compacting.release();
    const result = await waiting;
    assert.equal(result.status, 'ok', result.message);
    assert.equal(result.notes_processed, 1);

    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'while consolidating' });
    const consolidating = await lockSpace(core.context, 'proj', owner, 'consolidation');
    try {
      await assert.rejects(core.consolidation.consolidate(owner, { space_id: 'proj' }), (error) => isLiveMemError(error, 'conflict'));
    } finally {
      await consolidating.release();
    }
  });

  for (const auto of [true, false]) {
    it(`LIVE_MEM_COMPACTION=${auto ? 'auto' : 'off'}: ${auto ? 'compacts in the background after a consolidation that left a file over budget' : 'no compaction after a consolidation'}`, async () => {
      const { core, storage, server } = await setup([bankModel()], { entries: 6, auto });
      assert.ok(tokens(await progress(storage)) <= BUDGET);
      const compactionRequests = () => server.requests.filter((request) => compactionRequest(request.messages)).length;
      for (let i = 0; i < 20 && compactionRequests() === 0 && tokens(await progress(storage)) <= BUDGET; i++) {
        await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `step ${i}` });
        const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
        assert.equal(result.status, 'ok', result.message);
        await core.idle(); // the background compaction, if any, is done
      }
      const compactions = compactionRequests();
      const records = (await historyKeys(storage)).filter((key) => key.endsWith('/preimages.json'));
      if (auto) {
        assert.equal(compactions, 1);
        assert.equal(records.length, 1);
        assert.ok(tokens(await progress(storage)) <= BUDGET);
      } else {
        assert.equal(compactions, 0);
        assert.equal(records.length, 0);
        assert.ok(tokens(await progress(storage)) > BUDGET);
      }
    });
  }
});
