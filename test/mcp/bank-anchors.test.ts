/**
 * Bank statements anchored to code, through consolidation's provenance: a section's anchors are those of
 * the notes it was written from, checked at read in each reader's checkout (bank_read, bank_read_all,
 * space_summary, memory_context, memory_start, `live-mem anchors`, `live-mem doctor`), shown to whoever
 * consolidates next where they drifted, kept through a backup and gone with a forget. The checkout follows
 * the project a call names (its argument, the client's roots), not only the server's folder; where the
 * server reads no checkout (HTTP), what `live-mem cite` printed is taken as the note's anchors.
 */
import assert from 'node:assert/strict';
import { pathToFileURL } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { type TwoClones, twoClones } from '../helpers/git-project.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN } from '../helpers/mcp-client.js';
import { writePlan } from '../helpers/plan-writer.js';

type Code = { filename: string; section: string; path: string; symbol?: string; lines?: number[]; state: string; detail: string };
type Package = { handle: string; prompt: string };

describe('bank sections anchored through their notes', () => {
  let fixture: TwoClones;
  let env: Record<string, string>;
  let space: string;
  const cli = (cwd: string, ...args: string[]) =>
    execa(process.execPath, [BIN, ...args], { cwd, env: { PATH: process.env.PATH ?? '', ...env }, extendEnv: false, reject: false });
  const serve = (cwd: string, roots?: string) =>
    inProcessServer({ ...env, LIVE_MEM_TOOLS: 'admin' }, { cwd, ...(roots ? { roots: () => [{ uri: pathToFileURL(roots).href, name: 'project' }] } : {}) });
  const states = (code: Code[] | undefined) =>
    (code ?? []).map((c) => `${c.filename}|${c.section}|${c.path}${c.symbol ? `#${c.symbol}` : `:${c.lines?.join('-')}`}|${c.state}`);

  before(async () => {
    fixture = await twoClones();
    env = fixture.env;
    // Two consolidations: the first writes activeContext.md whole, the second appends to its section.
    const writer = await serve(fixture.writerDir);
    try {
      const first = await writer.call('live_note', { category: 'insight', content: 'Retries: `retryRequest` in src/net/client.ts tries three times.' });
      space = String(first.space_id);
      const pkg = (await writer.call('bank_consolidate', {})) as unknown as Package;
      assert.equal((await writer.call('bank_consolidate', { handle: pkg.handle, plan: writePlan(pkg) })).status, 'ok');
      await writer.call('live_note', { category: 'decision', content: 'When retries give up, src/net/client.ts:6 throws; callers catch it.' });
      const second = (await writer.call('bank_consolidate', {})) as unknown as Package;
      const done = await writer.call('bank_consolidate', { handle: second.handle, plan: writePlan(second, { section: 'Active Context' }) });
      assert.equal(done.status, 'ok', JSON.stringify(done));
    } finally {
      await writer.close();
    }
  });
  after(() => fixture.remove());

  it('bank_read, bank_read_all and space_summary say, per section, the state of the code its notes cite, in the reader’s checkout', async () => {
    const writer = await serve(fixture.writerDir);
    try {
      const read = await writer.call('bank_read', { filename: 'activeContext.md' });
      assert.deepEqual(
        states(read.code as Code[]).sort(),
        ['activeContext.md||src/net/client.ts#retryRequest|fresh', 'activeContext.md|Active Context|src/net/client.ts:6-6|fresh'].sort(),
      );
    } finally {
      await writer.close();
    }
    const reader = await serve(fixture.readerDir);
    try {
      const expected = ['activeContext.md||src/net/client.ts#retryRequest|drifted', 'activeContext.md|Active Context|src/net/client.ts:6-6|fresh'].sort();
      const read = await reader.call('bank_read', { filename: 'activeContext.md' });
      assert.deepEqual(states(read.code as Code[]).sort(), expected);
      assert.match((read.code as Code[]).find((c) => c.state === 'drifted')?.detail ?? '', /1 of 7 cited lines differ/);
      assert.deepEqual(states((await reader.call('bank_read_all', {})).code as Code[]).sort(), expected);
      assert.deepEqual(states((await reader.call('space_summary', {})).code as Code[]).sort(), expected);
    } finally {
      await reader.close();
    }
    // Outside any checkout nothing is checked: no `code`, the read as it was.
    const nowhere = await serve(fixture.home);
    try {
      const read = await nowhere.call('bank_read', { space_id: space, filename: 'activeContext.md' });
      assert.equal(read.status, 'ok');
      assert.equal(read.code, undefined);
    } finally {
      await nowhere.close();
    }
  });

  it('the checkout is the project’s a call names: the client’s roots, or its project argument, on a server started in the home folder', async () => {
    const byRoots = await serve(fixture.home, fixture.readerDir);
    try {
      const read = await byRoots.call('bank_read', { filename: 'activeContext.md' });
      assert.ok(states(read.code as Code[]).includes('activeContext.md||src/net/client.ts#retryRequest|drifted'), JSON.stringify(read));
    } finally {
      await byRoots.close();
    }
    const byArgument = await serve(fixture.home);
    try {
      const read = await byArgument.call('bank_read', { project: fixture.writerDir, filename: 'activeContext.md' });
      assert.ok(states(read.code as Code[]).includes('activeContext.md||src/net/client.ts#retryRequest|fresh'), JSON.stringify(read));
      const note = await byArgument.call('live_note', { project: fixture.writerDir, category: 'observation', content: 'src/net/client.ts:1 is the entry.' });
      assert.deepEqual(
        (note.anchors as Array<{ path: string }>).map((a) => a.path),
        ['src/net/client.ts'],
        'captured from the project argument’s checkout',
      );
      await byArgument.call('memory_forget', { space_id: space, refs: [note.filename], confirm: true, reason: 'test' });
    } finally {
      await byArgument.close();
    }
  });

  it('memory_context and the memory_start prompt label the bank’s sections by their code', async () => {
    const reader = await serve(fixture.readerDir);
    try {
      const context = String((await reader.call('memory_context', {})).text);
      // The file's one section carries the anchors of its notes, written whole and appended to: one label, after its text.
      assert.match(
        context,
        /callers catch it\.\n\[code drifted src\/net\/client\.ts#retryRequest: the block of retryRequest changed: 1 of 7 cited lines differ/,
      );
      const prompt = await reader.client.getPrompt({ name: 'memory_start', arguments: {} });
      const text = prompt.messages.map((m) => (m.content.type === 'text' ? m.content.text : '')).join('\n');
      assert.match(text, /code drifted src\/net\/client\.ts#retryRequest/);
    } finally {
      await reader.close();
    }
  });

  it('whoever consolidates next is shown the statements whose code moved on in their checkout, and the default rules ask to repair them', async () => {
    const reader = await serve(fixture.readerDir);
    try {
      await reader.call('live_note', { category: 'observation', content: 'Retries now try five times.' });
      const pkg = (await reader.call('bank_consolidate', {})) as unknown as Package;
      assert.match(pkg.prompt, /=== CODE THE BANK CITES THAT MOVED ON/);
      assert.match(pkg.prompt, /- activeContext\.md: src\/net\/client\.ts#retryRequest drifted: the block of retryRequest changed/);
      assert.doesNotMatch(pkg.prompt, /src\/net\/client\.ts:6-6 (fresh|drifted)/, 'fresh code is not listed');
      assert.match(pkg.prompt, /Code listed as moved on: correct the statements citing it, or mark them "\(stale\)"/, 'the default rules');
      assert.equal((await reader.call('bank_consolidate', { handle: pkg.handle, plan: writePlan(pkg, { section: 'Active Context' }) })).status, 'ok');
      // A package asked in the writer's clone, where the code is as the notes cited it, lists nothing to repair.
      await reader.call('live_note', { category: 'observation', content: 'One more.' });
      const there = await cli(fixture.writerDir, 'consolidate', space, '--prepare', '--json');
      assert.equal(there.exitCode, 0, there.stderr);
      const prompt = String(JSON.parse(there.stdout).prompt);
      assert.match(prompt, /=== CURRENT BANK FILES ===/);
      assert.doesNotMatch(prompt, /CODE THE BANK CITES THAT MOVED ON/);
    } finally {
      await reader.close();
    }
  });

  it('`live-mem anchors` lists the bank’s sections with the notes; `doctor` warns of stale ones in its checkout only', async () => {
    const anchors = await cli(fixture.readerDir, 'anchors', space);
    assert.equal(anchors.exitCode, 0, anchors.stderr);
    assert.match(anchors.stdout, /bank activeContext\.md\s+src\/net\/client\.ts#retryRequest\s+drifted/);
    const stale = await cli(fixture.readerDir, 'doctor', space, '--json');
    const finding = (JSON.parse(stale.stdout).findings as Array<{ check: string; status: string; message: string }>).find((f) => f.check === 'anchors');
    assert.equal(finding?.status, 'warn', stale.stdout);
    assert.match(
      finding?.message ?? '',
      /1 statement cite code that drifted or is missing in this checkout .*bank activeContext\.md cites src\/net\/client\.ts#retryRequest: drifted/,
    );
    const clean = await cli(fixture.writerDir, 'doctor', space, '--json');
    assert.equal((JSON.parse(clean.stdout).findings as Array<{ check: string; status: string }>).find((f) => f.check === 'anchors')?.status, 'ok');
    const nowhere = await cli(fixture.home, 'doctor', space, '--json');
    assert.match(JSON.stringify(JSON.parse(nowhere.stdout).findings.find((f: { check: string }) => f.check === 'anchors')), /not checked/);
  });

  it('anchors captured by `live-mem cite` are taken as given where the server reads no checkout; a forged one is refused', async () => {
    const cited = await cli(fixture.writerDir, 'cite', 'src/net/client.ts:2-5');
    assert.equal(cited.exitCode, 0, cited.stderr);
    const given = JSON.parse(cited.stdout) as Array<{ path: string; hash: string }>;
    assert.equal(given[0]?.path, 'src/net/client.ts');
    const remote = await serve(fixture.home); // no checkout here: as a server reached over HTTP
    try {
      const refused = await remote.call('live_note', { space_id: space, category: 'insight', content: 'the loop', anchors: 'src/net/client.ts:2-5' });
      assert.match(String(refused.message), /live-mem cite/);
      const forged = await remote.call('live_note', {
        space_id: space,
        category: 'insight',
        content: 'the loop',
        anchors: [{ path: '../etc/passwd', hash: 'x' }],
      });
      assert.equal(forged.status, 'error');
      const note = await remote.call('live_note', { space_id: space, category: 'insight', content: 'The retry loop.', anchors: cited.stdout });
      assert.equal(note.status, 'created', JSON.stringify(note));
    } finally {
      await remote.close();
    }
    const listed = await cli(fixture.readerDir, 'anchors', space);
    assert.match(listed.stdout, /src\/net\/client\.ts:2-5\s+drifted\s+lines 2-5 changed: 1 of 4 cited lines differ/);
  });

  it('a backup restored keeps the bank’s anchors; a forget takes a note’s away from the sections it fed', async () => {
    const reader = await serve(fixture.readerDir);
    try {
      const backup = await reader.call('backup_create', { space_id: space });
      const restored = await reader.call('backup_restore', { backup_id: backup.backup_id, confirm: true, as: 'restored-copy' });
      assert.equal(restored.status, 'ok', JSON.stringify(restored));
      const copy = await reader.call('bank_read', { space_id: 'restored-copy', filename: 'activeContext.md' });
      assert.ok(states(copy.code as Code[]).includes('activeContext.md||src/net/client.ts#retryRequest|drifted'), JSON.stringify(copy.code));
      const history = await reader.call('memory_search', { space_id: space, query: 'retryRequest three times', sources: ['history'] });
      const note = (history.results as Array<{ ref: string; anchors?: unknown[] }>).find((hit) => hit.anchors);
      assert.ok(note, JSON.stringify(history));
      const forgot = await reader.call('memory_forget', { space_id: space, refs: [note.ref], confirm: true, reason: 'test' });
      assert.equal(forgot.status, 'ok', JSON.stringify(forgot));
      const after = await reader.call('bank_read', { space_id: space, filename: 'activeContext.md' });
      assert.ok(!states(after.code as Code[]).some((s) => s.includes('retryRequest')), JSON.stringify(after.code));
    } finally {
      await reader.close();
    }
  });
});
