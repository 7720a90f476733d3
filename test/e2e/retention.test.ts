/**
 * The retention check through the built binary (the MCP server it serves, in this process): a scripted
 * model that folds four notes into the bank but drops a number, a date, a name and a path, one from each.
 * The CLI's result and `history show`, MCP's history_read, bank_explain and memory_search, the record on
 * disk and the viewer's history page (chromium) all say per note what was kept and what was not; a process
 * killed (SIGKILL) at each point of the commit leaves the record, retention included, for the next run; a
 * record written before the check (no `retention`) still reads.
 */
import assert from 'node:assert/strict';
import { readdir, readFile, writeFile } from 'node:fs/promises';
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
import { rerunPastLease } from '../helpers/stores.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('tester');
const DROPPED = [
  { note: 'The API listens on port 8443 behind nginx.', kind: 'number', item: '8443' },
  { note: 'The release freeze starts on 2026-03-14 for the mobile team.', kind: 'date', item: '2026-03-14' },
  { note: 'Invoices above the threshold are approved by Kowalski.', kind: 'name', item: 'Kowalski' },
  { note: 'Nightly exports are written to /var/log/livemem/export.log by the scheduler.', kind: 'path', item: '/var/log/livemem/export.log' },
];
const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

/** techContext.md, a section per note citing it, each without the item DROPPED names for it. */
const lossy: Step = {
  dynamic: (messages) => {
    const user = messages.find((m) => m.role === 'user')?.content ?? '';
    const notes = readFences(user, 'note').map(({ text }) => text.slice(text.indexOf('\n\n') + 2));
    const sections = notes.map((note, i) => {
      const drop = DROPPED.find((d) => d.note === note)?.item ?? '';
      return { op: 'add', section: 'Tech Context', title: `Note ${i + 1}`, content: `- ${note.replace(drop, '').replace(/\s+/g, ' ')}`, sources: [i + 1] };
    });
    const create = /<<<file techContext\.md /.test(user) ? [] : [{ filename: 'techContext.md', action: 'create', content: '# Tech Context\n\nThe setup.\n' }];
    return JSON.stringify({ files: [...create, { filename: 'techContext.md', action: 'edit', edits: sections }], synthesis: 'The team recorded its setup.' });
  },
};

async function seeded() {
  const home = await tempDir();
  const core = createCore({ storage: createFsDriver(home.dir) });
  await core.spaces.create(owner, { space_id: 'proj' });
  const names: string[] = [];
  for (const { note } of DROPPED) names.push((await core.notes.write(owner, { space_id: 'proj', category: 'observation', content: note })).filename as string);
  const llm = await startScriptedLlm([lossy]);
  servers.push(llm);
  const env = {
    LIVE_MEM_HOME: home.dir,
    LIVE_MEM_LLM_BASE_URL: llm.url,
    LIVE_MEM_LLM_MODEL: 'scripted-model',
    LIVE_MEM_LLM_API_KEY: 'k',
    LIVE_MEM_LOG_LEVEL: 'warn',
    LIVE_MEM_SUMMARIES: 'off',
    LIVE_MEM_COMPACTION: 'off',
  };
  return { home, env, names, llm };
}

const cli = (env: Record<string, string>, args: string[]) =>
  execa(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env }, extendEnv: false, reject: false });

interface Entry {
  note: string;
  status: string;
  items: number;
  missing?: Array<{ kind: string; text: string }>;
}

async function historyRecords(home: string): Promise<Array<{ id: string; retention?: Entry[] }>> {
  const dir = path.join(home, 'proj', 'history');
  return Promise.all((await readdir(dir)).sort().map(async (id) => JSON.parse(await readFile(path.join(dir, id, 'record.json'), 'utf8'))));
}

function assertDropsNamed(entries: readonly Entry[] | undefined, names: readonly string[]): void {
  for (const [i, { kind, item }] of DROPPED.entries()) {
    const entry = entries?.find((e) => e.note === names[i]);
    assert.equal(entry?.status, 'partly_retained', JSON.stringify(entry));
    assert.deepEqual(entry?.missing, [{ kind, text: item }]);
  }
}

