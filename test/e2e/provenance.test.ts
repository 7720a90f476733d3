/**
 * Provenance end to end: the built binary (its MCP server in this process, the CLI, the viewer in chromium)
 * with a scripted model that cites the fenced notes it folds in. Every bank edit of a consolidation has its
 * source notes in history; bank_explain and `live-mem bank explain` give them back with their text; a
 * memory_search hit on a bank section carries them; a plan skipping notes is reported; the viewer shows a
 * section's sources under its heading.
 */
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { after, describe, it } from 'node:test';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { readFences } from '../../src/core/prompt-fence.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { launchBrowser, requireBrowserOrSkip, screenshot, startUi, watchPage } from '../helpers/browser.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN } from '../helpers/mcp-client.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../helpers/scripted-llm.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('tester');
const NOTES = ['Zorvak keeps its cache in bucket alpha.', 'Mivra queue holds ten shards.', 'Pelican deploys only on Fridays.'];
const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

/**
 * A model that reads the fenced notes and gives each cited note a section of progress.md of its own
 * ("## Zorvak", from the note's first word), creating the file on the first consolidation. It cites
 * the notes `cite(n)` picks, and says nothing of the others.
 */
const citing = (cite: (n: number) => number[] = (n) => Array.from({ length: n }, (_, i) => i + 1)): Step => ({
  dynamic: (messages) => {
    const user = messages.find((m) => m.role === 'user')?.content ?? '';
    const notes = readFences(user, 'note').map(({ text }) => text.slice(text.indexOf('\n\n') + 2));
    const edits = cite(notes.length).map((i) => {
      const text = notes[i - 1] ?? '';
      return { op: 'add', section: 'Progress', title: text.split(' ')[0] ?? 'Note', content: `- ${text}`, sources: [i] };
    });
    const create = /<<<file progress\.md /.test(user) ? [] : [{ filename: 'progress.md', action: 'create', content: '# Progress\n\nThe project log.\n' }];
    return JSON.stringify({ files: [...create, { filename: 'progress.md', action: 'edit', edits }], synthesis: `${notes.length} notes` });
  },
});

async function seeded(step: Step) {
  const home = await tempDir();
  const core = createCore({ storage: createFsDriver(home.dir) });
  await core.spaces.create(owner, { space_id: 'proj' });
  const names: string[] = [];
  for (const content of NOTES) names.push((await core.notes.write(owner, { space_id: 'proj', category: 'progress', content })).filename as string);
  const llm = await startScriptedLlm([step]);
  servers.push(llm);
  const env = {
    LIVE_MEM_HOME: home.dir,
    LIVE_MEM_LLM_BASE_URL: llm.url,
    LIVE_MEM_LLM_MODEL: 'scripted-model',
    LIVE_MEM_LLM_API_KEY: 'k',
    LIVE_MEM_LOG_LEVEL: 'warn',
    LIVE_MEM_SUMMARIES: 'off',
  };
  return { home, env, names };
}

const cli = (env: Record<string, string>, args: string[]) =>
  execa(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, extendEnv: false, reject: false });

/** The history's record.json files on disk. */
async function records(home: string): Promise<
  Array<{
    bank_files: Array<{ filename: string }>;
    provenance: Array<{ filename: string; path: string[]; notes: string[] }>;
    dispositions: Array<{ note: string; status: string }>;
  }>
> {
  const dir = path.join(home, 'proj', 'history');
  return Promise.all((await readdir(dir)).sort().map(async (id) => JSON.parse(await readFile(path.join(dir, id, 'record.json'), 'utf8'))));
}

