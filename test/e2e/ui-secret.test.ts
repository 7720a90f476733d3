/**
 * `live-mem ui` on loopback: loopback is no user boundary, the secret of the printed URL is. The
 * real process serves a 0700 store; a client run as another Unix user (`nobody`: CI runs as root,
 * which may spawn as any uid) reaches 127.0.0.1 but, without the secret, reads nothing and starts
 * nothing. `--open` hands the browser a redirect page only the owner can read, never the secret.
 */
import assert from 'node:assert/strict';
import { chmod, mkdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { execa } from 'execa';
import { FIRST_PLAN } from '../../fixtures/llm/scenarios.js';
import { startUi, type UiProcess } from '../helpers/browser.js';
import { BIN } from '../helpers/mcp-client.js';
import { type ScriptedLlm, startScriptedLlm } from '../helpers/scripted-llm.js';
import { tempDir } from '../helpers/tmp.js';

/** Another Unix user when the tests can switch to one (root, as in CI); else this user, for whom the secret matters all the same. */
const OTHER_USER = process.getuid?.() === 0 ? { uid: 65534, gid: 65534 } : {};

/** The viewer's API called by a small node client run as OTHER_USER: the HTTP status and body. */
async function asOtherUser(url: string, tool: string, args: Record<string, unknown>, bearer?: string) {
  const client = `
    const [url, tool, args, bearer] = process.argv.slice(1);
    const headers = { 'content-type': 'application/json', ...(bearer ? { authorization: 'Bearer ' + bearer } : {}) };
    const response = await fetch(url + 'api/tools/' + tool, { method: 'POST', headers, body: args });
    console.log(JSON.stringify({ status: response.status, body: await response.json() }));`;
  const run = await execa(process.execPath, ['--input-type=module', '-e', client, url, tool, JSON.stringify(args), bearer ?? ''], {
    ...OTHER_USER,
    cwd: '/',
    env: { PATH: process.env.PATH ?? '', HOME: '/tmp' },
    extendEnv: false,
    reject: false,
  });
  assert.equal(run.exitCode, 0, run.stderr);
  return JSON.parse(run.stdout) as { status: number; body: Record<string, unknown> };
}

describe('live-mem ui: the secret of the printed URL, not loopback, lets a request in', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let llm: ScriptedLlm;
  let ui: UiProcess;
  const cli = (args: string[]) =>
    execa(process.execPath, [BIN, ...args], { env: { PATH: process.env.PATH ?? '', LIVE_MEM_HOME: home.dir }, extendEnv: false, reject: false });

  before(async () => {
    home = await tempDir('live-mem-ui-secret');
    await chmod(home.dir, 0o700);
    assert.equal((await cli(['space', 'create', 'alpha', '-d', 'private'])).exitCode, 0);
    assert.equal((await cli(['note', 'alpha', 'owner-only note', '-c', 'todo'])).exitCode, 0);
    llm = await startScriptedLlm([{ reply: FIRST_PLAN }]);
    ui = await startUi({ LIVE_MEM_HOME: home.dir, LIVE_MEM_LLM_BASE_URL: llm.url, LIVE_MEM_LLM_MODEL: 'scripted-model', LIVE_MEM_LLM_API_KEY: 'k' });
  });
  after(async () => {
    await ui?.stop();
    await llm?.close();
    await home?.remove();
  });

  it('prints its URL with a fresh 256-bit secret in the fragment', () => {
    assert.match(ui.printed, /^http:\/\/127\.0\.0\.1:\d+\/#secret=[\w-]{43}$/);
  });

  it('another user without the secret is refused (401): no space listed, no consolidation started', async () => {
    if (OTHER_USER.uid !== undefined) {
      const direct = await execa('cat', [path.join(home.dir, 'alpha', '_meta.json')], { ...OTHER_USER, reject: false });
      assert.notEqual(direct.exitCode, 0, 'the premise: that user cannot read the store itself');
    }
    const listed = await asOtherUser(ui.url, 'space_list', {});
    assert.equal(listed.status, 401);
    assert.equal(listed.body.spaces, undefined);
    assert.match(String(listed.body.message), /secret/);
    const consolidation = await asOtherUser(ui.url, 'bank_consolidate', { space_id: 'alpha', background: true });
    assert.equal(consolidation.status, 401);
    assert.equal((await asOtherUser(ui.url, 'live_read', { space_id: 'alpha' })).status, 401);
    assert.equal((await asOtherUser(ui.url, 'space_list', {}, 'a-guessed-secret')).status, 403, 'a wrong secret is a refused token');
    assert.equal(llm.requests.length, 0, 'no consolidation ran');
  });

  it('with the secret, the same requests work', async () => {
    const listed = await asOtherUser(ui.url, 'space_list', {}, ui.secret);
    assert.equal(listed.status, 200);
    assert.deepEqual(
      (listed.body.spaces as Array<{ space_id: string }>).map((space) => space.space_id),
      ['alpha'],
    );
    const consolidation = await asOtherUser(ui.url, 'bank_consolidate', { space_id: 'alpha', background: true }, ui.secret);
    assert.equal(consolidation.status, 200, JSON.stringify(consolidation.body));
    assert.equal(typeof consolidation.body.job_id, 'string');
  });

  it('the page itself stays public: it asks for the secret', async () => {
    assert.equal((await fetch(ui.url)).status, 200);
    const session = (await (await fetch(`${ui.url}api/session`)).json()) as { token_required: boolean; local_secret: boolean };
    assert.deepEqual([session.token_required, session.local_secret], [true, true]);
  });
});

describe('live-mem ui --open', () => {
  it('opens a redirect page only the owner can read: the secret is never an argument (ps would show it)', async () => {
    const home = await tempDir('live-mem-ui-open');
    const bin = path.join(home.dir, 'bin');
    const record = path.join(home.dir, 'xdg-open.args');
    await mkdir(bin);
    // A stand-in for xdg-open that records what it was asked to open.
    await writeFile(path.join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${record}'\n`, { mode: 0o755 });
    const ui = await startUi({ LIVE_MEM_HOME: path.join(home.dir, 'store'), PATH: `${bin}:${process.env.PATH ?? ''}` }, ['ui', '--port', '0', '--open']);
    try {
      let opened = '';
      for (let i = 0; i < 100 && opened === ''; i++) {
        opened = await readFile(record, 'utf8').catch(() => '');
        if (opened === '') await new Promise((resolve) => setTimeout(resolve, 50));
      }
      assert.ok(!opened.includes(ui.secret as string), `the secret is not an argument: ${opened}`);
      const page = fileURLToPath(opened.trim());
      assert.equal((await stat(page)).mode & 0o777, 0o600);
      assert.equal((await stat(path.dirname(page))).mode & 0o777, 0o700);
      const html = await readFile(page, 'utf8');
      assert.ok(html.includes(`<meta http-equiv="refresh" content="0;url=${ui.printed}">`), html);
      await ui.stop();
      await assert.rejects(stat(page), 'removed when the server stops');
    } finally {
      await ui.stop();
      await home.remove();
    }
  });

  it('removes the page when the signal comes while the browser is being opened', async () => {
    const home = await tempDir('live-mem-ui-open');
    const bin = path.join(home.dir, 'bin');
    const record = path.join(home.dir, 'xdg-open.args');
    await mkdir(bin);
    // A stand-in for xdg-open that records the page, then stops the server that launched it.
    await writeFile(path.join(bin, 'xdg-open'), `#!/bin/sh\nprintf '%s\\n' "$@" > '${record}'\nkill -TERM $PPID\n`, { mode: 0o755 });
    const ui = await startUi({ LIVE_MEM_HOME: path.join(home.dir, 'store'), PATH: `${bin}:${process.env.PATH ?? ''}` }, ['ui', '--port', '0', '--open']);
    try {
      const result = await ui.process;
      assert.equal(result.signal, undefined, `ended by its own handler, not killed by the signal (${result.signal})`);
      const page = fileURLToPath((await readFile(record, 'utf8')).trim());
      await assert.rejects(stat(page), 'removed when the server stops');
    } finally {
      await ui.stop();
      await home.remove();
    }
  });
});
