/**
 * The web viewer in a real browser: `live-mem ui` (and `serve --http`) as processes over a store
 * seeded through the core and real consolidations and summaries (scripted OpenAI-compatible
 * model), driven in Debian's chromium by playwright-core. Each page renders its data, the live feed
 * shows a note another process writes, search finds a consolidated note, a hostile store runs
 * nothing and calls nowhere, tokens see their spaces only. Screenshots go to test-results/screenshots/.
 */
import assert from 'node:assert/strict';
import { mkdir, rm, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import type { Browser, Locator, Page } from 'playwright-core';
import { FIRST_PLAN, plan, rewrite } from '../../fixtures/llm/scenarios.js';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { launchBrowser, requireBrowserOrSkip, screenshot, startUi, type UiProcess, watchPage } from '../helpers/browser.js';
import { BIN } from '../helpers/mcp-client.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { summaryStep } from '../helpers/summaries.js';
import { plantCompaction } from '../helpers/plant-compaction.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('tester');
const ADMIN = 'ui-test-admin-secret-0123456789abcdef';

const HOSTILE_NOTE = '<script>alert(1)</script> <img src=x onerror=alert(2)> [x](javascript:alert(3)) ![p](https://evil.example/p.png)';
const HOSTILE_MD = [
  '# Hostile <script>alert(10)</script>',
  '',
  '<script>alert(11)</script>',
  '',
  '<img src=x onerror=alert(12)>',
  '',
  '[click](javascript:alert(13)) [case](JaVaScRiPt:alert(14)) [tab](java\tscript:alert(15)) [data](data:text/html,hi)',
  '',
  '![pixel](https://evil.example/pixel.png) <a href="javascript:alert(16)">raw</a> <iframe src="https://evil.example/"></iframe>',
  '',
  '## Safe part',
  '',
  'A [good link](https://example.org/docs) and [another file](progress.md).',
  '',
].join('\n');
const HOSTILE_FILE = '<img src=x onerror=alert(17)>.md';
const HOSTILE_AGENT = '<img src=x onerror=alert(18)>';

const cli = (env: Record<string, string>, args: string[]) =>
  execa(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, extendEnv: false, reject: false });

const llmEnv = (llm: ScriptedLlm) => llm.env();

