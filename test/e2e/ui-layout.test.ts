/**
 * The web viewer's layout in chromium, at a laptop's width (1280 px) and a phone's (400 px): on
 * every page, nothing is wider than the window (wide tables scroll inside their own box), and
 * every tab of a space is on screen. At 1280 px the tables fit whole. Screenshots of each page
 * at each width go to test-results/screenshots/layout-*.png.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import type { Browser, Page } from 'playwright-core';
import { FIRST_PLAN } from '../../fixtures/llm/scenarios.js';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { launchBrowser, requireBrowserOrSkip, screenshot, startUi, type UiProcess, watchPage } from '../helpers/browser.js';
import { BIN } from '../helpers/mcp-client.js';
import { plantCompaction } from '../helpers/plant-compaction.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { summaryStep } from '../helpers/summaries.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('tester');
const SPACE = 'layout-project-with-a-rather-long-name';

const cli = (env: Record<string, string>, args: string[]) =>
  execa(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, extendEnv: false, reject: false });
const llmEnv = (llm: ScriptedLlm) => ({ LIVE_MEM_LLM_BASE_URL: llm.url, LIVE_MEM_LLM_MODEL: 'scripted-model-with-a-long-name', LIVE_MEM_LLM_API_KEY: 'k' });

interface Overflow {
  scrollWidth: number;
  innerWidth: number;
  /** Elements whose right edge passes the window's, outside any box that scrolls or clips them. */
  outside: string[];
  /** Boxes that scroll sideways (a wide table's), with how much they hide. */
  scrollers: Array<{ what: string; hidden: number }>;
  /** Each tab of the space header: whether it lies whole inside the window and is the element drawn there. */
  tabs: Array<{ tab: string; inside: boolean; onTop: boolean }>;
}

/** The few DOM names `measure` uses, declared here: the tests compile without the DOM library. */
interface PageElement {
  tagName: string;
  id: string;
  classList: Iterable<string>;
  parentElement: PageElement | null;
  scrollWidth: number;
  clientWidth: number;
  dataset: Record<string, string | undefined>;
  textContent: string | null;
  getBoundingClientRect(): { left: number; right: number; top: number; width: number; height: number };
  contains(other: PageElement | null): boolean;
}
declare const window: { innerWidth: number };
declare const document: {
  body: PageElement & { querySelectorAll(selector: string): Iterable<PageElement> };
  documentElement: { scrollWidth: number };
  querySelectorAll(selector: string): Iterable<PageElement>;
  elementFromPoint(x: number, y: number): PageElement | null;
};
declare function getComputedStyle(element: PageElement): { overflowX: string };

/**
 * What passes the window's width on the page as it is now. Run in the page: no named helper
 * inside (tsx would wrap it in a `__name` call the page does not have).
 */
function measure(): Overflow {
  const innerWidth = window.innerWidth;
  const named = [...document.body.querySelectorAll('*')].map((element) => ({
    element,
    what: `${element.tagName.toLowerCase()}${element.id ? `#${element.id}` : ''}${[...element.classList].map((c) => `.${c}`).join('')}`,
  }));
  const outside: string[] = [];
  const scrollers: Overflow['scrollers'] = [];
  for (const { element, what } of named) {
    const rect = element.getBoundingClientRect();
    let clipped = false;
    for (let parent = element.parentElement; parent && parent !== document.body; parent = parent.parentElement)
      if (getComputedStyle(parent).overflowX !== 'visible') clipped = true;
    if (rect.width > 0 && rect.right > innerWidth + 0.5 && !clipped) outside.push(`${what} (right edge ${Math.round(rect.right)})`);
    const overflowX = getComputedStyle(element).overflowX;
    if ((overflowX === 'auto' || overflowX === 'scroll') && element.scrollWidth > element.clientWidth + 1)
      scrollers.push({ what, hidden: element.scrollWidth - element.clientWidth });
  }
  const tabs = [...document.querySelectorAll('.tabs .tab')].map((tab) => {
    const rect = tab.getBoundingClientRect();
    const inside = rect.left >= 0 && rect.right <= innerWidth + 0.5 && rect.width > 0;
    const hit = document.elementFromPoint(Math.min(rect.left + rect.width / 2, innerWidth - 1), rect.top + rect.height / 2);
    return { tab: tab.dataset.tab ?? tab.textContent ?? '', inside, onTop: hit === tab || tab.contains(hit) };
  });
  return { scrollWidth: document.documentElement.scrollWidth, innerWidth, outside: outside.slice(0, 10), scrollers, tabs };
}

