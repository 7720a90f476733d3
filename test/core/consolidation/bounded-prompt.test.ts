/**
 * The bounded prompt: a bank file over its budget is sent as its outline plus the sections the
 * window's notes touch, the model may not rewrite it whole nor replace what it did not see, and a
 * refused plan is asked again once, with the reason.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { edit, plan, rewrite } from '../../../fixtures/llm/scenarios.js';
import { createCore } from '../../../src/core/core.js';
import { readFences } from '../../../src/core/prompt-fence.js';
import { estimateTokens } from '../../../src/core/tokens.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../../helpers/scripted-llm.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

const WORDS = ['Harbor', 'Glacier', 'Lantern', 'Meadow', 'Orchard', 'Quarry', 'Falcon', 'Canyon', 'Walnut', 'Violin', 'Saddle', 'Beacon'];
const WORDS_MORE = ['Thistle', 'Marble', 'Tundra', 'Jasmine', 'Parsley', 'Cobalt', 'Lagoon', 'Nectar', 'Quiver', 'Raven', 'Sphinx', 'Tulip'];
const TOPICS = [...WORDS, ...WORDS_MORE];
const FILLER = 'Work went on as planned and the team wrote down what happened during that week. ';

/** decisions.md: a top, one section per topic (oldest first), ~100 tokens each. */
const bigFile = (topics: readonly string[] = TOPICS): string =>
  `# Decisions\n\nWhat the team decided, oldest first.\n\n${topics.map((t) => `## ${t}\n\n- the ${t.toLowerCase()} module: ${FILLER.repeat(4)}\n`).join('\n')}`;

const FILE_BUDGET = 600;

async function setup(
  steps: Step[],
  options: { content?: string; files?: Record<string, string>; notes?: string[]; contextWindow?: number; fileTokens?: number } = {},
) {
  const server = await startScriptedLlm(steps);
  servers.push(server);
  const storage = createMemoryDriver();
  const core = createCore({
    storage,
    clock: steppingClock('2026-02-20T18:00:00.000Z', 1000),
    llm: server.client({ contextWindow: options.contextWindow ?? 32_768, maxTokens: 1_000 }),
    consolidation: { retryBackoffMs: 5, timeoutMs: 5_000 },
    budgets: { fileTokens: options.fileTokens ?? FILE_BUDGET },
  });
  await core.spaces.create(owner, { space_id: 'proj' });
  for (const [name, content] of Object.entries(options.files ?? { 'decisions.md': options.content ?? bigFile() }))
    await storage.put(`proj/bank/${name}`, content);
  for (const content of options.notes ?? ['The orchard importer now streams its input instead of loading it whole.']) {
    await core.notes.write(owner, { space_id: 'proj', category: 'decision', content });
  }
  return { core, storage, server };
}

const bankText = async (storage: StorageDriver) => (await storage.get('proj/bank/decisions.md'))?.body.toString() ?? '';
const liveCount = async (storage: StorageDriver) => (await listKeys(storage, 'proj/live/')).filter((k) => k.endsWith('.md')).length;
const userOf = (server: ScriptedLlm, i: number) => server.requests[i]?.messages[1]?.content ?? '';
const bankPart = (user: string) => user.slice(user.indexOf('=== CURRENT BANK FILES ==='), user.indexOf('=== INSTRUCTIONS ==='));
const body = (topic: string) => `- the ${topic.toLowerCase()} module:`;

const appendOrchard = plan(
  [edit('decisions.md', [{ op: 'append', section: 'Decisions > Orchard', content: '- the orchard importer streams its input' }])],
  'S1',
);

