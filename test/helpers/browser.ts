/**
 * A real browser for the web viewer's tests: Debian's chromium, headless, driven by playwright-core
 * (the library only: no browser download). `.ci/run` installs chromium.
 *
 *   LIVE_MEM_TEST_CHROMIUM     the browser binary (default /usr/bin/chromium)
 *   LIVE_MEM_TEST_BROWSER=off  skip the browser suites when no browser is installed; without it a
 *                              missing browser FAILS the run (CI must never pass by skipping them)
 *
 * Also: `live-mem ui` as a process, and a watch on a page for what hostile content could make it
 * do — a dialog, a request to another origin, an error thrown in the page.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { mkdir } from 'node:fs/promises';
import path from 'node:path';
import { it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';
import { type Browser, chromium, type Page } from 'playwright-core';
import { BIN } from './mcp-client.js';

export const CHROMIUM = process.env.LIVE_MEM_TEST_CHROMIUM || '/usr/bin/chromium';

/** Where the test run writes screenshots of each page (CI keeps the folder). */
export const SCREENSHOTS = fileURLToPath(new URL('../../test-results/screenshots/', import.meta.url));

/**
 * Whether the browser suites can run; when they cannot, registers a stand-in test that fails (the
 * default: a missing browser is a broken setup) or, with LIVE_MEM_TEST_BROWSER=off, is skipped.
 * Call at file top level.
 */
export function requireBrowserOrSkip(label = 'web viewer'): boolean {
  if (process.env.LIVE_MEM_TEST_BROWSER === 'off') {
    it(`${label}: browser tests are off (LIVE_MEM_TEST_BROWSER=off)`, { skip: 'LIVE_MEM_TEST_BROWSER=off' }, () => undefined);
    return false;
  }
  if (existsSync(CHROMIUM)) return true;
  it(`${label}: needs chromium at ${CHROMIUM}`, () =>
    assert.fail(`no browser at ${CHROMIUM}: apt-get install -y chromium (or set LIVE_MEM_TEST_CHROMIUM; LIVE_MEM_TEST_BROWSER=off skips these tests)`));
  return false;
}

/**
 * Chromium headless with a fresh profile (playwright makes one per launch). The background
 * networking flags keep it from calling home: the test network is closed, and any request that
 * leaves the page's origin is a finding of the tests, not noise.
 */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-quic',
      '--no-first-run',
      '--disable-background-networking',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}

export interface PageWatch {
  dialogs: string[];
  /** Requests to any origin but the server's (data: URLs aside). */
  foreign: string[];
  errors: string[];
}

/** Records, for the page's whole life, what hostile content could make it do. Dialogs are dismissed. */
export function watchPage(page: Page, origin: string): PageWatch {
  const watch: PageWatch = { dialogs: [], foreign: [], errors: [] };
  page.on('dialog', (dialog) => {
    watch.dialogs.push(`${dialog.type()}: ${dialog.message()}`);
    void dialog.dismiss().catch(() => undefined);
  });
  page.on('request', (request) => {
    const url = request.url();
    if (!url.startsWith('data:') && new URL(url).origin !== origin) watch.foreign.push(url);
  });
  page.on('pageerror', (error) => watch.errors.push(error.message));
  return watch;
}

export async function screenshot(page: Page, name: string): Promise<void> {
  await mkdir(SCREENSHOTS, { recursive: true });
  await page.screenshot({ path: path.join(SCREENSHOTS, `${name}.png`), fullPage: true });
}

export interface UiProcess {
  /** The page's URL, ending with '/'. */
  url: string;
  origin: string;
  /** The secret of the URL `live-mem ui` printed (`/#secret=…`), when it printed one. */
  secret?: string;
  /** The URL as printed, secret included. */
  printed: string;
  process: ResultPromise;
  stop(): Promise<void>;
}

/**
 * Gives every document `page` loads the secret of `live-mem ui`'s URL, as a tab that opened that URL
 * keeps it (sessionStorage, the page's own key): for measures that load a route straight away.
 */
export async function carrySecret(page: Page, ui: UiProcess): Promise<void> {
  if (ui.secret === undefined) return;
  await page.addInitScript((secret) => {
    try {
      (globalThis as { sessionStorage?: { setItem(key: string, value: string): void } }).sessionStorage?.setItem('live-mem-token', secret);
    } catch {
      // about:blank has no storage
    }
  }, ui.secret);
}

/** Spawns `live-mem <args>` (ui, or serve --http) and waits for the URL it announces. */
export async function startUi(env: Record<string, string>, args: string[] = ['ui', '--port', '0']): Promise<UiProcess> {
  const child = execa(process.execPath, [BIN, ...args], {
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', LIVE_MEM_LOG_LEVEL: 'warn', ...env },
    extendEnv: false,
    reject: false,
  });
  let seen = '';
  const [url, secret] = await new Promise<[string, string | undefined]>((resolve, reject) => {
    const look = (chunk: Buffer) => {
      seen += chunk.toString();
      // Up to the whitespace after it: the whole URL, with the secret `live-mem ui` prints in its fragment.
      const match = /(http:\/\/127\.0\.0\.1:\d+)\/(?:mcp)?(?:#secret=([\w-]+))?\s/.exec(seen);
      if (match) resolve([`${match[1]}/`, match[2]]);
    };
    child.stdout?.on('data', look);
    child.stderr?.on('data', look);
    void child.then(() => reject(new Error(`live-mem ${args.join(' ')} exited: ${seen}`)));
    setTimeout(() => reject(new Error(`no URL announced: ${seen}`)), 15_000).unref(); // a pending timer would hold the test process
  });
  return {
    url,
    origin: new URL(url).origin,
    ...(secret !== undefined ? { secret } : {}),
    printed: secret !== undefined ? `${url}#secret=${secret}` : url,
    process: child,
    async stop() {
      child.kill('SIGTERM');
      await child;
    },
  };
}