describe('retention through the binary', () => {
  it('CLI: the result says which notes lost which facts (report); history show names them beside each note', async () => {
    const { home, env, names } = await seeded();
    try {
      const run = await cli({ ...env, LIVE_MEM_RETENTION: 'report' }, ['consolidate', 'proj']);
      assert.equal(run.exitCode, 0, run.stderr);
      assert.match(run.stdout, /retention \(report\): 4 note\(s\) checked: 0 retained, 4 partly retained, 0 not retained, 0 let go/);
      for (const [i, { kind, item }] of DROPPED.entries())
        assert.ok(run.stdout.includes(`${names[i]}: partly retained, missing the ${kind} "${item}"`), run.stdout);
      const [record] = await historyRecords(home.dir);
      assertDropsNamed(record?.retention, names);
      const shown = await cli(env, ['history', 'show', 'proj', record?.id as string]);
      assert.equal(shown.exitCode, 0, shown.stderr);
      assert.match(
        shown.stdout,
        /→ integrated: techContext\.md#Tech Context > Note 1 · partly retained, missing the number "8443"\nThe API listens on port 8443/,
      );
    } finally {
      await home.remove();
    }
  });

  it('MCP (retry, the default): asked once more, then history_read, bank_explain and memory_search say what each note lost', async () => {
    const { home, env, names, llm } = await seeded();
    try {
      const server = await inProcessServer({ ...env, LIVE_MEM_TOOLS: 'all,bank_explain' });
      try {
        const result = await server.call('bank_consolidate', { space_id: 'proj' });
        assert.equal(result.status, 'ok', String(result.message));
        assert.equal(llm.requests.length, 2, 'one retry naming the missing facts');
        assert.equal((result.retention as { partly_retained: number }).partly_retained, 4);
        const id = (result.consolidations as string[])[0] as string;

        const read = await server.call('history_read', { space_id: 'proj', consolidation_id: id });
        assertDropsNamed((read.consolidation as { retention: Entry[] }).retention, names);

        const explained = await server.call('bank_explain', { space_id: 'proj', filename: 'techContext.md', section: 'Tech Context > Note 3' });
        const [note] = explained.notes as Array<{ filename: string; retention?: Entry }>;
        assert.equal(note?.filename, names[2]);
        assert.deepEqual(note?.retention, { status: 'partly_retained', items: note?.retention?.items, missing: [{ kind: 'name', text: 'Kowalski' }] });

        const found = await server.call('memory_search', { space_id: 'proj', query: 'Kowalski invoices', sources: ['history'] });
        const hit = (found.results as Array<{ ref: string; retention?: Entry }>).find((r) => r.ref === names[2]);
        assert.deepEqual(hit?.retention?.missing, [{ kind: 'name', text: 'Kowalski' }], 'a hit on the note says the bank lacks its name');
      } finally {
        await server.close();
      }
    } finally {
      await home.remove();
    }
  });

  it('refuse: the window is refused, the notes stay live, the error names the facts', async () => {
    const { home, env } = await seeded();
    try {
      const run = await cli({ ...env, LIVE_MEM_RETENTION: 'refuse' }, ['consolidate', 'proj', '--json']);
      assert.equal(run.exitCode, 1);
      const result = JSON.parse(run.stdout);
      assert.equal(result.status, 'error');
      assert.match(
        result.message,
        /LIVE_MEM_RETENTION=refuse.*the number "8443".*the date "2026-03-14".*the name "Kowalski".*the path "\/var\/log\/livemem\/export\.log"/s,
      );
      assert.equal((await readdir(path.join(home.dir, 'proj', 'live'))).filter((name) => name.endsWith('.md')).length, 4);
    } finally {
      await home.remove();
    }
  });

  for (const point of ['before-commit', 'after-commit', 'after-bank-writes', 'after-meta', 'after-history', 'after-live-delete']) {
    it(`a process killed (SIGKILL) ${point}: the next run commits the record with its retention, once`, async () => {
      const { home, env, names, llm } = await seeded();
      try {
        const settings = { ...env, LIVE_MEM_RETENTION: 'report', LIVE_MEM_CONSOLIDATION_LEASE_S: '2' };
        const killed = await cli({ ...settings, LIVE_MEM_TEST_KILL_AT: point }, ['consolidate', 'proj', '-q']);
        assert.equal(killed.signal, 'SIGKILL', killed.stdout + killed.stderr);
        const storage = createFsDriver(home.dir);
        const rerun = await rerunPastLease(storage, 'proj', () => cli(settings, ['consolidate', 'proj', '-q', '--json']));
        assert.equal(rerun.exitCode, 0, rerun.stdout + rerun.stderr);
        assert.equal(llm.requests.length, point === 'before-commit' ? 2 : 1, 'a committed plan is never asked for again');
        const records = await historyRecords(home.dir);
        assert.equal(records.length, 1);
        assertDropsNamed(records[0]?.retention, names);
      } finally {
        await home.remove();
      }
    });
  }

  it('a record written before the check (no retention) still reads: history show, history_read', async () => {
    const { home, env } = await seeded();
    try {
      assert.equal((await cli({ ...env, LIVE_MEM_RETENTION: 'report' }, ['consolidate', 'proj', '-q'])).exitCode, 0);
      const [record] = await historyRecords(home.dir);
      const file = path.join(home.dir, 'proj', 'history', record?.id as string, 'record.json');
      const { retention: _dropped, ...older } = JSON.parse(await readFile(file, 'utf8'));
      await writeFile(file, `${JSON.stringify(older, null, 2)}\n`);
      const shown = await cli(env, ['history', 'show', 'proj', record?.id as string]);
      assert.equal(shown.exitCode, 0, shown.stderr);
      assert.match(shown.stdout, /→ integrated: techContext\.md#Tech Context > Note 1\nThe API listens/);
      const json = JSON.parse((await cli(env, ['history', 'show', 'proj', record?.id as string, '--json'])).stdout);
      assert.deepEqual(json.consolidation.retention, []);
      assert.equal(json.notes.length, 4);
    } finally {
      await home.remove();
    }
  });
});

if (requireBrowserOrSkip('retention in the viewer')) {
  describe('the viewer shows what each note kept', () => {
    it("a consolidation's page: beside each note's fate, retained or which facts the bank lacks", async () => {
      const { home, env, names } = await seeded();
      const ui = await startUi(env);
      const browser = await launchBrowser();
      try {
        assert.equal((await cli({ ...env, LIVE_MEM_RETENTION: 'report' }, ['consolidate', 'proj', '-q'])).exitCode, 0);
        const [record] = await historyRecords(home.dir);
        const page = await browser.newPage({ viewport: { width: 1280, height: 860 } });
        const watch = watchPage(page, ui.origin);
        if (ui.secret !== undefined) await page.goto(ui.printed);
        await page.goto(`${ui.origin}/#/space/proj/history/${record?.id}`);
        for (const [i, { kind, item }] of DROPPED.entries()) {
          const badge = page.locator(`article.note[data-filename="${names[i]}"] .retention`);
          await badge.waitFor();
          assert.equal(await badge.innerText(), `partly retained: missing the ${kind} ${item}`);
          assert.equal(await badge.getAttribute('class'), 'retention retention-partly_retained');
          assert.equal(await badge.locator('code').innerText(), item);
        }
        await screenshot(page, 'history-retention');
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