describe('consolidation: a bounded prompt', () => {
  it('sends a file over its budget as its outline, its top, its last section and the old section the notes touch', async () => {
    const { core, storage, server } = await setup([{ reply: appendOrchard }]);
    const before = await bankText(storage);
    assert.ok(estimateTokens(before) > 3 * FILE_BUDGET, 'the file is well over its budget');
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);

    const bank = bankPart(userOf(server, 0));
    assert.match(
      bank,
      /\[SENT IN PART: this file holds about \d+ tokens, more than the 600 this prompt gives it\. \d+ of its 25 sections are shown whole[^\n]*\n<<<file decisions\.md nonce=/,
    );
    assert.ok(bank.includes('What the team decided, oldest first.'), 'the top');
    assert.ok(bank.includes(body('Orchard')), 'the old section the note touches');
    assert.ok(bank.includes(body('Tulip')), 'the last section, where appends land');
    for (const topic of ['Harbor', 'Glacier', 'Falcon', 'Raven']) {
      assert.ok(!bank.includes(body(topic)), `${topic} is elided`);
      assert.match(bank, new RegExp(`## ${topic}\\n\\[… elided section: \\d+ tokens, not shown …\\]`), `${topic}'s heading and size stay in the outline`);
    }
    // Bounded: the file's budget plus its outline (a heading and a mark per section), whatever the file's size.
    const outline = TOPICS.length * 20 + 150;
    assert.ok(estimateTokens(bank) <= FILE_BUDGET + outline, `${estimateTokens(bank)} tokens sent for a file of ${estimateTokens(before)}`);
    assert.match(userOf(server, 0), /A file marked SENT IN PART was not shown whole/);
    assert.equal(readFences(userOf(server, 0), 'note')[0]?.label, '1/1');

    const after = await bankText(storage);
    assert.match(after, /## Orchard\n\n- the orchard module:[^\n]*\n\n- the orchard importer streams its input\n\n## Quarry/);
    for (const topic of TOPICS) assert.ok(after.includes(body(topic)), `${topic} kept`);
  });

  it('shows whichever section the notes touch, and leaves out the ones they do not', async () => {
    const notes = ['Raven telemetry now samples once a minute.', 'We moved the glacier backups to the cold bucket.'];
    const { core, server } = await setup([{ reply: plan([], 'S') }], { notes });
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    const bank = bankPart(userOf(server, 0));
    assert.ok(bank.includes(body('Raven')) && bank.includes(body('Glacier')), 'both touched sections');
    assert.ok(!bank.includes(body('Orchard')) && !bank.includes(body('Harbor')), 'untouched ones elided');
  });

  it('appends to an append-only file whose last section is too large to show whole', async () => {
    const done = Array.from({ length: 300 }, (_, i) => `- step ${i} done`).join('\n');
    const { core, storage, server } = await setup(
      [{ reply: plan([edit('progress.md', [{ op: 'append', section: 'Progress > Done', content: '- step 300 done' }])]) }],
      {
        files: { 'progress.md': `# Progress\n\n## Done\n\n${done}\n` },
      },
    );
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    const bank = bankPart(userOf(server, 0));
    assert.match(bank, /## Done\n\[… elided start of this section: \d+ tokens, not shown …\]\n- step \d+ done\n[\s\S]*- step 299 done\n/);
    assert.ok(!bank.includes('- step 0 done'));
    assert.equal((await storage.get('proj/bank/progress.md'))?.body.toString(), `# Progress\n\n## Done\n\n${done}\n\n- step 300 done\n`);
  });

  it('sends a file within its budget whole', async () => {
    const { core, server } = await setup([{ reply: plan([], 'S') }], { content: bigFile(['Orchard', 'Harbor']) });
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    const user = userOf(server, 0);
    assert.deepEqual(
      readFences(user, 'file').find((file) => file.label === 'decisions.md'),
      { label: 'decisions.md', text: bigFile(['Orchard', 'Harbor']) },
    );
    assert.ok(!user.includes('SENT IN PART'));
  });

  it('refuses a whole rewrite of a file sent in part, tells the model why, and applies its second plan', async () => {
    const { core, storage, server } = await setup([
      { reply: plan([rewrite('decisions.md', `# Decisions\n\n${FILLER.repeat(40)}\n`)]) },
      { reply: appendOrchard },
    ]);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 2);
    const told = server.requests[1]!.messages.at(-1)!.content;
    assert.match(told, /^Your plan was refused and nothing was written\./);
    // The reason goes back fenced: it quotes the plan (prompt-fence.ts).
    assert.match(readFences(told, 'refusal')[0]?.text ?? '', /^decisions\.md was sent in part .* may not be rewritten whole: change it with section edits/);
    assert.equal(result.operations_failed, 1);
    assert.equal(result.operations_applied, 1);
    assert.match(result.warnings?.join('\n') ?? '', /the model's plan was refused \(decisions\.md was sent in part/);
    assert.match(await bankText(storage), /- the orchard importer streams its input/);
    assert.equal(await liveCount(storage), 0);
  });

  it('refuses a replace of a section the model was not shown, and applies a replace of one it was', async () => {
    const replaceGlacier = plan([edit('decisions.md', [{ op: 'replace', section: 'Decisions > Glacier', content: '- gone' }])]);
    const replaceOrchard = plan([edit('decisions.md', [{ op: 'replace', section: 'Decisions > Orchard', content: '- the orchard importer streams' }])]);
    const { core, storage, server } = await setup([{ reply: replaceGlacier }, { reply: replaceOrchard }]);
    const before = await bankText(storage);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.match(
      server.requests[1]!.messages.at(-1)!.content,
      /decisions\.md: cannot replace section "Decisions > Glacier": it holds 1 section\(s\) you were not shown whole \("Decisions > Glacier"; .*\): append or add to it instead/,
    );
    const after = await bankText(storage);
    assert.ok(after.includes(body('Glacier')), 'the unseen section is intact');
    assert.equal(after, before.replace(/(## Orchard\n\n)[^\n]*\n/, '$1- the orchard importer streams\n'));
  });

  it('refuses a replace of a shown section that holds unseen sub-sections', async () => {
    const replaceAll = plan([edit('decisions.md', [{ op: 'replace', section: 'Decisions', content: 'Nothing left.' }])]);
    const { core, storage } = await setup([{ reply: replaceAll }]);
    const before = await bankText(storage);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error');
    assert.match(
      result.message ?? '',
      /cannot replace section "Decisions": it holds \d+ section\(s\) you were not shown whole \("Decisions > Harbor", "Decisions > Glacier", "Decisions > Lantern", …;/,
    );
    assert.equal(await bankText(storage), before);
  });

  it('a plan refused twice changes nothing and leaves the notes for the next run', async () => {
    const deleteGlacier = plan([edit('decisions.md', [{ op: 'delete', section: 'Decisions > Glacier' }])]);
    const { core, storage, server } = await setup([{ reply: deleteGlacier }]);
    const before = await bankText(storage);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error');
    assert.equal(result.code, 'invalid_input');
    assert.match(result.message ?? '', /cannot delete section "Decisions > Glacier".*; nothing was changed$/);
    assert.equal(server.requests.length, 2, 'asked once more, not more');
    assert.equal(result.operations_failed, 2);
    assert.equal(await bankText(storage), before);
    assert.equal(await liveCount(storage), 1);
    assert.deepEqual(await listKeys(storage, 'proj/history/'), []);
  });

  it('asks once more, with the reason, after the shrink guard refuses a plan (before, the next call paid the same prompt again)', async () => {
    const small = bigFile(['Orchard', 'Harbor']);
    const { core, storage, server } = await setup([{ reply: plan([rewrite('decisions.md', '# Decisions\n\nAll done.\n')]) }, { reply: appendOrchard }], {
      content: small,
    });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    const told = server.requests[1]!.messages.at(-1)!.content;
    assert.match(told, /refused and nothing was written/);
    assert.match(readFences(told, 'refusal')[0]?.text ?? '', /^decisions\.md: the plan shrinks it by 9\d%/);
    assert.match(await bankText(storage), /- the orchard importer streams its input/);
    assert.equal(server.requests.length, 2);
  });

  it('consolidates a space whose bank alone is larger than the model context', async () => {
    const topics = Array.from({ length: 90 }, (_, i) => `Entry ${i}`);
    const { core, storage, server } = await setup(
      [{ reply: plan([edit('decisions.md', [{ op: 'add', section: 'Decisions', title: 'Entry 90', content: '- new' }])]) }],
      {
        content: bigFile(topics),
        contextWindow: 8_000,
        fileTokens: 1_000,
      },
    );
    assert.ok(estimateTokens(await bankText(storage)) > 8_000, 'the bank alone fills the context window');
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    const sent = server.requests[0]!.messages.reduce((n, m) => n + estimateTokens(m.content), 0);
    assert.ok(sent + 1_000 <= 8_000, `a prompt of ~${sent} tokens fits`);
    assert.match(await bankText(storage), /## Entry 89\n[\s\S]*## Entry 90\n\n- new\n$/);
  });

  it('shrinks the share of every file when the files, each within its budget, leave the notes too little room', async () => {
    // Six files of ~900 tokens, each under its budget of 1,000: 5,400 tokens of bank beside 6,000 of room.
    const topics = Array.from({ length: 9 }, (_, i) => `Part ${i}`);
    const files = Object.fromEntries(['a.md', 'b.md', 'c.md', 'd.md', 'e.md', 'f.md'].map((name) => [name, bigFile(topics)]));
    const { core, server } = await setup([{ reply: plan([], 'S') }], { files, contextWindow: 8_000, fileTokens: 1_000 });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    const user = userOf(server, 0);
    assert.equal(user.match(/\[SENT IN PART: /g)?.length, 6, 'each file sent in part');
    const sent = server.requests[0]!.messages.reduce((n, m) => n + estimateTokens(m.content), 0);
    assert.ok(sent + 1_000 <= 8_000 - 1_500, `a prompt of ~${sent} tokens leaves the notes a quarter of the room`);
  });
});
