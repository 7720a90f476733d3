/**
 * Heavy bank work (issue 39, item 4): section edits cost what they write, not the square of their
 * number; no writer — a plan, bank_write, an import — leaves a bank file past
 * LIVE_MEM_BANK_FILE_MAX_BYTES, nor carries more than MAX_SECTION_EDITS edits; doctor names the files
 * an older version left past it; Unicode line separators (NEL, U+2028, U+2029) are line ends.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { applyPlan } from '../../../src/core/commit/apply-plan.js';
import { createCore } from '../../../src/core/core.js';
import { applySectionEdit, applySectionEdits, applySectionEditsInSlices, type SectionEdit } from '../../../src/core/markdown/edit.js';
import { MAX_SECTION_EDITS } from '../../../src/core/validate.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { hasForeignLineEndings, normalizeLineEndings } from '../../../src/shared/line-endings.js';
import { slicer } from '../../../src/shared/yield.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { owner } from '../../helpers/core.js';

const JOURNAL = '# Journal\n\n## Log\n\n- started\n\n## Decisions\n\n- Postgres\n';
const text = async (storage: StorageDriver, key: string) => (await storage.get(key))?.body.toString('utf8');
const refused = (pattern: RegExp) => (error: unknown) => isLiveMemError(error, 'invalid_input') && pattern.test(error.message);

async function space(limits: { bankFileMaxBytes?: number } = {}) {
  const storage = createMemoryDriver();
  const core = createCore({ storage, limits, summaries: { auto: false }, compaction: { auto: false } });
  await core.spaces.create(owner, { space_id: 'proj' });
  await storage.put('proj/bank/journal.md', JOURNAL);
  const version = async () => (await core.bank.read(owner, { space_id: 'proj', filename: 'journal.md' })).version;
  return { storage, core, version };
}

describe('section edits in one call', () => {
  const mixed: SectionEdit[] = [
    { op: 'append', path: ['Log'], content: '- one' },
    { op: 'add', path: ['Journal'], title: 'Ideas', content: 'a\n\n### Sub\n\nb' },
    { op: 'prepend', path: ['Decisions'], content: '- first' },
    { op: 'append', path: ['Ideas', 'Sub'], content: '- under the sub-heading the previous edit wrote' },
    { op: 'replace', path: ['Log'], content: '- rewritten' },
    { op: 'add', path: [], title: 'Appendix', content: '' },
    { op: 'delete', path: ['Decisions'] },
    { op: 'append', path: ['Appendix'], content: 'end' },
  ];

  it('give the document one edit at a time would give, headings written by an earlier edit included', () => {
    const oneByOne = mixed.reduce((doc, edit) => applySectionEdit(doc, edit, 'journal.md'), JOURNAL);
    assert.equal(applySectionEdits(JOURNAL, mixed, 'journal.md'), oneByOne);
    assert.match(oneByOne, /### Sub\n\nb\n\n- under the sub-heading the previous edit wrote\n/);
    assert.doesNotMatch(oneByOne, /Decisions/);
  });

  it('apply 10,000 appends, adds and prepends to one section, every entry kept in order', () => {
    const n = 10_000;
    const appends = applySectionEdits(
      JOURNAL,
      Array.from({ length: n }, (_, i) => ({ op: 'append', path: ['Log'], content: `- entry ${i}` })),
      'journal.md',
    );
    const entries = [...appends.matchAll(/- entry (\d+)/g)].map((m) => Number(m[1]));
    assert.deepEqual(
      entries,
      Array.from({ length: n }, (_, i) => i),
    );
    assert.match(appends, /- entry 9999\n\n## Decisions\n\n- Postgres\n$/);
    const prepends = applySectionEdits(
      JOURNAL,
      Array.from({ length: n }, (_, i) => ({ op: 'prepend', path: ['Log'], content: `- entry ${i}` })),
      'journal.md',
    );
    assert.equal([...prepends.matchAll(/- entry (\d+)/g)][0]?.[1], String(n - 1));
    assert.match(prepends, /- entry 0\n\n- started\n\n## Decisions/);
    const adds = applySectionEdits(
      JOURNAL,
      Array.from({ length: n }, (_, i) => ({ op: 'add', path: ['Journal'], title: `Day ${i}`, content: `- ${i}` })),
      'journal.md',
    );
    assert.equal([...adds.matchAll(/^## Day \d+$/gm)].length, n);
    assert.match(adds, /## Decisions\n\n- Postgres\n\n## Day 0\n\n- 0\n/);
  });

  it('name the edit that hid a section, even among thousands', () => {
    const edits: SectionEdit[] = Array.from({ length: 3_000 }, (_, i) => ({ op: 'append', path: ['Log'], content: `- entry ${i}` }));
    edits.splice(1_500, 0, { op: 'append', path: ['Log'], content: '```sh\nnpm test' });
    assert.throws(
      () => applySectionEdits(JOURNAL, edits, 'journal.md'),
      refused(/journal\.md: the edit \(append "Log"\) hides 1 section\(s\): "Journal > Decisions"/),
    );
  });
});

describe('long bank work yields to the event loop', () => {
  // A callback queued before the work runs before it ends only if the work hands the loop back.
  const queuedRunsFirst = async (work: () => Promise<unknown>) => {
    let ran = false;
    setImmediate(() => {
      ran = true;
    });
    await work();
    return ran;
  };
  const appends = (n: number): SectionEdit[] => Array.from({ length: n }, (_, i) => ({ op: 'append', path: ['Log'], content: `- entry ${i}` }));

  it('section edits in slices: what waits runs between them, and the result is the one of applySectionEdits', async () => {
    let result = '';
    assert.equal(
      await queuedRunsFirst(async () => {
        result = await applySectionEditsInSlices(JOURNAL, appends(50), 'journal.md', slicer(0));
      }),
      true,
    );
    assert.equal(result, applySectionEdits(JOURNAL, appends(50), 'journal.md'));
  });

  it("a plan of 10,000 edits: consolidation's apply yields while it runs", async () => {
    const bank = { files: new Map([['journal.md', { content: JOURNAL, etag: 'e' }]]), appendOnly: new Set<string>() };
    const plan = { changes: [{ filename: 'journal.md', action: 'edit' as const, edits: appends(10_000) }] };
    assert.equal(await queuedRunsFirst(() => applyPlan(plan, bank, { maxNewFiles: 20, maxBankFiles: 200 })), true);
  });

  it('a bank_write of 10,000 edits yields while it runs', async () => {
    const { core, version } = await space();
    const edits = Array.from({ length: 10_000 }, (_, i) => ({ op: 'append', section: 'Log', content: `- entry ${i}` }));
    const if_match = await version();
    assert.equal(await queuedRunsFirst(() => core.revisions.write(owner, { space_id: 'proj', filename: 'journal.md', edits, if_match })), true);
  });
});

describe('caps on bank work, for every writer', () => {
  it(`bank_write: more than ${MAX_SECTION_EDITS} edits refused before any applies; 10,000 land`, async () => {
    const { storage, core, version } = await space();
    const edits = (n: number) => Array.from({ length: n }, (_, i) => ({ op: 'append', section: 'Log', content: `- entry ${i}` }));
    await assert.rejects(
      core.revisions.write(owner, { space_id: 'proj', filename: 'journal.md', edits: edits(MAX_SECTION_EDITS + 1), if_match: await version() }),
      refused(/bank_write carries 10001 section edits; one call may carry at most 10000/),
    );
    assert.equal(await text(storage, 'proj/bank/journal.md'), JOURNAL);
    const written = await core.revisions.write(owner, { space_id: 'proj', filename: 'journal.md', edits: edits(MAX_SECTION_EDITS), if_match: await version() });
    assert.equal(written.status, 'ok');
    assert.match((await text(storage, 'proj/bank/journal.md')) ?? '', /- entry 9999\n\n## Decisions/);
  });

  it('bank_write: a file past the size cap is refused and nothing changes; one already past it may shrink, not grow', async () => {
    const { storage, core, version } = await space({ bankFileMaxBytes: 2_048 });
    const big = `# Notes\n\n${'- a line of the notes file\n'.repeat(100)}`;
    await assert.rejects(
      core.revisions.write(owner, { space_id: 'proj', filename: 'notes.md', content: big }),
      refused(/notes\.md would hold 2709 bytes; a bank file may hold at most 2048 \(LIVE_MEM_BANK_FILE_MAX_BYTES\)/),
    );
    assert.equal(await storage.get('proj/bank/notes.md'), null);
    await assert.rejects(
      core.revisions.write(owner, {
        space_id: 'proj',
        filename: 'journal.md',
        edits: [{ op: 'append', section: 'Log', content: 'x'.repeat(3_000) }],
        if_match: await version(),
      }),
      refused(/journal\.md would hold \d+ bytes/),
    );
    assert.equal(await text(storage, 'proj/bank/journal.md'), JOURNAL);
    // An older version left it larger: it may shrink, not grow.
    await storage.put('proj/bank/journal.md', JOURNAL.replace('- started\n', '- old line\n'.repeat(400)));
    const shrunk = await core.revisions.write(owner, {
      space_id: 'proj',
      filename: 'journal.md',
      edits: [{ op: 'replace', section: 'Decisions', content: '- PG' }],
      if_match: await version(),
    });
    assert.equal(shrunk.status, 'ok');
    await assert.rejects(
      core.revisions.write(owner, {
        space_id: 'proj',
        filename: 'journal.md',
        edits: [{ op: 'append', section: 'Log', content: '- one more' }],
        if_match: await version(),
      }),
      refused(/would hold \d+ bytes/),
    );
  });

  it('a plan: a file past the size cap or more edits than the cap refuses the whole plan', async () => {
    const bank = { files: new Map([['journal.md', { content: JOURNAL, etag: 'e' }]]), appendOnly: new Set<string>() };
    const limits = { maxNewFiles: 20, maxBankFiles: 200, maxFileBytes: 1_024 };
    await assert.rejects(
      applyPlan({ changes: [{ filename: 'journal.md', action: 'edit', edits: [{ op: 'append', path: ['Log'], content: 'y'.repeat(2_000) }] }] }, bank, limits),
      refused(/journal\.md would hold \d+ bytes; a bank file may hold at most 1024/),
    );
    await assert.rejects(
      applyPlan({ changes: [{ filename: 'new.md', action: 'write', content: `# New\n\n${'z'.repeat(2_000)}\n` }] }, bank, limits),
      refused(/new\.md would hold \d+ bytes/),
    );
    const many = Array.from({ length: MAX_SECTION_EDITS + 1 }, () => ({ op: 'append' as const, path: ['Log'], content: '-' }));
    await assert.rejects(
      applyPlan({ changes: [{ filename: 'journal.md', action: 'edit', edits: many }] }, bank, { maxNewFiles: 20, maxBankFiles: 200 }),
      refused(/the plan carries 10001 section edits/),
    );
  });

  it('an import holding a bank file past the cap is refused whole: nothing written', async () => {
    const source = await space();
    await source.storage.put('proj/bank/huge.md', `# Huge\n\n${'- line\n'.repeat(1_000)}`);
    const { stream } = await source.core.backups.exportStream(owner, 'proj');
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    const archive = Buffer.concat(chunks);
    const target = createMemoryDriver();
    const copy = createCore({ storage: target, limits: { bankFileMaxBytes: 4_096 } });
    await assert.rejects(
      copy.backups.importArchive(
        owner,
        async function* () {
          yield archive;
        },
        { as: 'copy' },
      ),
      refused(/bank\/huge\.md would hold 7008 bytes; a bank file may hold at most 4096/),
    );
    assert.deepEqual(await listKeys(target, 'copy/'), []);
  });

  it('doctor names the files an older version left past the cap, largest first, and repairs nothing', async () => {
    const { storage, core } = await space({ bankFileMaxBytes: 1_024 });
    await storage.put('proj/bank/big.md', `# Big\n\n${'b'.repeat(2_000)}\n`);
    await storage.put('proj/bank/bigger.md', `# Bigger\n\n${'c'.repeat(3_000)}\n`);
    const { findings } = await core.doctor(owner, { fix: true });
    const found = findings.filter((finding) => finding.check === 'bank-file-size');
    assert.equal(found.length, 1);
    assert.equal(found[0]?.status, 'warn');
    assert.equal(found[0]?.fixable, false);
    assert.match(
      found[0]?.message ?? '',
      /2 files of 'proj' larger than a bank file may grow \(1024 bytes.*\): proj\/bank\/bigger\.md \(3011 bytes\), proj\/bank\/big\.md \(2008 bytes\)$/,
    );
    assert.equal((await text(storage, 'proj/bank/big.md'))?.length, 2008);
  });
});

describe('Unicode line separators', () => {
  const separated = '# Journal\u2028\u2028## Log\u0085\u0085- started\u2029\u2029## Decisions\r\n\r\n- Postgres\n';

  it('are line ends: normalised to \\n like \\r\\n, and an edit reads the file as its author saw it', () => {
    assert.ok(hasForeignLineEndings('a\u0085b') && hasForeignLineEndings('a\u2028b') && hasForeignLineEndings('a\u2029b'));
    assert.equal(normalizeLineEndings(separated), JOURNAL);
    assert.equal(
      applySectionEdit(separated, { op: 'append', path: ['Log'], content: '- next' }, 'journal.md'),
      applySectionEdit(JOURNAL, { op: 'append', path: ['Log'], content: '- next' }, 'journal.md'),
    );
  });

  it('planted in a bank file: doctor names it, and a correction edits it and stores it with \\n', async () => {
    const { storage, core, version } = await space();
    await storage.put('proj/bank/journal.md', separated);
    const before = await core.doctor(owner, {});
    assert.match(before.findings.find((f) => f.check === 'line-endings')?.message ?? '', /Unicode line separators.*proj\/bank\/journal\.md/);
    await core.revisions.write(owner, {
      space_id: 'proj',
      filename: 'journal.md',
      edits: [{ op: 'append', section: 'Log', content: '- next' }],
      if_match: await version(),
    });
    assert.equal(await text(storage, 'proj/bank/journal.md'), applySectionEdit(JOURNAL, { op: 'append', path: ['Log'], content: '- next' }, 'journal.md'));
    assert.equal((await core.doctor(owner, {})).findings.find((f) => f.check === 'line-endings')?.status, 'ok');
  });
});
