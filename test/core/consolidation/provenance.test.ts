/**
 * Consolidation that cites its sources and accounts for every note: the plan's `sources` and `notes`
 * (provenance.ts), the one retry a plan skipping notes gets, the provenance and dispositions kept in
 * the commit record and history, checked when stored, and read back (recall/sources.ts).
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { commitKinds, createCore } from '../../../src/core/core.js';
import { checkPending } from '../../../src/core/commit/pending.js';
import { parsePlan } from '../../../src/core/consolidation/plan.js';
import { accountPlan, resolveRef } from '../../../src/core/consolidation/provenance.js';
import { readFences } from '../../../src/core/prompt-fence.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../../helpers/scripted-llm.js';
import { fencedNotes } from '../../helpers/obedient-llm.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

type Message = { role: string; content: string };
const noteCount = (messages: Message[]) => readFences(messages.find((m) => m.role === 'user')?.content ?? '', 'note').length;
const range = (n: number) => Array.from({ length: n }, (_, i) => i + 1);

/**
 * A plan creating progress.md with a section per note, citing `cite(n)` of the window's n notes, disposing of `dispose(n)`;
 * what it cites a note for quotes the note (the retention check finds it there: core/retention).
 */
function plan(cite: (n: number) => number[], dispose: (n: number) => unknown[] = () => []): Step {
  return {
    dynamic: (messages) => {
      const n = noteCount(messages);
      const texts = fencedNotes(messages);
      const bank = /<<<file progress\.md /.test(messages.find((m) => m.role === 'user')?.content ?? '');
      const edits = cite(n).map((i) => ({
        op: 'add',
        section: 'Progress',
        title: `Item ${i}-${n}-${messages.length}`,
        content: `- from note ${i}: ${texts[i - 1]}`,
        sources: [i],
      }));
      const started = cite(n).map((i) => `- ${texts[i - 1]}`);
      const files = bank
        ? [{ filename: 'progress.md', action: 'edit', edits }]
        : [{ filename: 'progress.md', action: 'create', content: `# Progress\n\nStarted.\n${started.join('\n')}\n`, sources: cite(n) }];
      return JSON.stringify({ files, notes: dispose(n), synthesis: `S${messages.length}` });
    },
  };
}

async function setup(steps: Step[], notes = 3) {
  const server = await startScriptedLlm(steps);
  servers.push(server);
  const storage = createMemoryDriver();
  const core = createCore({ storage, clock: steppingClock('2026-02-20T18:00:00.000Z', 1000), llm: server.client(), consolidation: { retryBackoffMs: 5 } });
  await core.spaces.create(owner, { space_id: 'proj' });
  const names: string[] = [];
  for (let i = 0; i < notes; i++)
    names.push((await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `note number ${i + 1} about zorvak` })).filename as string);
  return { core, storage, server, names };
}

interface StoredRecord {
  notes: string[];
  provenance: Array<{ filename: string; path: string[]; notes: string[] }>;
  dispositions: Array<{ note: string; status: string }>;
}

/** The history's record.json files, oldest first (two at most in these tests). */
async function historyRecords(storage: StorageDriver): Promise<[StoredRecord, StoredRecord]> {
  const keys = (await listKeys(storage, 'proj/history/')).filter((key) => key.endsWith('/record.json')).sort();
  return (await Promise.all(keys.map(async (key) => JSON.parse((await storage.get(key))?.body.toString() ?? '{}')))) as [StoredRecord, StoredRecord];
}