describe('provenance through the binary', () => {
  it('MCP: every bank edit has its source notes in history; bank_explain gives them with their text; a bank hit carries them', async () => {
    const { home, env, names } = await seeded(citing());
    try {
      // bank_explain is offered with the corrections (admin), or by name.
      const server = await inProcessServer({ ...env, LIVE_MEM_TOOLS: 'all,bank_explain' });
      try {
        const result = await server.call('bank_consolidate', { space_id: 'proj' });
        assert.equal(result.status, 'ok', String(result.message));
        assert.equal(result.unaccounted_notes, undefined);
        const [record] = await records(home.dir);
        assert.ok(record);
        for (const file of record.bank_files)
          assert.ok(
            record.provenance.some((entry) => entry.filename === file.filename),
            `${file.filename} has its sources`,
          );
        assert.deepEqual(
          record.provenance.map((entry) => [entry.path.join(' > '), entry.notes]),
          names.map((name, i) => [`Progress > ${NOTES[i]?.split(' ')[0]}`, [name]]),
        );
        assert.deepEqual(
          record.dispositions.map((d) => d.status),
          ['integrated', 'integrated', 'integrated'],
        );

        const explained = await server.call('bank_explain', { space_id: 'proj', filename: 'progress.md', section: 'Progress > Mivra' });
        assert.equal(explained.total, 1);
        const [note] = explained.notes as Array<Record<string, unknown>>;
        assert.equal(note?.filename, names[1]);
        assert.equal(note?.content, NOTES[1]);
        assert.equal(note?.agent, 'tester');
        assert.equal(note?.consolidation_id, (result.consolidations as string[])[0]);
        const whole = await server.call('bank_explain', { space_id: 'proj', filename: 'progress.md' });
        assert.deepEqual(
          (whole.notes as Array<{ filename: string }>).map((n) => n.filename),
          [...names].reverse(),
          'newest first',
        );

        const found = await server.call('memory_search', { space_id: 'proj', query: 'mivra shards', sources: ['bank'] });
        const hit = (found.results as Array<{ ref: string; sources?: string[] }>).find((r) => r.ref === 'progress.md#Progress > Mivra');
        assert.deepEqual(hit?.sources, [names[1]]);
      } finally {
        await server.close();
      }
      // The default profile (all) does not offer it: its tokens are at the budget.
      const plain = await inProcessServer(env);
      try {
        assert.equal(
          (await plain.client.listTools()).tools.some((tool) => tool.name === 'bank_explain'),
          false,
        );
      } finally {
        await plain.close();
      }
    } finally {
      await home.remove();
    }
  });

  it('CLI: live-mem bank explain prints the notes behind a section, and --json gives them', async () => {
    const { home, env, names } = await seeded(citing());
    try {
      assert.equal((await cli(env, ['consolidate', 'proj', '-q'])).exitCode, 0);
      const text = await cli(env, ['bank', 'explain', 'proj', 'progress.md', 'Progress > Pelican']);
      assert.equal(text.exitCode, 0, text.stderr);
      assert.match(text.stdout, /Pelican deploys only on Fridays\./);
      assert.match(text.stdout, new RegExp(names[2] as string));
      assert.match(text.stdout, /1 of 1 source note\(s\) of progress\.md#Progress > Pelican, newest first/);
      assert.doesNotMatch(text.stdout, /Zorvak/);
      const json = await cli(env, ['bank', 'explain', 'proj', 'progress.md', '--json']);
      assert.equal(JSON.parse(json.stdout).total, 3);
      const bad = await cli(env, ['bank', 'explain', 'proj', '../etc.md']);
      assert.equal(bad.exitCode, 2, 'invalid input, as for bank read');
      assert.match(bad.stderr, /no bank file name/);
    } finally {
      await home.remove();
    }
  });

  it('a plan that skips notes: asked once more, then committed with the skipped notes reported (CLI --json and history)', async () => {
    const { home, env, names } = await seeded(citing(() => [1]));
    try {
      const run = await cli(env, ['consolidate', 'proj', '--json']);
      assert.equal(run.exitCode, 0, run.stderr);
      const result = JSON.parse(run.stdout);
      assert.deepEqual(result.unaccounted_notes, names.slice(1));
      assert.equal(result.llm_calls, 2, 'one retry');
      assert.match(result.warnings.join('\n'), /2 note\(s\) consolidated without being accounted for/);
      const [record] = await records(home.dir);
      assert.deepEqual(
        record?.dispositions.map((d) => d.status),
        ['integrated', 'unaccounted', 'unaccounted'],
      );
      // `history show` says what became of each note.
      const shown = await cli(env, ['history', 'show', 'proj', result.consolidations[0]]);
      assert.equal(shown.exitCode, 0, shown.stderr);
      assert.match(shown.stdout, /→ integrated: progress\.md#Progress > Zorvak\nZorvak keeps its cache/);
      // An unaccounted note is checked against the new bank too (core/retention): its facts are not there.
      assert.match(shown.stdout, /→ unaccounted · not retained, missing [^\n]*"Mivra"\nMivra queue holds ten shards\./);
    } finally {
      await home.remove();
    }
  });
});

if (requireBrowserOrSkip('bank sources in the viewer')) {
  describe('the viewer shows where the bank comes from', () => {
    it("a section's sources: a disclosure under its heading, with the notes' text and their consolidation; each note's fate in history", async () => {
      const { home, env, names } = await seeded(citing());
      const ui = await startUi(env);
      const browser = await launchBrowser();
      try {
        assert.equal((await cli(env, ['consolidate', 'proj', '-q'])).exitCode, 0);
        const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
        const watch = watchPage(page, ui.origin);
        if (ui.secret !== undefined) await page.goto(ui.printed);
        await page.goto(`${ui.origin}/#/space/proj/bank/progress.md`);
        const sources = page.locator('article.markdown details.sources');
        await sources.first().waitFor();
        assert.equal(await sources.count(), 3, 'one under each cited section');
        // Each disclosure follows its heading and names the note that heading's section came from.
        const mivra = page.locator('article.markdown h2:has-text("Mivra") + details.sources');
        await mivra.locator('summary').click();
        assert.match(await mivra.innerText(), /Mivra queue holds ten shards\./);
        assert.equal(await mivra.locator(`li[data-note="${names[1]}"]`).count(), 1);
        assert.match((await mivra.locator('a').first().getAttribute('href')) ?? '', /#\/space\/proj\/history\//);
        await screenshot(page, 'bank-sources');
        // The consolidation's page says what became of each note, linked to where it went.
        const id = (await mivra.locator('a').first().getAttribute('href'))?.split('/').pop() ?? '';
        await page.goto(`${ui.origin}/#/space/proj/history/${id}`);
        const card = page.locator(`article.note[data-filename="${names[0]}"] .disposition`);
        await card.waitFor();
        assert.equal(await card.innerText(), '→ integrated: progress.md#Progress > Zorvak');
        assert.equal(await card.locator('a').getAttribute('href'), '#/space/proj/bank/progress.md');
        assert.deepEqual(watch.errors, []);
        await page.close();
      } finally {
        await browser.close();
        await ui.stop();
        await home.remove();
      }
    });
  });
}
