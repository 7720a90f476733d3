/**
 * Section 12 of the benchmark: the web viewer. Page weight — the bytes of index.html, app.js and
 * app.css as built into dist/ui/public/, raw and gzipped (as the server sends them) — and first
 * render in Debian's chromium (headless, playwright-core) against `live-mem ui` over a space of
 * 10,000 live notes and 100 consolidations (20 notes each): from navigation to the page's data on
 * screen, on a fresh server (cold: the first live_read reads the 1,000 newest bodies) and then the
 * median of 5 loads (warm). Without chromium the render figures are n/a.
 */
import { existsSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import path from 'node:path';
import { performance } from 'node:perf_hooks';
import { gzipSync } from 'node:zlib';
import { CHROMIUM, carrySecret, launchBrowser, startUi } from '../test/helpers/browser.js';
import { figure, freshHome, type Figure } from './bench-lib.js';
import { seedSynthetic } from './bench-recall.js';

const PUBLIC = new URL('../dist/ui/public/', import.meta.url).pathname;
const LIVE = 10_000;
const CONSOLIDATIONS = 100;
const PER_CONSOLIDATION = 20;
const WARM_LOADS = 5;

/** The pages measured: route, and the element that says its data is on screen. */
const PAGES = [
  { key: 'spaces', label: 'spaces', hash: '#/spaces', ready: 'tr[data-space]' },
  { key: 'live', label: 'live feed (10,000 notes)', hash: '#/space/big/live', ready: '.feed .note' },
  { key: 'history', label: 'history (100 consolidations)', hash: '#/space/big/history', ready: 'tr[data-consolidation]' },
] as const;

async function pageWeight(): Promise<Figure[]> {
  const files = await Promise.all(['index.html', 'app.js', 'app.css'].map((file) => readFile(path.join(PUBLIC, file))));
  const raw = files.reduce((sum, body) => sum + body.length, 0);
  const gzip = files.reduce((sum, body) => sum + gzipSync(body, { level: 9 }).length, 0);
  return [
    figure('ui_page_weight_kib', 'page weight (html + js + css)', raw / 1024, 'KiB'),
    figure('ui_page_weight_gzip_kib', '  gzipped, as served', gzip / 1024, 'KiB'),
  ];
}

const median = (values: number[]) => [...values].sort((a, b) => a - b)[Math.floor(values.length / 2)] as number;

export async function benchUi(): Promise<Figure[]> {
  const figures = await pageWeight();
  if (!existsSync(CHROMIUM)) {
    for (const page of PAGES) figures.push(figure(`ui_first_render_${page.key}_ms`, `first render: ${page.label} (no chromium)`, null, 'ms'));
    return figures;
  }
  const home = await freshHome('ui');
  const texts = Array.from(
    { length: LIVE + CONSOLIDATIONS * PER_CONSOLIDATION },
    (_, i) => `Note ${i}: worked on part ${i % 97} of the rewrite, checked the tests and wrote down what is left.`,
  );
  await seedSynthetic(home, { spaceId: 'big', consolidations: CONSOLIDATIONS, perConsolidation: PER_CONSOLIDATION }, texts);
  const ui = await startUi({ LIVE_MEM_HOME: home });
  const browser = await launchBrowser();
  try {
    for (const target of PAGES) {
      const times: number[] = [];
      for (let load = 0; load <= WARM_LOADS; load++) {
        const page = await browser.newPage();
        await carrySecret(page, ui); // as a tab that opened the printed URL: the measure is the route's load alone
        const start = performance.now();
        await page.goto(`${ui.origin}/${target.hash}`);
        await page.locator(target.ready).first().waitFor({ timeout: 60_000 });
        times.push(performance.now() - start);
        await page.close();
      }
      figures.push(
        figure(`ui_first_render_${target.key}_cold_ms`, `first render: ${target.label}, fresh server`, times[0] as number, 'ms'),
        figure(`ui_first_render_${target.key}_ms`, `  median of ${WARM_LOADS} later loads`, median(times.slice(1)), 'ms'),
      );
    }
    const page = await browser.newPage();
    await carrySecret(page, ui);
    await page.goto(`${ui.origin}/#/space/big/live`);
    await page.locator('.feed .note').first().waitFor();
    figures.push(figure('ui_live_cards', '  note cards in the DOM (a page of 100, then "Show more")', await page.locator('.feed .note').count(), 'ratio'));
    await page.close();
  } finally {
    await browser.close();
    await ui.stop();
  }
  return figures;
}
