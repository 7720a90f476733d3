/**
 * LIVE_MEM_EMBEDDINGS_LOCAL through the built CLI: the bundle leaves @huggingface/transformers out and
 * imports it when the setting is set, a model comes from LIVE_MEM_EMBEDDINGS_LOCAL_DIR (the tiny
 * fixture model: nothing downloaded), a command that started the embeddings waits for them before it
 * exits and keeps them in the index snapshot, and the next process searches in hybrid mode at once.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { launchBrowser, requireBrowserOrSkip, startUi, watchPage } from '../helpers/browser.js';
import { BIN } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';
import { requireTransformersOrSkip } from '../helpers/transformers.js';

const MODELS = fileURLToPath(new URL('../../fixtures/embeddings/', import.meta.url));

describe('local embeddings from the CLI', async () => {
  if (!requireTransformersOrSkip('local embeddings from the CLI')) return;
  const home = await tempDir();
  after(() => home.remove());
  const env = {
    PATH: process.env.PATH ?? '',
    HOME: home.dir,
    LIVE_MEM_HOME: home.dir,
    LIVE_MEM_LOG_LEVEL: 'warn',
    LIVE_MEM_EMBEDDINGS_LOCAL: 'live-mem/tiny-minilm',
    LIVE_MEM_EMBEDDINGS_LOCAL_DIR: MODELS,
  };
  const cli = (...args: string[]) => execa(process.execPath, [BIN, ...args], { env, extendEnv: false });

  it('embeds in the background of the first search, and the next process searches in hybrid mode', async () => {
    await cli('space', 'create', 'proj');
    for (let i = 0; i < 12; i++) await cli('note', 'proj', `The car was parked in garage ${i} after the build`);
    const first = JSON.parse((await cli('recall', 'proj', 'garage', '--json')).stdout) as { mode: string };
    assert.equal(first.mode, 'bm25', 'no vector yet: BM25 alone, never a wait');
    const second = await cli('recall', 'proj', 'where', 'is', 'the', 'car', '--json');
    assert.equal((JSON.parse(second.stdout) as { mode: string }).mode, 'hybrid');
    assert.equal(second.stderr, '');
    const info = JSON.parse((await cli('space', 'info', 'proj', '--json')).stdout) as { embeddings?: unknown };
    assert.deepEqual(info.embeddings, { model: 'live-mem/tiny-minilm (local, q8)', state: 'not_loaded' });
  });

  if (requireBrowserOrSkip('the viewer shows the embeddings')) {
    it('the viewer says how a search was ranked and how far the embeddings are', async () => {
      const ui = await startUi(env);
      const browser = await launchBrowser();
      try {
        const page = await browser.newPage();
        const watch = watchPage(page, ui.origin);
        if (ui.secret !== undefined) await page.goto(ui.printed);
        await page.goto(`${ui.origin}/#/space/proj/search/car`);
        const line = page.locator('p.embeddings');
        await line.waitFor();
        assert.equal(await line.innerText(), 'hybrid · embeddings live-mem/tiny-minilm (local, q8): 12 of 12 documents, ready');
        assert.deepEqual(watch.errors, []);
      } finally {
        await browser.close();
        await ui.stop();
      }
    });
  }
});