describe('plans that cite their sources', () => {
  it('parses sources on writes and section edits, and the notes list, in every spelling a model uses', () => {
    const parsed = parsePlan(
      JSON.stringify({
        files: [
          { filename: 'a.md', action: 'rewrite', content: '# A\n', sources: [1, '2'] },
          {
            filename: 'b.md',
            action: 'edit',
            edits: [
              { op: 'append', section: 'B > C', content: 'x', sources: 'note 3' },
              { op: 'delete', section: 'B > D' },
            ],
          },
        ],
        notes: [{ note: 4, status: 'Superseded', by: 5 }, { ref: '6/6', disposition: 'discarded', reason: 'small\ntalk' }, { status: 'discarded' }, 'junk'],
        synthesis: 'S',
      }),
    );
    assert.deepEqual(parsed.changes[0], { filename: 'a.md', action: 'write', content: '# A\n', sources: [1, '2'] });
    assert.deepEqual(parsed.changes[1], {
      filename: 'b.md',
      action: 'edit',
      edits: [
        { op: 'append', path: ['B', 'C'], content: 'x', sources: ['note 3'] },
        { op: 'delete', path: ['B', 'D'] },
      ],
    });
    assert.deepEqual(parsed.notes, [
      { note: 4, status: 'superseded', by: '5' },
      { note: '6/6', status: 'discarded', reason: 'small talk' },
    ]);
    assert.equal(parsed.python, undefined);
  });

  it("keeps the Python server's reply format accepted: no citation, marked as that format", () => {
    const parsed = parsePlan(JSON.stringify({ bank_files: [{ filename: 'a.md', content: '# A\n', action: 'created' }], synthesis: 'S' }));
    assert.deepEqual(parsed.changes, [{ filename: 'a.md', action: 'write', content: '# A\n' }]);
    assert.equal(parsed.python, true);
    assert.equal(parsed.notes, undefined);
  });

  it('resolves fence numbers and file names; anything else names no note', () => {
    const window = ['a.md', 'b.md', 'c.md'];
    assert.equal(resolveRef(2, window), 'b.md');
    assert.equal(resolveRef('note 3', window), 'c.md');
    assert.equal(resolveRef('#1', window), 'a.md');
    assert.equal(resolveRef('3/3', window), 'c.md');
    assert.equal(resolveRef('b.md', window), 'b.md');
    assert.equal(resolveRef(4, window), undefined);
    assert.equal(resolveRef(0, window), undefined);
    assert.equal(resolveRef('z.md', window), undefined);
  });

  it('accounts for each note: integrated (where), superseded, discarded, unaccounted; unknown citations dropped', () => {
    const window = ['n1.md', 'n2.md', 'n3.md', 'n4.md', 'n5.md'];
    const parsed = parsePlan(
      JSON.stringify({
        files: [
          { filename: 'a.md', action: 'rewrite', content: '# A\n', sources: [1, 9] },
          { filename: 'b.md', action: 'edit', edits: [{ op: 'add', section: 'B', title: 'New', content: 'x', sources: [2, 1] }] },
          { filename: 'same.md', action: 'rewrite', content: '# same\n', sources: [5] },
        ],
        notes: [
          { note: 3, status: 'superseded', by: 2 },
          { note: 1, status: 'discarded', reason: 'cited anyway' },
          { note: 'ghost.md', status: 'discarded', reason: 'r' },
        ],
        synthesis: 'S',
      }),
    );
    // same.md is left as it was: a change that writes nothing fed nothing.
    const accounting = accountPlan(parsed, window, (name) => (name === 'same.md' ? undefined : name));
    assert.deepEqual(accounting.provenance, [
      { filename: 'a.md', path: [], notes: ['n1.md'] },
      { filename: 'b.md', path: ['B', 'New'], notes: ['n1.md', 'n2.md'] },
    ]);
    assert.deepEqual(accounting.dispositions, [
      { note: 'n1.md', status: 'integrated', into: ['a.md', 'b.md#B > New'] },
      { note: 'n2.md', status: 'integrated', into: ['b.md#B > New'] },
      { note: 'n3.md', status: 'superseded', by: 'n2.md' },
      { note: 'n4.md', status: 'unaccounted' },
      { note: 'n5.md', status: 'unaccounted' },
    ]);
    assert.deepEqual(accounting.unaccounted, ['n4.md', 'n5.md']);
    assert.deepEqual(accounting.unknown, ['9', 'ghost.md']);
    assert.equal(accounting.cites, true);
    assert.equal(accountPlan(parsePlan('{"files":[{"filename":"a.md","content":"# A"}],"synthesis":"S"}'), window, (n) => n).cites, false);
  });
});

