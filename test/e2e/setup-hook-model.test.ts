/**
 * `setup claude-code --hooks` and `setup model` as processes on a fake home. The hook is merged into
 * Claude Code's settings beside the user's, once; its command, run by a shell in the project as
 * Claude Code runs it, prints the project's memory, and prints nothing (exit 0) when there is none
 * yet or the store cannot be reached. The model settings land in live-mem.yaml, comments kept, and
 * `doctor` and `health` read them back: the endpoint receives the key the file names.
 */
import assert from 'node:assert/strict';
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { mkdir, readdir, readFile, stat, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { BIN } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

describe('live-mem setup: the session hook and the model settings', () => {
  let root: Awaited<ReturnType<typeof tempDir>>;
  before(async () => {
    root = await tempDir('live-mem-setup-hook');
  });
  after(async () => root?.remove());

  async function fresh(label: string) {
    const home = path.join(root.dir, label, 'home');
    const project = path.join(root.dir, label, 'webapp');
    await mkdir(home, { recursive: true });
    await mkdir(project, { recursive: true });
    const env = (extra: Record<string, string> = {}) => ({ PATH: process.env.PATH ?? '', HOME: home, ...extra });
    const run = (args: string[], extra: Record<string, string> = {}) =>
      execa(process.execPath, [BIN, ...args], { cwd: project, env: env(extra), extendEnv: false, reject: false });
    return { home, project, env, run };
  }

  it("claude-code --hooks: merged beside the user's hooks once; the hook prints the project's memory, or nothing and exit 0", async () => {
    const { home, project, env, run } = await fresh('hook');
    const store = path.join(home, 'store');
    const settings = path.join(home, '.claude', 'settings.json');
    await mkdir(path.dirname(settings), { recursive: true });
    const mine = { type: 'command', command: 'echo mine' };
    const old = { model: 'opus', hooks: { SessionStart: [{ matcher: 'resume', hooks: [mine] }], Stop: [{ hooks: [mine] }] } };
    await writeFile(settings, JSON.stringify(old));

    const printed = await run(['--home', store, 'setup', 'claude-code', '--hooks', '--print']);
    assert.equal(printed.exitCode, 0, printed.stderr);
    assert.equal(await readFile(settings, 'utf8'), JSON.stringify(old), '--print writes nothing');
    const shownHook = JSON.parse(printed.stdout.slice(printed.stdout.indexOf('{\n  "hooks"'), printed.stdout.lastIndexOf('}') + 1));

    const first = await run(['--home', store, 'setup', 'claude-code', '--hooks']);
    assert.equal(first.exitCode, 0, first.stderr);
    assert.match(first.stdout, /hooks .*settings\.json: updated \(backup: /);
    const merged = JSON.parse(await readFile(settings, 'utf8'));
    assert.deepEqual(merged.model, 'opus');
    assert.deepEqual(merged.hooks.Stop, old.hooks.Stop);
    assert.equal(merged.hooks.SessionStart.length, 2);
    assert.deepEqual(merged.hooks.SessionStart[0], old.hooks.SessionStart[0], "the user's hook first, as it was");
    const ours = merged.hooks.SessionStart[1];
    assert.deepEqual(shownHook.hooks.SessionStart, [ours], 'what --print showed is what was written');
    assert.equal(ours.matcher, 'startup|clear|compact');
    assert.equal(ours.hooks[0].type, 'command');
    assert.ok(ours.hooks[0].timeout <= 10, 'a short timeout');
    const again = await run(['--home', store, 'setup', 'claude-code', '--hooks']);
    assert.match(again.stdout, /already set up: nothing changed$/);
    assert.equal((await readdir(path.dirname(settings))).filter((name) => name.startsWith('settings.json.bak-')).length, 1, 'one backup');

    // The hook as Claude Code runs it: its command line through a shell, in the project.
    const hook = (extra: Record<string, string> = {}, cwd = project) =>
      execa('sh', ['-c', ours.hooks[0].command], { cwd, env: env(extra), extendEnv: false, reject: false });
    const before = await hook();
    assert.deepEqual([before.exitCode, before.stdout], [0, ''], 'a project with no note yet: nothing, exit 0');

    assert.equal((await run(['--home', store, 'note', 'webapp', 'the build needs node 20', '-c', 'decision'])).exitCode, 0);
    const loaded = await hook();
    assert.equal(loaded.exitCode, 0, loaded.stderr);
    assert.match(loaded.stdout, /^# Memory context of space 'webapp'\n/);
    assert.match(loaded.stdout, /decision\] the build needs node 20/);

    // The store unreachable (an S3 endpoint nobody listens on): nothing in the session, exit 0.
    const s3 = {
      LIVE_MEM_STORAGE: 's3',
      LIVE_MEM_S3_BUCKET: 'b',
      LIVE_MEM_S3_ENDPOINT: 'http://127.0.0.1:9',
      LIVE_MEM_S3_ACCESS_KEY_ID: 'a',
      LIVE_MEM_S3_SECRET_ACCESS_KEY: 'b',
    };
    const unreachable = await hook(s3);
    assert.deepEqual([unreachable.exitCode, unreachable.stdout], [0, '']);
    // A session started where there is no project (the file system's root): no space to name, nothing printed.
    const nowhere = await hook({}, '/');
    assert.deepEqual([nowhere.exitCode, nowhere.stdout], [0, '']);
    const plainNowhere = await execa('sh', ['-c', ours.hooks[0].command.replace(/ --hook$/, '')], { cwd: '/', env: env(), extendEnv: false, reject: false });
    assert.equal(plainNowhere.exitCode, 2);
    assert.match(plainNowhere.stderr, /'\.' is the project of the working folder, and there is none .*name the space, or set LIVE_MEM_SPACE/);
    // The same command without --hook says what failed: the flag is what keeps the session clear.
    const plain = await execa('sh', ['-c', ours.hooks[0].command.replace(/ --hook$/, '')], { cwd: project, env: env(s3), extendEnv: false, reject: false });
    assert.equal(plain.exitCode, 1);
    assert.match(plain.stderr, /cannot reach S3 endpoint/);
  });

  it('claude-code --hooks --space: the hook names the pinned space, wherever the session starts; --scope project writes .claude/settings.json', async () => {
    const { home, project, env, run } = await fresh('hook-space');
    const store = path.join(home, 'store');
    assert.equal((await run(['--home', store, 'note', 'team-web', 'pinned memory', '-c', 'insight'])).exitCode, 0);
    const done = await run(['--home', store, 'setup', 'claude-code', '--hooks', '--space', 'team-web', '--scope', 'project']);
    assert.equal(done.exitCode, 0, done.stderr);
    const entry = JSON.parse(await readFile(path.join(project, '.mcp.json'), 'utf8')).mcpServers['live-mem'];
    assert.equal(entry.env.LIVE_MEM_SPACE, 'team-web');
    const command = JSON.parse(await readFile(path.join(project, '.claude', 'settings.json'), 'utf8')).hooks.SessionStart[0].hooks[0].command as string;
    assert.match(command, / context team-web --hook$/);
    const elsewhere = await execa('sh', ['-c', command], { cwd: root.dir, env: env(), extendEnv: false, reject: false });
    assert.equal(elsewhere.exitCode, 0, elsewhere.stderr);
    assert.match(elsewhere.stdout, /space 'team-web'[\s\S]*pinned memory/);
  });

  describe('setup model', () => {
    let endpoint: Server;
    let url: string;
    const seen: string[] = [];
    before(async () => {
      // An OpenAI-compatible endpoint as far as a health check goes: it lists its models, and says who asked.
      endpoint = createServer((req, res) => {
        seen.push(String(req.headers.authorization));
        if (req.url?.endsWith('/models')) res.writeHead(200, { 'content-type': 'application/json' }).end('{"object":"list","data":[]}');
        else res.writeHead(404).end();
      });
      await new Promise<void>((resolve) => endpoint.listen(0, '127.0.0.1', resolve));
      url = `http://127.0.0.1:${(endpoint.address() as AddressInfo).port}/v1`;
    });
    after(() => new Promise<void>((resolve) => endpoint.close(() => resolve())));

    it('writes llm.* into live-mem.yaml once, comments kept; doctor and health read it back, the key from the variable it names', async () => {
      const { home, run } = await fresh('model-env');
      const file = path.join(home, '.live-mem', 'live-mem.yaml');
      await mkdir(path.dirname(file), { recursive: true });
      const old = '# the settings of every client\nagent: ann # me\n';
      await writeFile(file, old);
      const args = ['setup', 'model', '--base-url', url, '--model', 'tiny-model', '--api-key-env', 'LM_TEST_KEY'];

      const printed = await run([...args, '--print']);
      assert.equal(printed.exitCode, 0, printed.stderr);
      assert.equal(await readFile(file, 'utf8'), old, '--print writes nothing');
      const expected = `${old}llm:\n  base_url: ${url}\n  model: tiny-model\n  api_key: \${LM_TEST_KEY}\n`;
      assert.ok(printed.stdout.includes(expected), printed.stdout);

      const done = await run(args);
      assert.equal(done.exitCode, 0, done.stderr);
      assert.equal(await readFile(file, 'utf8'), expected);
      assert.match(done.stdout, /read from \$LM_TEST_KEY/);
      assert.match((await run(args)).stdout, /already set up: nothing changed$/);

      seen.length = 0;
      const doctor = await run(['doctor', '--json'], { LM_TEST_KEY: 'sk-from-env' });
      const llm = (JSON.parse(doctor.stdout).findings as Array<{ check: string; status: string; message: string }>).find((finding) => finding.check === 'llm');
      assert.equal(llm?.status, 'ok', doctor.stdout);
      assert.match(llm?.message ?? '', new RegExp(`tiny-model @ ${url.replaceAll('.', '\\.')} answers`));
      assert.deepEqual(seen, ['Bearer sk-from-env'], 'the endpoint got the key of the variable the file names');
    });

    it('--api-key-file writes the key itself, readable by its owner only; health reads it back; --print never shows it', async () => {
      const { home, run } = await fresh('model-file');
      const keyFile = path.join(home, 'openai.key');
      await writeFile(keyFile, 'sk-in-file\n', { mode: 0o600 });
      const args = ['setup', 'model', '--base-url', url, '--model', 'tiny-model', '--api-key-file', keyFile, '--context-window', '128000'];
      const printed = await run([...args, '--print']);
      assert.equal(printed.exitCode, 0, printed.stderr);
      assert.ok(!printed.stdout.includes('sk-in-file'), printed.stdout);
      assert.match(printed.stdout, new RegExp(`api_key: <the key in ${keyFile.replaceAll('.', '\\.')}>`));

      assert.equal((await run(args)).exitCode, 0);
      const file = path.join(home, '.live-mem', 'live-mem.yaml');
      assert.equal((await stat(file)).mode & 0o777, 0o600);
      assert.match(await readFile(file, 'utf8'), /api_key: sk-in-file\n {2}context_window: 128000\n/);
      seen.length = 0;
      const health = JSON.parse((await run(['health', '--json'])).stdout);
      assert.deepEqual([health.services.llm.status, health.services.llm.model], ['ok', `tiny-model @ ${url}`]);
      assert.deepEqual(seen, ['Bearer sk-in-file']);
    });

    it('refuses a settings file that is not YAML, a bad URL, two keys: nothing written', async () => {
      const { home, run } = await fresh('model-bad');
      const file = path.join(home, '.live-mem', 'live-mem.yaml');
      await mkdir(path.dirname(file), { recursive: true });
      await writeFile(file, 'agent: [\n');
      const cases: Array<[string[], RegExp]> = [
        [['setup', 'model', '--base-url', url, '--model', 'm'], /is not valid YAML.*nothing was written/],
        [['setup', 'model', '--base-url', 'localhost:11434', '--model', 'm'], /--base-url must be an http\(s\) URL/],
        [['setup', 'model', '--base-url', url, '--model', 'm', '--api-key-env', 'A', '--api-key-file', file], /not both/],
      ];
      for (const [args, message] of cases) {
        const result = await run(args);
        assert.equal(result.exitCode, 2, result.stderr);
        assert.match(result.stderr, message);
      }
      assert.equal(await readFile(file, 'utf8'), 'agent: [\n');
      assert.deepEqual(await readdir(path.dirname(file)), ['live-mem.yaml']);
    });
  });
});