/** Waits until a locator matches `n` elements (the page's CSP forbids the string evaluation waitForFunction would use). */
async function countIs(locator: Locator, n: number, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while ((await locator.count()) !== n) {
    if (Date.now() > deadline) assert.fail(`expected ${n} elements, found ${await locator.count()}`);
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
}

/** POST /api/tools/{name} as the page does, with an optional token; the status and body. */
async function api(base: string, name: string, args: Record<string, unknown> = {}, token?: string, headers: Record<string, string> = {}) {
  const response = await fetch(`${base}api/tools/${name}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...(token ? { authorization: `Bearer ${token}` } : {}), ...headers },
    body: JSON.stringify(args),
  });
  return { status: response.status, headers: response.headers, body: (await response.json()) as Record<string, unknown> };
}

if (requireBrowserOrSkip()) {
  describe('web viewer in chromium', () => {
    let home: Awaited<ReturnType<typeof tempDir>>;
    let env: Record<string, string>;
    let browser: Browser;
    let ui: UiProcess;
    let uiLlm: ScriptedLlm;
    let consolidationId = '';
    const tokens: Record<string, string> = {};

    before(async () => {
      home = await tempDir('live-mem-ui');
      env = { LIVE_MEM_HOME: home.dir, LIVE_MEM_SUMMARIES: 'off' };
      const storage = createFsDriver(home.dir);
      const core = createCore({ storage });
      await core.spaces.create(owner, { space_id: 'alpha', description: 'The API rewrite' });
      await core.spaces.create(owner, { space_id: 'beta', description: 'Secret project' });
      await core.spaces.create(owner, { space_id: 'hostile', description: '<b>bold</b> <script>alert(20)</script>' });
      const topics = ['zeppelin hangar permits', 'database migration', 'token rotation', 'export streaming', 'search ranking', 'backup manifests'];
      for (const [i, topic] of topics.entries()) {
        const content = `Worked on the ${topic}: ${'details of the work, what was tried and what was decided. '.repeat(5)}`;
        await core.notes.write(owner, {
          space_id: 'alpha',
          category: i % 2 ? 'decision' : 'progress',
          content,
          agent: i % 2 ? 'cline' : 'claude',
          tags: 'api',
        });
      }
      await core.notes.write(owner, { space_id: 'beta', category: 'observation', content: 'beta-only secret note' });
      await plantCompaction(storage, 'beta', {
        id: '20990101T000000-cmp001',
        committed_at: '2099-01-01T00:00:00.000Z',
        sections: [{ filename: 'progress.md', path: ['Progress', 'Done'], content: '## Done\n\n- the **osprey** tunnel was bored\n' }],
        bank: { 'progress.md': '# Progress\n\n## Done\n\n- tunnels bored (digest)\n' },
      });
      await core.notes.write(owner, { space_id: 'hostile', category: 'issue', content: HOSTILE_NOTE, tags: ['<b>tag</b>'] });
      // A person's correction of beta's bank: a revision in its history.
      const progress = await core.bank.read(owner, { space_id: 'beta', filename: 'progress.md' });
      await core.revisions.write(owner, {
        space_id: 'beta',
        filename: 'progress.md',
        content: '# Progress\n\n## Done\n\n- the tunnel was bored by hand\n',
        if_match: progress.version,
        reason: 'the digest lost who bored it',
      });

      // Real consolidations (alpha: the six standard files; hostile: an LLM-written hostile file), then summaries.
      const first = await startScriptedLlm([{ reply: FIRST_PLAN }]);
      const hostile = await startScriptedLlm([{ reply: plan([rewrite('activeContext.md', HOSTILE_MD)], 'Synthesis <script>alert(21)</script>') }]);
      const summaries = await startScriptedLlm([summaryStep()]);
      try {
        assert.equal((await cli({ ...env, ...llmEnv(first) }, ['consolidate', 'alpha', '-q'])).exitCode, 0);
        assert.equal((await cli({ ...env, ...llmEnv(hostile) }, ['consolidate', 'hostile', '-q'])).exitCode, 0);
        const run = await cli({ ...env, ...llmEnv(summaries) }, [
          'summaries',
          'update',
          'alpha',
          '--window-chars',
          '600',
          '--group-chars',
          '600',
          '--batch-delay-ms',
          '0',
        ]);
        assert.equal(run.exitCode, 0, run.stderr);
      } finally {
        await Promise.all([first.close(), hostile.close(), summaries.close()]);
      }
      consolidationId = String(((await core.history.list(owner, { space_id: 'alpha' })).consolidations[0] as { consolidation_id: string }).consolidation_id);
      // Live notes after the consolidation; a hostile agent name (front-matter) and a hostile bank file name, written straight into the store.
      for (let i = 0; i < 5; i++)
        await core.notes.write(owner, { space_id: 'alpha', category: 'todo', content: `next step ${i}`, agent: 'claude', tags: `t${i}` });
      await core.notes.write(owner, { space_id: 'alpha', category: 'question', content: 'who reviews the rewrite?', agent: 'cline', tags: 'review' });
      await core.notes.write(owner, { space_id: 'hostile', category: 'issue', content: HOSTILE_NOTE, tags: ['<b>tag</b>'] });
      const live = path.join(home.dir, 'hostile', 'live');
      await writeFile(
        path.join(live, '20260101T000000_x_issue_00abcdef.md'),
        `---\ntimestamp: "2026-01-01T00:00:00Z"\nagent: "${HOSTILE_AGENT}"\ncategory: "issue"\ntags: ["<i>t</i>"]\nspace_id: "hostile"\n---\n\nfrom a hostile agent\n`,
      );
      await mkdir(path.join(home.dir, 'hostile', 'bank'), { recursive: true });
      await writeFile(path.join(home.dir, 'hostile', 'bank', HOSTILE_FILE), '# From a hostile file name\n');

      tokens.reader = (await core.auth.create(owner, { name: 'reader', permissions: 'read', space_ids: 'alpha' })).token;
      tokens.writer = (await core.auth.create(owner, { name: 'writer', permissions: 'read,write', space_ids: 'alpha' })).token;

      // The viewer's own process can consolidate (the jobs test) with a scripted model.
      uiLlm = await startScriptedLlm([{ reply: FIRST_PLAN }]);
      ui = await startUi({ ...env, ...llmEnv(uiLlm) });
      browser = await launchBrowser();
    });

    after(async () => {
      await browser?.close();
      await ui?.stop();
      await uiLlm?.close();
      await home?.remove();
    });

    /**
     * A fresh page on a path of the viewer, watched. Opened as its owner opens it: first the URL the
     * server printed (with `live-mem ui`'s secret in the fragment, which the tab keeps), then `hash`.
     */
    const open = async (hash: string, server: UiProcess = ui): Promise<{ page: Page; watch: ReturnType<typeof watchPage> }> => {
      const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
      const watch = watchPage(page, server.origin);
      if (server.secret !== undefined) await page.goto(server.printed);
      await page.goto(`${server.origin}/${hash}`);
      return { page, watch };
    };

    it('the URL live-mem ui printed opens the page and leaves the address bar; without its secret the page asks for a token', async () => {
      assert.match(ui.printed, /^http:\/\/127\.0\.0\.1:\d+\/#secret=[\w-]{43}$/, 'a 256-bit secret, in the fragment');
      const page = await browser.newPage();
      const watch = watchPage(page, ui.origin);
      const requests: string[] = [];
      page.on('request', (request) => requests.push(request.url()));
      await page.goto(ui.printed);
      await page.locator('tr[data-space="alpha"]').waitFor();
      assert.equal(page.url(), `${ui.url}#/spaces`, 'the secret is dropped from the address bar');
      assert.ok(
        requests.every((url) => !url.includes(ui.secret as string)),
        'the secret never goes in a URL the server sees',
      );
      await page.close();

      const stranger = await browser.newPage();
      await stranger.goto(`${ui.url}#/space/alpha/live`);
      await stranger.locator('form.token-form').waitFor();
      assert.match(await stranger.locator('form.token-form').innerText(), /#secret=/, 'it says where the secret is');
      assert.equal(await stranger.locator('tr[data-space], .feed .note').count(), 0, 'no data without the secret');
      await stranger.fill('input[name=token]', 'not-the-secret');
      await stranger.press('input[name=token]', 'Enter');
      await stranger.locator('form.token-form .error').waitFor();
      await stranger.fill('input[name=token]', ui.secret as string);
      await stranger.press('input[name=token]', 'Enter');
      await stranger.locator('.feed .note').first().waitFor();
      assert.deepEqual(watch.errors, []);
      await stranger.close();
    });

    it('serves the page with a strict Content-Security-Policy, no inline script, and gzip', async () => {
      const response = await fetch(ui.url, { headers: { 'accept-encoding': 'gzip' } });
      const csp = response.headers.get('content-security-policy') ?? '';
      for (const directive of [
        "default-src 'none'",
        "script-src 'self'",
        "style-src 'self'",
        "connect-src 'self'",
        "frame-ancestors 'none'",
        "base-uri 'none'",
      ]) {
        assert.ok(csp.includes(directive), directive);
      }
      assert.equal(response.headers.get('x-content-type-options'), 'nosniff');
      assert.equal(response.headers.get('referrer-policy'), 'no-referrer');
      const html = await response.text();
      assert.doesNotMatch(html, /<script>|<script [^>]*>[^<]/, 'no inline script');
      assert.doesNotMatch(html, /https?:\/\//, 'no asset from another origin (no CDN)');
      const js = await fetch(`${ui.url}assets/app.js`, { headers: { 'accept-encoding': 'gzip' } });
      assert.equal(js.status, 200);
      assert.match(js.headers.get('content-type') ?? '', /javascript/);
    });

    it('the spaces page lists every space with its backlog, bank files and last consolidation', async () => {
      const { page, watch } = await open('#/spaces');
      const alpha = page.locator('tr[data-space="alpha"]');
      await alpha.waitFor();
      assert.match(await alpha.innerText(), /The API rewrite\s+6\s+6/);
      assert.equal(await alpha.locator('td.last a').getAttribute('href'), `#/space/alpha/history/${consolidationId}`);
      assert.match(await page.locator('tr[data-space="beta"] td.last').innerText(), /never/);
      assert.ok((await page.locator('tr[data-space]').count()) === 3);
      await screenshot(page, 'spaces');
      assert.deepEqual(watch.errors, []);
      await page.close();
    });

    it('the spaces page shows a space whose _meta.json is garbage as broken, and the others as usual', async () => {
      await mkdir(path.join(home.dir, 'broken'));
      await writeFile(path.join(home.dir, 'broken', '_meta.json'), 'garbage');
      try {
        const { page, watch } = await open('#/spaces');
        const broken = page.locator('tr.broken[data-space="broken"]');
        await broken.waitFor();
        assert.match(await broken.innerText(), /broken: _meta\.json is unreadable/);
        assert.match(await page.locator('tr[data-space="alpha"]').innerText(), /The API rewrite\s+6\s+6/);
        assert.deepEqual(watch.errors, []);
        await page.close();
      } finally {
        await rm(path.join(home.dir, 'broken'), { recursive: true });
      }
    });

    it('the secret link opens a page that offers no "Forget token", and the token page shows code, not backticks', async () => {
      const { page, watch } = await open('#/spaces');
      await page.locator('tr[data-space="alpha"]').waitFor();
      assert.equal(await page.locator('button.sign-out').isHidden(), true, 'forgetting the secret would only lock its owner out');
      await page.reload();
      await page.locator('tr[data-space="alpha"]').waitFor();
      assert.equal(await page.locator('button.sign-out').isHidden(), true, 'still so once the secret has left the address bar');
      const stranger = await browser.newPage();
      await stranger.goto(`${ui.url}#/spaces`);
      const form = stranger.locator('form.token-form');
      await form.waitFor();
      assert.doesNotMatch(await form.innerText(), /`/);
      assert.deepEqual(await form.locator('code').allInnerTexts(), ['live-mem ui', '#secret=…']);
      assert.deepEqual(watch.errors, []);
      await stranger.close();
      await page.close();
    });

    it('the spaces page links a bank only when it has files: an empty one is a plain 0', async () => {
      assert.equal((await cli(env, ['space', 'create', 'empty'])).exitCode, 0);
      try {
        const { page, watch } = await open('#/spaces');
        const row = page.locator('tr[data-space="empty"]');
        await row.waitFor();
        assert.equal(await row.locator('td.bank-count').innerText(), '0');
        assert.equal(await row.locator('td.bank-count a').count(), 0);
        assert.equal(await page.locator('tr[data-space="alpha"] td.bank-count a').getAttribute('href'), '#/space/alpha/bank');
        assert.deepEqual(watch.errors, []);
        await page.close();
      } finally {
        await rm(path.join(home.dir, 'empty'), { recursive: true });
      }
    });

    it('a page that is not found says so and leads back to the spaces', async () => {
      const { page, watch } = await open('#/space/nope/live');
      const notFound = page.locator('section.error-page');
      await notFound.waitFor();
      assert.equal(await notFound.locator('h1').innerText(), 'Not found');
      assert.match(await notFound.locator('.error').innerText(), /space 'nope' does not exist/);
      await notFound.locator('a.back').click();
      await page.locator('tr[data-space="alpha"]').waitFor();
      assert.equal(page.url(), `${ui.url}#/spaces`);
      assert.deepEqual(watch.errors, []);
      await page.close();
    });

    it('the live feed shows the newest notes first, filters them, and shows a note another process writes, added to the page without a reload', async () => {
      const { page, watch } = await open('#/space/alpha/live');
      const notes = page.locator('.feed .note');
      await notes.first().waitFor();
      assert.equal(await notes.count(), 6);
      assert.match(await notes.first().innerText(), /who reviews the rewrite\?/);
      await page.selectOption('select[name=category]', 'todo');
      await countIs(page.locator('.feed .note'), 5);
      await page.fill('input[name=tags]', 't3');
      await page.press('input[name=tags]', 'Enter');
      await countIs(page.locator('.feed .note'), 1);
      await page.fill('input[name=tags]', '');
      await page.press('input[name=tags]', 'Enter');
      await page.selectOption('select[name=category]', '');
      await countIs(page.locator('.feed .note'), 6);

      // The page follows the server's change stream (its change feed), not a poll every second.
      await page.locator('.pulse[data-source="stream"]').waitFor();
      await page.waitForTimeout(1_500); // past the first poll: from here on, news come through the stream (the poll waits 30 s)
      const written = await cli(env, ['note', 'alpha', 'written by another process', '-c', 'insight', '--as', 'other-agent']);
      assert.equal(written.exitCode, 0, written.stderr);
      await page.locator('.feed .note', { hasText: 'written by another process' }).waitFor({ timeout: 5_000 });
      assert.match(await notes.first().innerText(), /other-agent/, 'the new note is on top');
      assert.equal(await notes.count(), 7, 'added, not reloaded twice');
      await screenshot(page, 'live');
      // The stream is read like the tools: a credential, and a space the token may read.
      const changes = (token?: string) =>
        fetch(`${ui.origin}/api/spaces/beta/changes`, token ? { headers: { authorization: `Bearer ${token}` } } : {}).then((response) => response.status);
      assert.equal(await changes(), 401);
      assert.equal(await changes(tokens.reader), 403, 'a token of alpha does not follow beta');
      // An open stream is an answered request: more streams than a token's calls in flight (8) leave its calls served.
      const streams = await Promise.all(
        Array.from({ length: 9 }, async () => {
          const controller = new AbortController();
          const response = await fetch(`${ui.origin}/api/spaces/alpha/changes`, {
            headers: { authorization: `Bearer ${tokens.reader}` },
            signal: controller.signal,
          });
          return { status: response.status, controller };
        }),
      );
      assert.deepEqual(
        streams.map((stream) => stream.status),
        Array(9).fill(200),
      );
      assert.equal((await api(ui.url, 'live_read', { space_id: 'alpha', limit: 1 }, tokens.reader)).status, 200, 'a call beside nine open streams');
      for (const stream of streams) stream.controller.abort();
      assert.deepEqual(watch.errors, []);
      await page.close();
    });

    it('the live feed pages through a space of more notes than one read returns, down to the oldest', async () => {
      const core = createCore({ storage: createFsDriver(home.dir) });
      await core.spaces.create(owner, { space_id: 'big' });
      const total = 1150;
      for (let i = 0; i < total; i++) await core.notes.write(owner, { space_id: 'big', category: 'progress', content: `big note ${i}.` });
      const { page, watch } = await open('#/space/big/live');
      const notes = page.locator('.feed .note');
      await countIs(notes, 100);
      const more = page.locator('button.more');
      for (let clicks = 0; clicks < 20 && (await more.isVisible()); clicks++) await more.click();
      await countIs(notes, total);
      assert.match(await notes.last().innerText(), /big note 0\./, 'the oldest note is reached');
      const shown = await page.locator('.feed .note .note-content').allInnerTexts();
      assert.equal(new Set(shown.filter((text) => text.startsWith('big note'))).size, total, 'each note once');
      assert.ok(!(await more.isVisible()), 'nothing more to show');
      assert.match(await page.locator('.feed-status').innerText(), /1,150 of 1,150 notes shown/);
      assert.deepEqual(watch.errors, []);
      await page.close();
    });

    it('the bank is rendered as Markdown with a table of contents and the consolidation that last wrote each file', async () => {
      const { page, watch } = await open('#/space/alpha/bank/progress.md');
      await page.locator('article.markdown h1').waitFor();
      assert.equal(await page.locator('article.markdown h1').innerText(), 'Progress');
      assert.deepEqual(await page.locator('.toc li').allInnerTexts(), ['Progress', 'What works', 'Known issues']);
      assert.equal(await page.locator('.bank-files li').count(), 6);
      assert.match(await page.locator('.bank-files li[data-file="techContext.md"] .writer').innerText(), new RegExp(consolidationId));
      await page.locator('.bank-files a', { hasText: 'techContext.md' }).click();
      await page.locator('article.markdown[data-file="techContext.md"]').waitFor();
      await screenshot(page, 'bank');
      assert.deepEqual(watch.errors, []);
      await page.close();
    });

    it("the bank's file list shows each file's size against its budget, and marks a file over it", async () => {
      const core = createCore({ storage: createFsDriver(home.dir) });
      await core.spaces.create(owner, { space_id: 'budgets', rules: '# Rules\n\n### big.md\nBudget: 1,000 tokens\n\n### small.md\nAnything.\n' });
      await writeFile(path.join(home.dir, 'budgets', 'bank', 'big.md'), `# Big\n\n${'b'.repeat(4_542)}`); // 1,300 tokens
      await writeFile(path.join(home.dir, 'budgets', 'bank', 'small.md'), `# Small\n\n${'s'.repeat(3_491)}`); // 1,000 tokens
      const { page, watch } = await open('#/space/budgets/bank');
      await page.locator('.bank-files li[data-file="big.md"] .budget').waitFor();
      const big = page.locator('.bank-files li[data-file="big.md"] .budget');
      assert.equal((await big.innerText()).trim(), '1.3k / 1k tokens — over budget');
      assert.equal(await big.getAttribute('class'), 'budget over');
      assert.equal(await big.locator('meter').getAttribute('max'), '1000');
      const small = page.locator('.bank-files li[data-file="small.md"] .budget');
      assert.equal((await small.innerText()).trim(), '1k / 4k tokens');
      assert.equal(await small.getAttribute('class'), 'budget');
      assert.equal((await page.locator('.bank-total .budget').innerText()).trim(), '2.3k / 16k tokens');
      await screenshot(page, 'bank-budgets');
      assert.deepEqual(watch.errors, []);
      await page.close();
    });

    it('the history timeline lists each consolidation; one shows its metrics and notes', async () => {
      const { page, watch } = await open('#/space/alpha/history');
      const row = page.locator(`tr[data-consolidation="${consolidationId}"]`);
      await row.waitFor();
      assert.match(await row.innerText(), /\b6\b/);
      assert.match(await row.innerText(), /progress\.md/);
      await screenshot(page, 'history');
      await row.locator('a').first().click();
      await page.locator('.consolidation .note').first().waitFor();
      assert.equal(await page.locator('.consolidation .note').count(), 6);
      assert.match(await page.locator('.metrics').innerText(), /notes\s+6/);
      await screenshot(page, 'history-detail');
      assert.deepEqual(watch.errors, []);
      await page.close();
    });

    it('the summaries page shows each level and drills down to the notes a summary covers', async () => {
      const { page, watch } = await open('#/space/alpha/summaries');
      await page.locator('.level[data-level="1"] .summary').first().waitFor();
      assert.ok((await page.locator('.level[data-level="2"] .summary').count()) >= 1, 'level 2 exists');
      await screenshot(page, 'summaries');
      await page.locator('.level[data-level="2"] .summary a').first().click();
      await page.locator('.summary-detail .children a').first().click();
      const covered = page.locator('.summary-detail .covered');
      await covered.first().waitFor();
      assert.match(await covered.first().innerText(), new RegExp(`in consolidation ${consolidationId}`));
      const filename = String(await covered.first().getAttribute('data-filename'));
      await screenshot(page, 'summary-detail');
      await covered.first().locator('a').click();
      await page.locator(`.consolidation .note.focus[data-filename="${filename}"]`).waitFor();
      assert.equal(await page.locator('.consolidation .note').first().getAttribute('data-filename'), filename, 'the note is shown first');
      assert.deepEqual(watch.errors, []);
      await page.close();
    });

    it('search finds a consolidated note, with its source and level, and leads to its consolidation', async () => {
      const { page, watch } = await open('#/space/alpha/search');
      await page.fill('input[name=query]', 'zeppelin');
      await page.press('input[name=query]', 'Enter');
      const hit = page.locator('.hit[data-source="history"]').first();
      await hit.waitFor();
      assert.match(await hit.innerText(), /zeppelin hangar permits/);
      assert.match(await hit.innerText(), /level 0/);
      await screenshot(page, 'search');
      await hit.locator('a').first().click();
      await page.locator(`.consolidation`).waitFor();
      assert.match(page.url(), new RegExp(`history/${consolidationId}`));
      assert.deepEqual(watch.errors, []);
      await page.close();
    });

    it('a compaction in history shows the sections it rewrote; search finds one as an earlier version and leads there', async () => {
      const { page, watch } = await open('#/space/beta/history');
      const row = page.locator('tr[data-kind="compaction"]');
      await row.waitFor();
      assert.match(await row.innerText(), /20990101T000000-cmp001\s*compaction/);
      assert.match(await row.innerText(), /1 pre-images/);
      await row.locator('a').first().click();
      const card = page.locator('.consolidation .preimage');
      await card.waitFor();
      assert.match(await card.innerText(), /Progress › Done/);
      assert.equal(await card.locator('strong').innerText(), 'osprey', 'rendered as Markdown');

      await page.goto(`${ui.origin}/#/space/beta/search/osprey`);
      const hit = page.locator('.hit[data-source="bank_history"]');
      await hit.waitFor();
      assert.match(await hit.innerText(), /earlier version, replaced/);
      await hit.locator('a').first().click();
      await page.locator('.consolidation .preimage').waitFor();
      assert.match(page.url(), /history\/20990101T000000-cmp001/);
      assert.deepEqual(watch.errors, []);
      await page.close();
    });

    it('a correction in history says who did what and why, and shows the file as it was before', async () => {
      const { page, watch } = await open('#/space/beta/history');
      const row = page.locator('tr[data-kind="revision"]');
      await row.waitFor();
      assert.match(await row.innerText(), /revision: write/);
      await row.locator('a').first().click();
      await page.locator('.consolidation .revision').waitFor();
      assert.match(await page.locator('.consolidation .revision').innerText(), /write by .* — the digest lost who bored it/);
      assert.match(await page.locator('.consolidation .preimage').innerText(), /tunnels bored \(digest\)/);
      await screenshot(page, 'history-revision');
      assert.deepEqual(watch.errors, []);
      await page.close();
    });

    it('a hostile store runs nothing and calls nowhere: scripts, handlers and javascript: links are shown as text or dropped', async () => {
      const { page, watch } = await open('#/spaces');
      await page.locator('tr[data-space="hostile"]').waitFor();
      assert.match(await page.locator('tr[data-space="hostile"]').innerText(), /<b>bold<\/b> <script>alert\(20\)<\/script>/);

      await page.goto(`${ui.origin}/#/space/hostile/live`);
      await page.locator('.feed .note').nth(1).waitFor();
      const feed = await page.locator('.feed').innerText();
      assert.ok(feed.includes(HOSTILE_NOTE), 'the note is shown as its text');
      assert.ok(feed.includes(HOSTILE_AGENT), 'the agent name is shown as its text');

      await page.goto(`${ui.origin}/#/space/hostile/bank/activeContext.md`);
      await page.locator('article.markdown h2').waitFor();
      const article = page.locator('article.markdown');
      assert.match(await article.locator('h1').innerText(), /Hostile <script>alert\(10\)<\/script>/);
      assert.ok((await article.innerText()).includes('<img src=x onerror=alert(12)>'));
      assert.equal(await page.locator('script:not([src])').count(), 0);
      assert.equal(await page.locator('img, iframe').count(), 0, 'no image or frame from the store');
      const hrefs = await article.locator('a').evaluateAll((links) => links.map((a) => a.getAttribute('href') ?? ''));
      assert.ok(
        hrefs.every((href) => /^(https:\/\/|#\/space\/hostile\/)/.test(href)),
        `only http(s) links and the viewer's routes are links: ${hrefs.join(' ')}`,
      );
      assert.ok(hrefs.includes('https://example.org/docs') && hrefs.includes('#/space/hostile/bank/progress.md'), 'safe links are kept');
      assert.equal(await article.locator('.dropped-link').count(), 3, 'javascript: and data: links lose their href');
      await screenshot(page, 'hostile-bank');

      await page.goto(`${ui.origin}/#/space/hostile/bank/${encodeURIComponent(HOSTILE_FILE)}`);
      await page.locator(`article.markdown h1`, { hasText: 'From a hostile file name' }).waitFor();
      assert.ok((await page.locator('.bank-files').innerText()).includes(HOSTILE_FILE));

      await page.goto(`${ui.origin}/#/space/hostile/search/alert`);
      await page.locator('.hit').first().waitFor();
      await page.goto(`${ui.origin}/#/space/hostile/history`);
      await page.locator('tr[data-consolidation] a').first().click();
      await page.locator('.consolidation .note').first().waitFor();
      await page.waitForTimeout(300);

      assert.deepEqual(watch.dialogs, [], 'no dialog opened');
      assert.deepEqual(watch.foreign, [], 'no request left the origin');
      assert.deepEqual(watch.errors, []);
      assert.equal(await page.locator('[onerror], [onclick], [onload]').count(), 0);
      await page.close();
    });

    it('the jobs page starts a consolidation only after a confirmation, and follows it', async () => {
      const session = (await (await fetch(`${ui.url}api/session`)).json()) as { model_configured: boolean };
      assert.equal(session.model_configured, true);
      const { page, watch } = await open('#/space/alpha/jobs');
      assert.equal(await page.locator('.consolidate-start').isEnabled(), true);
      assert.equal(await page.locator('.consolidate .no-model').count(), 0, 'a model is configured: nothing to explain');
      await page.locator('.consolidate-start').click();
      assert.match(await page.locator('.consolidate').innerText(), /Fold the \d+ live notes/);
      await page.locator('.consolidate .cancel').click();
      assert.equal(await page.locator('.consolidate .confirm').count(), 0);
      await page.locator('.consolidate-start').click();
      await page.locator('.consolidate .confirm').click();
      await page.locator('tr[data-job][data-state="ok"]').waitFor({ timeout: 15_000 });
      await screenshot(page, 'jobs');
      assert.deepEqual(watch.dialogs, []);
      assert.deepEqual(watch.errors, []);
      await page.close();
    });

    it('the API: only the viewer tools, JSON only, no credentials in the URL, no foreign Origin', async () => {
      const secret = ui.secret as string;
      assert.equal(
        (await api(ui.url, 'live_note', { space_id: 'alpha', category: 'todo', content: 'x' }, secret)).status,
        404,
        'no write tool but consolidation',
      );
      assert.equal((await api(ui.url, 'space_delete', { space_id: 'alpha', confirm: true }, secret)).status, 404);
      const invalid = await api(ui.url, 'live_read', { space_id: 'alpha', limit: 'many' }, secret);
      assert.equal(invalid.status, 400);
      assert.equal(invalid.body.code, 'invalid_input');
      assert.equal((await api(ui.url, 'bank_read', { space_id: 'alpha', filename: 'nope.md' }, secret)).status, 404);
      const form = await fetch(`${ui.url}api/tools/space_list`, { method: 'POST', headers: { 'content-type': 'text/plain' }, body: '{}' });
      assert.equal(form.status, 415);
      assert.equal((await fetch(`${ui.url}?token=${tokens.reader}`)).status, 400);
      assert.equal((await api(ui.url, 'space_list', {}, secret, { origin: 'http://evil.example' })).status, 403);
      assert.equal((await fetch(`${ui.url}?secret=${secret}`)).status, 400, 'nor the secret');
    });

    describe('with auth required', () => {
      let secured: UiProcess;
      before(async () => {
        secured = await startUi({ ...env, LIVE_MEM_AUTH: 'required', LIVE_MEM_ADMIN_TOKEN: ADMIN });
      });
      after(() => secured?.stop());

      it('a missing token sees nothing: the API answers 401 and the page asks for a token', async () => {
        const denied = await api(secured.url, 'space_list');
        assert.equal(denied.status, 401);
        assert.equal(denied.body.spaces, undefined);
        assert.equal((await api(secured.url, 'space_list', {}, 'lm_wrong')).status, 403);
        const { page, watch } = await open('#/spaces', secured);
        await page.locator('form.token-form').waitFor();
        assert.equal(await page.locator('tr[data-space]').count(), 0);
        await screenshot(page, 'token');
        await page.fill('input[name=token]', 'lm_wrong');
        await page.press('input[name=token]', 'Enter');
        await page.locator('form.token-form .error').waitFor();
        assert.deepEqual(watch.foreign, []);
        await page.close();
      });

      it('a token a person typed can be forgotten', async () => {
        const { page, watch } = await open('#/spaces', secured);
        await page.fill('input[name=token]', tokens.reader as string);
        await page.press('input[name=token]', 'Enter');
        await page.locator('tr[data-space="alpha"]').waitFor();
        const forget = page.locator('button.sign-out');
        assert.equal(await forget.isVisible(), true);
        await forget.click();
        await page.locator('form.token-form').waitFor();
        assert.equal(await forget.isHidden(), true);
        assert.deepEqual(watch.errors, []);
        await page.close();
      });

      it('a read token sees only its spaces, never in a URL, and gets no consolidation button', async () => {
        const { page, watch } = await open('#/spaces', secured);
        const requests: string[] = [];
        page.on('request', (request) => requests.push(request.url()));
        await page.fill('input[name=token]', tokens.reader as string);
        await page.press('input[name=token]', 'Enter');
        await page.locator('tr[data-space="alpha"]').waitFor();
        assert.equal(await page.locator('tr[data-space]').count(), 1, 'alpha only');
        assert.equal((await api(secured.url, 'live_read', { space_id: 'beta' }, tokens.reader)).status, 403);
        await page.goto(`${secured.origin}/#/space/beta/live`);
        await page.locator('.error').waitFor();
        assert.match(await page.locator('.error').innerText(), /forbidden/);
        await page.goto(`${secured.origin}/#/space/alpha/jobs`);
        await page.locator('.space-header').waitFor();
        assert.equal(await page.locator('.consolidate-start').count(), 0);
        assert.equal((await api(secured.url, 'bank_consolidate', { space_id: 'alpha', background: true }, tokens.reader)).status, 403);
        assert.ok(
          requests.every((url) => !url.includes(tokens.reader as string)),
          'the token never goes in a URL',
        );
        assert.deepEqual(watch.foreign, []);
        await page.close();
      });

      it('a write token gets the consolidation button; with no model configured it is disabled and says what to set', async () => {
        const session = (await (await fetch(`${secured.url}api/session`)).json()) as { model_configured: boolean };
        assert.equal(session.model_configured, false, 'this server has no LIVE_MEM_LLM_* settings');
        const { page, watch } = await open('#/space/alpha/jobs', secured);
        await page.fill('input[name=token]', tokens.writer as string);
        await page.press('input[name=token]', 'Enter');
        const button = page.locator('.consolidate-start');
        await button.waitFor();
        assert.equal(await button.isDisabled(), true, 'a button that could only fail is not offered');
        const why = page.locator('.consolidate .no-model');
        assert.equal(await button.getAttribute('aria-describedby'), await why.getAttribute('id'));
        assert.match(await why.innerText(), /No model is configured, so this server cannot consolidate\. Set LIVE_MEM_LLM_BASE_URL and LIVE_MEM_LLM_MODEL/);
        const jobs = async () => JSON.stringify((await api(secured.url, 'bank_consolidation_status', { space_id: 'alpha' }, tokens.writer)).body.jobs);
        const before = await jobs();
        await button.click({ force: true });
        assert.equal(await page.locator('.consolidate .confirm').count(), 0, 'a click on it asks nothing and starts nothing');
        assert.equal(await jobs(), before);
        await screenshot(page, 'jobs-no-model');
        assert.deepEqual(watch.errors, []);
        await page.close();
      });
    });

    it('serve --http serves the viewer at / beside /mcp, always with a token', async () => {
      const server = await startUi({ ...env, LIVE_MEM_LOG_LEVEL: 'info' }, ['serve', '--http', '--port', '0']);
      try {
        const page = await fetch(server.url);
        assert.equal(page.status, 200);
        assert.match(page.headers.get('content-security-policy') ?? '', /default-src 'none'/);
        assert.equal((await fetch(`${server.url}mcp`, { method: 'POST' })).status, 401, '/mcp is still MCP');
        assert.equal((await api(server.url, 'space_list')).status, 401, 'no local owner over serve --http');
        const session = (await (await fetch(`${server.url}api/session`)).json()) as { token_required: boolean };
        assert.equal(session.token_required, true);
        const { page: browserPage, watch } = await open('#/spaces', server);
        await browserPage.fill('input[name=token]', tokens.reader as string);
        await browserPage.press('input[name=token]', 'Enter');
        await browserPage.locator('tr[data-space="alpha"]').waitFor();
        assert.equal(await browserPage.locator('tr[data-space]').count(), 1);
        assert.deepEqual(watch.foreign, []);
        await browserPage.close();
      } finally {
        await server.stop();
      }
    });
  });
}