describe('consolidation accounts for every note', () => {
  it('records provenance for every bank edit and a disposition for every note, in the commit and in history', async () => {
    const { core, storage, server, names } = await setup([
      plan(range),
      plan(
        (n) => range(n - 1),
        (n) => [{ note: n, status: 'discarded', reason: 'chit-chat' }],
      ),
    ]);
    const first = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(first.status, 'ok', first.message);
    assert.equal(first.unaccounted_notes, undefined);
    assert.equal(first.warnings, undefined);
    assert.equal(server.requests.length, 1);
    for (let i = 0; i < 2; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `later ${i}` });
    const second = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(second.status, 'ok', second.message);
    const [one, two] = await historyRecords(storage);
    assert.deepEqual(one.provenance, [{ filename: 'progress.md', path: [], notes: names }]);
    assert.deepEqual(
      one.dispositions.map((d) => d.status),
      ['integrated', 'integrated', 'integrated'],
    );
    const later = two.notes;
    // The second consolidation's edit is cited, section by section; the note it discarded has its reason.
    assert.deepEqual(two.provenance, [{ filename: 'progress.md', path: ['Progress', 'Item 1-2-2'], notes: [later[0]] }]);
    assert.deepEqual(two.dispositions, [
      { note: later[0], status: 'integrated', into: ['progress.md#Progress > Item 1-2-2'] },
      { note: later[1], status: 'discarded', reason: 'chit-chat' },
    ]);
    assert.equal(second.unaccounted_notes, undefined);
  });

  it('a plan that skips notes is asked once more, then committed with the notes it skips reported, never hidden', async () => {
    const { core, storage, server, names } = await setup([plan(() => [1])]);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 2, 'one retry');
    const told = server.requests[1]?.messages.at(-1)?.content ?? '';
    assert.match(told, /^Your plan does not account for every note:/);
    assert.match(readFences(told, 'refusal')[0]?.text ?? '', /^it says nothing of 2 note\(s\)/);
    assert.deepEqual(result.unaccounted_notes, names.slice(1));
    const warnings = (result.warnings ?? []).join('\n');
    assert.match(warnings, /does not account for every note .*; it was asked once more/);
    assert.match(warnings, /2 note\(s\) consolidated without being accounted for \(the plan says nothing of them\)/);
    assert.equal(result.notes_processed, 3, 'the notes are consolidated all the same');
    const [record] = await historyRecords(storage);
    assert.deepEqual(
      record.dispositions.map((d) => d.status),
      ['integrated', 'unaccounted', 'unaccounted'],
    );
  });

  it('a retry that accounts for every note is committed, with nothing reported', async () => {
    const { core, server } = await setup([plan(() => [1]), plan(range)]);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 2);
    assert.equal(result.unaccounted_notes, undefined);
  });

  it('a citation of a note not in the window is asked about once, then dropped with a warning (the plan is sound)', async () => {
    const { core, storage, server } = await setup([plan((n) => [...range(n), 7])]);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 2);
    assert.match((result.warnings ?? []).join('\n'), /cites 1 note\(s\) not in the window \(7\); those citations were left out of the provenance/);
    const [record] = await historyRecords(storage);
    assert.equal(record.provenance[0]?.notes.length, 3);
  });

  it('a plan citing nothing (an older format) and a Python-format reply are not asked again: their notes are reported', async () => {
    const bare = await setup([{ reply: JSON.stringify({ files: [{ filename: 'a.md', action: 'create', content: '# A\n' }], synthesis: 'S' }) }], 2);
    const one = await bare.core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(bare.server.requests.length, 1);
    assert.deepEqual(one.unaccounted_notes, bare.names);
    assert.match((one.warnings ?? []).join('\n'), /2 note\(s\) consolidated without being accounted for \(the plan cites no note\)/);
    const python = await setup([{ reply: JSON.stringify({ bank_files: [{ filename: 'a.md', content: '# A\n', action: 'created' }], synthesis: 'S' }) }], 2);
    const two = await python.core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(two.status, 'ok');
    assert.equal(python.server.requests.length, 1);
    assert.deepEqual(two.unaccounted_notes, python.names);
    assert.match((two.warnings ?? []).join('\n'), /in the Python server's format, which cites no note/);
  });

  it('when the retry is refused by a guard, the first plan (sound but for its accounting) is committed', async () => {
    const traversal: Step = {
      reply: JSON.stringify({ files: [{ filename: '../x.md', action: 'create', content: '# X\n', sources: [1, 2, 3] }], synthesis: 'S' }),
    };
    const { core, storage, server, names } = await setup([plan(() => [1]), traversal]);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 2);
    assert.match((result.warnings ?? []).join('\n'), /second plan was refused .*; the model's first plan, sound but for its accounting, is committed/);
    assert.deepEqual(result.unaccounted_notes, names.slice(1));
    assert.match((await storage.get('proj/bank/progress.md'))?.body.toString() ?? '', /# Progress/);
  });

  it('when asking again fails (the model is down), the first plan is committed all the same', async () => {
    const { core, server, names } = await setup([plan(() => [1]), { status: 500, message: 'down' }]);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.ok(server.requests.length >= 2);
    assert.match((result.warnings ?? []).join('\n'), /asking again failed .*; the model's first plan, sound but for its accounting, is committed/);
    assert.deepEqual(result.unaccounted_notes, names.slice(1));
  });
});

describe('a stored record is input: its provenance is checked', () => {
  const base = (extra: Record<string, unknown>) =>
    Buffer.from(
      JSON.stringify({
        id: '20260220T180000-abc123',
        space_id: 'proj',
        committed_at: '2026-02-20T18:00:00.000Z',
        notes: ['20260220T170000_tester_progress_00aaaaaa.md'],
        time_range: { oldest: null, newest: null },
        writes: [{ filename: 'a.md', content: '# A\n', expectedEtag: null, kind: 'created' }],
        synthesis: { content: 'S', expectedEtag: null },
        metrics: {},
        ...extra,
      }),
    );
  const note = '20260220T170000_tester_progress_00aaaaaa.md';

  it('accepts a well-formed provenance and dispositions, and records without them', () => {
    assert.equal(checkPending(base({}), 'proj', commitKinds()).state, 'valid');
    const ok = checkPending(
      base({ provenance: [{ filename: 'a.md', path: ['A'], notes: [note] }], dispositions: [{ note, status: 'integrated', into: ['a.md#A'] }] }),
      'proj',
      commitKinds(),
    );
    assert.equal(ok.state, 'valid', ok.state === 'invalid' ? ok.problem : '');
  });

  for (const [what, extra, problem] of [
    [
      'a note not among its own',
      { provenance: [{ filename: 'a.md', path: [], notes: ['20260220T170000_tester_progress_00zzzzzz.md'] }] },
      /cites .*not one of its notes/,
    ],
    ['a file it does not write', { provenance: [{ filename: 'b.md', path: [], notes: [note] }] }, /names "b.md", a file it does not write/],
    ['a malformed entry', { provenance: [{ filename: 'a.md', path: 'A', notes: [note] }] }, /provenance entries is malformed/],
    ['a list that is not one', { provenance: { filename: 'a.md' } }, /provenance is not a list/],
    ['an unknown status', { dispositions: [{ note, status: 'lost' }] }, /dispositions is malformed/],
    ['a disposition of another note', { dispositions: [{ note: 'x.md', status: 'discarded' }] }, /dispositions is malformed|not a list of its notes/],
  ] as const) {
    it(`refuses one citing ${what}`, () => {
      const found = checkPending(base(extra), 'proj', commitKinds());
      assert.equal(found.state, 'invalid');
      assert.match(found.state === 'invalid' ? found.problem : '', problem);
    });
  }
});

describe('why does the bank say this? (recall/sources.ts)', () => {
  it('bank_explain gives the notes behind a file or a section, newest first, with their text, agent and consolidation; the reverse too', async () => {
    const { core, names } = await setup([plan(range)]);
    await core.consolidation.consolidate(owner, { space_id: 'proj' });
    for (let i = 0; i < 2; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `later zorvak ${i}` });
    const second = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    const whole = await core.sources.explain(owner, { space_id: 'proj', filename: 'progress.md' });
    assert.equal(whole.total, 5);
    assert.equal(whole.notes[0]?.content, 'later zorvak 1', 'newest first');
    assert.equal(whole.notes[0]?.agent, 'tester');
    assert.equal(whole.notes[0]?.consolidation_id, second.consolidations[0]);
    assert.deepEqual(
      whole.notes.slice(2).map((n) => n.filename),
      [...names].reverse(),
    );
    // One section: its own note, and those of the whole-file write that holds it.
    const section = await core.sources.explain(owner, { space_id: 'proj', filename: 'progress.md', section: 'Progress > Item 1-2-2' });
    assert.equal(section.total, 4);
    assert.equal(section.notes[0]?.content, 'later zorvak 0');
    assert.deepEqual(section.notes[0]?.sections, ['Progress > Item 1-2-2']);
    const bounded = await core.sources.explain(owner, { space_id: 'proj', filename: 'progress.md', limit: 2 });
    assert.equal(bounded.notes.length, 2);
    assert.equal(bounded.has_more, true);
    const cited = await core.sources.ofNote('proj', names[0] as string);
    assert.deepEqual(
      cited.map((c) => [c.filename, c.path]),
      [['progress.md', []]],
    );
    await assert.rejects(core.sources.explain(owner, { space_id: 'proj', filename: '../x.md' }), /no bank file name/);
  });

  it('a memory_search hit on a bank section carries its source notes', async () => {
    const { core } = await setup([plan(range)]);
    await core.consolidation.consolidate(owner, { space_id: 'proj' });
    for (let i = 0; i < 2; i++) await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `later ${i}` });
    await core.consolidation.consolidate(owner, { space_id: 'proj' });
    const found = await core.recall.search(owner, { space_id: 'proj', query: 'Item 2-2-2', sources: ['bank'] });
    const hit = found.results.find((r) => r.ref === 'progress.md#Progress > Item 2-2-2');
    assert.ok(hit, JSON.stringify(found.results));
    assert.equal(hit.sources?.length, 4, 'its own note, and the three of the whole-file write');
    assert.match(hit.sources?.[0] ?? '', /progress/);
  });
});