if (requireBrowserOrSkip('web viewer layout')) {
  describe('web viewer layout in chromium', () => {
    let home: Awaited<ReturnType<typeof tempDir>>;
    let browser: Browser;
    let ui: UiProcess;
    let llm: ScriptedLlm;
    let consolidationId = '';
    let summaryId = '';

    before(async () => {
      home = await tempDir('live-mem-ui-layout');
      const env = { LIVE_MEM_HOME: home.dir, LIVE_MEM_SUMMARIES: 'off' };
      const storage = createFsDriver(home.dir);
      const core = createCore({ storage });
      await core.spaces.create(owner, { space_id: SPACE, description: 'A description long enough to need wrapping on a narrow screen, as real ones are' });
      await core.spaces.create(owner, { space_id: 'second' });
      for (let i = 0; i < 8; i++) {
        await core.notes.write(owner, {
          space_id: SPACE,
          category: i % 2 ? 'decision' : 'progress',
          content: `Step ${i}: ${'what was tried and what was decided, at some length. '.repeat(4)} src/some/deeply/nested/path/to/a/module-with-a-long-name-${i}.ts`,
          agent: i % 2 ? 'cline-on-the-build-machine' : 'claude',
          tags: 'api,layout,a-rather-long-tag-name',
        });
      }
      const first = await startScriptedLlm([{ reply: FIRST_PLAN }]);
      const summaries = await startScriptedLlm([summaryStep()]);
      try {
        const consolidated = await cli({ ...env, ...llmEnv(first) }, ['consolidate', SPACE, '-q']);
        assert.equal(consolidated.exitCode, 0, consolidated.stderr);
        const run = await cli({ ...env, ...llmEnv(summaries) }, [
          'summaries',
          'update',
          SPACE,
          '--window-chars',
          '600',
          '--group-chars',
          '600',
          '--batch-delay-ms',
          '0',
        ]);
        assert.equal(run.exitCode, 0, run.stderr);
      } finally {
        await Promise.all([first.close(), summaries.close()]);
      }
      await plantCompaction(storage, SPACE, {
        id: '20990101T000000-cmp001',
        committed_at: '2099-01-01T00:00:00.000Z',
        sections: [{ filename: 'progress.md', path: ['Progress', 'Done'], content: '## Done\n\n- the layout was checked\n' }],
      });
      const history = await core.history.list(owner, { space_id: SPACE });
      consolidationId = String(
        (history.consolidations as Array<{ consolidation_id: string; kind?: string }>).find((c) => c.kind !== 'compaction')?.consolidation_id,
      );
      const listed = await core.summaries.list(owner, { space_id: SPACE, level: 1 });
      summaryId = String((listed.summaries as Array<{ id: string }>)[0]?.id ?? '');

      llm = await startScriptedLlm([{ reply: FIRST_PLAN }]);
      ui = await startUi({ ...env, ...llmEnv(llm) });
      browser = await launchBrowser();
      // A finished background job, for the jobs page's table.
      const { page } = await open(1280, `#/space/${SPACE}/jobs`);
      await page.locator('.consolidate-start').click();
      await page.locator('.consolidate .confirm').click();
      await page.locator('tr[data-job][data-state="ok"]').waitFor({ timeout: 15_000 });
      await page.close();
      for (let i = 0; i < 3; i++)
        await core.notes.write(owner, {
          space_id: SPACE,
          category: 'todo',
          content: `next step ${i}: see https://example.org/a/long/address/that/does/not/break/easily/${'x'.repeat(60)}`,
        });
    });

    after(async () => {
      await browser?.close();
      await ui?.stop();
      await llm?.close();
      await home?.remove();
    });

    const open = async (width: number, hash: string): Promise<{ page: Page; watch: ReturnType<typeof watchPage> }> => {
      const page = await browser.newPage({ viewport: { width, height: 800 } });
      const watch = watchPage(page, ui.origin);
      if (ui.secret !== undefined) await page.goto(ui.printed);
      await page.goto(`${ui.origin}/${hash}`);
      return { page, watch };
    };

    /** Every page of the viewer, with what shows it has rendered. */
    const pages = (): Array<{ name: string; hash: string; ready: string }> => [
      { name: 'spaces', hash: '#/spaces', ready: `tr[data-space="${SPACE}"]` },
      { name: 'live', hash: `#/space/${SPACE}/live`, ready: '.feed .note' },
      { name: 'bank', hash: `#/space/${SPACE}/bank/progress.md`, ready: 'article.markdown h1' },
      { name: 'history', hash: `#/space/${SPACE}/history`, ready: 'table.history tr[data-consolidation]' },
      { name: 'history-detail', hash: `#/space/${SPACE}/history/${consolidationId}`, ready: '.consolidation .note' },
      { name: 'history-compaction', hash: `#/space/${SPACE}/history/20990101T000000-cmp001`, ready: '.consolidation .preimage' },
      { name: 'summaries', hash: `#/space/${SPACE}/summaries`, ready: '.summary' },
      { name: 'summary-detail', hash: `#/space/${SPACE}/summaries/${summaryId}`, ready: '.summary-detail .summary-text' },
      { name: 'search', hash: `#/space/${SPACE}/search/decided`, ready: '.hit' },
      { name: 'jobs', hash: `#/space/${SPACE}/jobs`, ready: 'tr[data-job]' },
    ];

    for (const width of [1280, 400]) {
      it(`at ${width} px, no page is wider than the window and every tab is on screen`, async () => {
        const problems: string[] = [];
        for (const { name, hash, ready } of pages()) {
          const { page, watch } = await open(width, hash);
          await page.locator(ready).first().waitFor();
          await screenshot(page, `layout-${name}-${width}`);
          const found = await page.evaluate(measure);
          if (found.scrollWidth > found.innerWidth)
            problems.push(`${name}: the page is ${found.scrollWidth} px wide in ${found.innerWidth}: ${found.outside.join(', ')}`);
          else if (found.outside.length > 0) problems.push(`${name}: past the window's edge: ${found.outside.join(', ')}`);
          // At a laptop's width a table fits whole; narrower, it may scroll inside its own box.
          if (width >= 1280 && found.scrollers.length > 0)
            problems.push(`${name}: scrolls sideways at ${width} px: ${found.scrollers.map((s) => `${s.what} hides ${s.hidden} px`).join(', ')}`);
          if (name !== 'spaces') {
            assert.equal(found.tabs.length, 6, `${name}: the six tabs`);
            for (const tab of found.tabs) if (!tab.inside || !tab.onTop) problems.push(`${name}: tab ${tab.tab} is not fully on screen`);
          }
          assert.deepEqual(watch.errors, [], name);
          await page.close();
        }
        assert.deepEqual(problems, []);
      });
    }

    it('at 400 px, a wide table scrolls inside its own box, and a tab leads to its page', async () => {
      const { page } = await open(400, `#/space/${SPACE}/history`);
      await page.locator('table.history tr[data-consolidation]').first().waitFor();
      assert.equal(await page.locator('.table-scroll > table.history').count(), 1, 'the table is in a scroll box');
      const last = page.locator('table.history th').last();
      await last.scrollIntoViewIfNeeded();
      const rect = await last.boundingBox();
      assert.ok(rect && rect.x >= 0 && rect.x + rect.width <= 400 + 0.5, 'the last column can be scrolled to');
      await page.locator('.tabs .tab[data-tab="jobs"]').click();
      await page.locator('tr[data-job]').first().waitFor();
      assert.match(page.url(), /\/jobs$/);
      await page.close();
    });
  });
}
