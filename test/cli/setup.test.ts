/**
 * setup's pure parts: where each client's files are on each OS, and the new text of a configuration,
 * rules, hooks or settings file computed from the old one (other servers, hooks and keys kept,
 * idempotent, an outdated entry updated, an entry switched between stdio and HTTP); and how its files
 * are written where others may write (no temp name to plant, backups of a token kept private).
 */
import assert from 'node:assert/strict';
import { chmod, lstat, readdir, readFile, rm, stat, symlink, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { describe, it } from 'node:test';
import { configFile, mergeRules, mergeServer, npxEntry, RULES_END, RULES_START, rulesBlock, rulesFile } from '../../src/cli/commands/setup.js';
import type { Place } from '../../src/cli/commands/setup-options.js';
import { httpEntry } from '../../src/cli/commands/setup-remote.js';
import { claudeSettingsFile, HOOK_MATCHER, hookGroup, mergeHook, shellWord } from '../../src/cli/commands/setup-hooks.js';
import { apply, backupStamp, plan } from '../../src/cli/commands/setup-files.js';
import { mergeModel } from '../../src/cli/commands/setup-model.js';
import { isLiveMemError } from '../../src/shared/errors.js';
import { tempDir } from '../helpers/tmp.js';

const ENTRY = { command: '/usr/bin/node', args: ['/opt/live-mem/bin/live-mem.cjs'], env: { LIVE_MEM_AGENT: 'cursor' } };
const linux: Place = { platform: 'linux', home: '/home/ann', env: {}, project: '/src/app' };
const mac: Place = { platform: 'darwin', home: '/Users/ann', env: {}, project: '/src/app' };
const windows: Place = { platform: 'win32', home: 'C:\\Users\\ann', env: { APPDATA: 'C:\\Users\\ann\\AppData\\Roaming' }, project: 'C:\\src\\app' };

describe('setup: configuration files per client and OS', () => {
  it('Claude Desktop and Cline live in the application-data folder of each OS', () => {
    assert.equal(configFile('claude-desktop', 'user', linux), '/home/ann/.config/Claude/claude_desktop_config.json');
    assert.equal(configFile('claude-desktop', 'user', { ...linux, env: { XDG_CONFIG_HOME: '/cfg' } }), '/cfg/Claude/claude_desktop_config.json');
    assert.equal(configFile('claude-desktop', 'user', mac), '/Users/ann/Library/Application Support/Claude/claude_desktop_config.json');
    assert.equal(configFile('claude-desktop', 'user', windows), 'C:\\Users\\ann\\AppData\\Roaming\\Claude\\claude_desktop_config.json');
    const cline = 'Code/User/globalStorage/saoudrizwan.claude-dev/settings/cline_mcp_settings.json';
    assert.equal(configFile('cline', 'user', linux), `/home/ann/.config/${cline}`);
    assert.equal(configFile('cline', 'user', mac), `/Users/ann/Library/Application Support/${cline}`);
    assert.equal(configFile('cline', 'user', windows), `C:\\Users\\ann\\AppData\\Roaming\\${cline.replaceAll('/', '\\')}`);
  });

  it('Claude Code and Cursor: a user file in the home folder, a project file in the project', () => {
    assert.equal(configFile('claude-code', 'user', linux), '/home/ann/.claude.json');
    assert.equal(configFile('claude-code', 'project', linux), '/src/app/.mcp.json');
    assert.equal(configFile('cursor', 'user', windows), 'C:\\Users\\ann\\.cursor\\mcp.json');
    assert.equal(configFile('cursor', 'project', mac), '/src/app/.cursor/mcp.json');
    assert.throws(
      () => configFile('cline', 'project', linux),
      (error) => isLiveMemError(error, 'invalid_input'),
    );
  });

  it('rules files: CLAUDE.md, a Cursor rule that always applies, .clinerules as a file or a folder', () => {
    assert.deepEqual(rulesFile('claude-code', linux), { file: '/src/app/CLAUDE.md', header: '' });
    assert.equal(rulesFile('cursor', linux).file, '/src/app/.cursor/rules/live-mem.mdc');
    assert.match(rulesFile('cursor', linux).header, /^---\n[\s\S]*alwaysApply: true\n---\n/);
    assert.equal(rulesFile('cline', linux).file, '/src/app/.clinerules');
    assert.equal(rulesFile('cline', linux, true).file, '/src/app/.clinerules/live-mem.md');
    assert.throws(
      () => rulesFile('claude-desktop', linux),
      (error) => isLiveMemError(error, 'invalid_input'),
    );
  });
});

describe('setup --npx: only a version the registry holds, pinned', () => {
  it('a published version: npx of that very version', () => {
    assert.deepEqual(npxEntry('0.3.1', '0.3.1'), { command: 'npx', args: ['-y', 'live-mem@0.3.1'] });
  });

  it('an unpublished one: refused, saying why and what to do instead', () => {
    for (const published of [undefined, '0.3.0']) {
      assert.throws(
        () => npxEntry('0.3.1', published),
        (error) =>
          isLiveMemError(error, 'invalid_input') &&
          /^--npx: live-mem 0\.3\.1 is not on the npm registry/.test(error.message) &&
          error.message.includes(published ? '(0.3.0 is)' : 'registry, so') &&
          /leave out --npx, and the entry launches this installation/.test(error.message),
        String(published),
      );
    }
  });
});

describe('setup: merging the server entry', () => {
  it('a new file holds only the entry', () => {
    const text = mergeServer(undefined, 'live-mem', ENTRY, 'f.json');
    assert.deepEqual(JSON.parse(text ?? ''), { mcpServers: { 'live-mem': ENTRY } });
    assert.deepEqual(JSON.parse(mergeServer('  \n', 'live-mem', ENTRY, 'f.json') ?? ''), { mcpServers: { 'live-mem': ENTRY } });
  });

  it("keeps the user's other servers and other keys, and changes nothing the second time", () => {
    const old = JSON.stringify({ theme: 'dark', mcpServers: { github: { command: 'gh-mcp', args: [] } }, projects: { '/a': { x: 1 } } });
    const text = mergeServer(old, 'live-mem', ENTRY, 'f.json');
    const merged = JSON.parse(text ?? '');
    assert.deepEqual(merged, { theme: 'dark', mcpServers: { github: { command: 'gh-mcp', args: [] }, 'live-mem': ENTRY }, projects: { '/a': { x: 1 } } });
    assert.equal(mergeServer(text, 'live-mem', ENTRY, 'f.json'), undefined);
    // The same content written another way is already set up too.
    assert.equal(mergeServer(JSON.stringify(merged), 'live-mem', ENTRY, 'f.json'), undefined);
  });

  it("updates an outdated entry: new command and env, the user's extra keys and variables kept, another transport's keys dropped", () => {
    const old = JSON.stringify({
      mcpServers: {
        'live-mem': {
          type: 'http',
          url: 'http://x/mcp',
          command: 'npx',
          args: ['-y', 'live-mem'],
          env: { LIVE_MEM_AGENT: 'old', LIVE_MEM_TOOLS: 'agent' },
          autoApprove: ['live_note'],
        },
      },
    });
    const merged = JSON.parse(mergeServer(old, 'live-mem', ENTRY, 'f.json') ?? '');
    assert.deepEqual(merged.mcpServers['live-mem'], {
      command: ENTRY.command,
      args: ENTRY.args,
      env: { LIVE_MEM_AGENT: 'cursor', LIVE_MEM_TOOLS: 'agent' },
      autoApprove: ['live_note'],
    });
  });

  it('refuses a file that is not JSON, not an object, or whose mcpServers is not an object', () => {
    for (const old of ['{ "mcpServers": ', '[1, 2]', '{"mcpServers": []}']) {
      assert.throws(
        () => mergeServer(old, 'live-mem', ENTRY, '/x/config.json'),
        (error) => isLiveMemError(error, 'invalid_input') && /\/x\/config\.json.*nothing was written/.test(error.message),
        old,
      );
    }
  });
});

describe('setup: the rules block', () => {
  const block = rulesBlock('Use the memory.');

  it('is the workflow between the markers', () => {
    assert.equal(block, `${RULES_START}\n## Shared memory (live-mem)\n\nUse the memory.\n${RULES_END}\n`);
  });

  it("is appended after the user's text once, replaced rather than duplicated, and left alone when current", () => {
    const first = mergeRules('# My project\nBe kind.', block, '', 'CLAUDE.md') ?? '';
    assert.equal(first, `# My project\nBe kind.\n\n${block}`);
    assert.equal(mergeRules(first, block, '', 'CLAUDE.md'), undefined);
    const edited = `${first}\nMore of mine.\n`;
    const replaced = mergeRules(edited, rulesBlock('Use it better.'), '', 'CLAUDE.md') ?? '';
    assert.equal(replaced.split(RULES_START).length, 2, 'one block');
    assert.match(replaced, /^# My project\nBe kind\.\n\n<!-- live-mem:start -->\n[\s\S]*Use it better\.\n<!-- live-mem:end -->\n\nMore of mine\.\n$/);
  });

  it('a new file starts with its header; a block without its end marker is refused', () => {
    assert.equal(mergeRules(undefined, block, '---\nx: 1\n---\n\n', 'r.mdc'), `---\nx: 1\n---\n\n${block}`);
    assert.throws(
      () => mergeRules(`a\n${RULES_START}\nhalf`, block, '', 'CLAUDE.md'),
      (error) => isLiveMemError(error, 'invalid_input'),
    );
  });
});

describe('setup: HTTP entries in each client form, and switching transports', () => {
  const URL_ = 'https://memory.example.com/mcp';

  it("writes each client's own form, the token itself or a reference the client expands", () => {
    const token = { value: 'lm_abc' };
    assert.deepEqual(httpEntry('claude-code', URL_, token), { type: 'http', url: URL_, headers: { Authorization: 'Bearer lm_abc' } });
    assert.deepEqual(httpEntry('cline', URL_, token), { type: 'streamableHttp', url: URL_, headers: { Authorization: 'Bearer lm_abc' } });
    assert.deepEqual(httpEntry('cursor', URL_, token), { url: URL_, headers: { Authorization: 'Bearer lm_abc' } });
    assert.equal(httpEntry('claude-code', URL_, { variable: 'LM_TOKEN' }).headers.Authorization, `Bearer \${LM_TOKEN}`);
    assert.equal(httpEntry('cursor', URL_, { variable: 'LM_TOKEN' }).headers.Authorization, `Bearer \${env:LM_TOKEN}`);
    assert.throws(
      () => httpEntry('cline', URL_, { variable: 'LM_TOKEN' }),
      (error) => isLiveMemError(error, 'invalid_input') && /cline does not expand variables.*--token-file/.test(error.message),
    );
  });

  it("stdio → HTTP drops command, args and env, keeps the user's keys and headers; HTTP → stdio drops url, type and headers", () => {
    const old = JSON.stringify({ mcpServers: { 'live-mem': { ...ENTRY, env: { ...ENTRY.env, MINE: '1' }, autoApprove: ['live_note'], disabled: false } } });
    const http = httpEntry('cline', URL_, { value: 'lm_abc' });
    const remote = JSON.parse(mergeServer(old, 'live-mem', http, 'f.json') ?? '').mcpServers['live-mem'];
    assert.deepEqual(remote, { type: 'streamableHttp', url: URL_, headers: { Authorization: 'Bearer lm_abc' }, autoApprove: ['live_note'], disabled: false });

    const withHeader = JSON.stringify({ mcpServers: { 'live-mem': { ...remote, headers: { ...remote.headers, 'X-Team': 'red' } } } });
    const rotated = JSON.parse(mergeServer(withHeader, 'live-mem', httpEntry('cline', URL_, { value: 'lm_new' }), 'f.json') ?? '').mcpServers['live-mem'];
    assert.deepEqual(rotated.headers, { Authorization: 'Bearer lm_new', 'X-Team': 'red' }, 'the Authorization header replaced, the user header kept');
    assert.equal(
      mergeServer(JSON.stringify({ mcpServers: { 'live-mem': rotated } }), 'live-mem', httpEntry('cline', URL_, { value: 'lm_new' }), 'f.json'),
      undefined,
    );

    const local = JSON.parse(mergeServer(withHeader, 'live-mem', ENTRY, 'f.json') ?? '').mcpServers['live-mem'];
    assert.deepEqual(local, { ...ENTRY, autoApprove: ['live_note'], disabled: false });
    // Cursor's form names no type: a Claude Code-style `type` left from before is dropped, not kept to mislead it.
    const typed = JSON.stringify({ mcpServers: { 'live-mem': { type: 'sse', url: 'http://old/sse' } } });
    assert.deepEqual(JSON.parse(mergeServer(typed, 'live-mem', httpEntry('cursor', URL_, { value: 't' }), 'f.json') ?? '').mcpServers['live-mem'], {
      url: URL_,
      headers: { Authorization: 'Bearer t' },
    });
  });
});

describe('setup: the SessionStart hook in Claude Code settings', () => {
  const ours = hookGroup('/usr/bin/node /opt/live-mem/bin/live-mem.cjs context . --hook');

  it('lives in ~/.claude/settings.json, or .claude/settings.json in the project', () => {
    assert.equal(claudeSettingsFile('user', linux), '/home/ann/.claude/settings.json');
    assert.equal(claudeSettingsFile('project', linux), '/src/app/.claude/settings.json');
    assert.equal(claudeSettingsFile('user', windows), 'C:\\Users\\ann\\.claude\\settings.json');
  });

  it("is added after the user's hooks, every other setting kept, and changes nothing the second time", () => {
    const user = { type: 'command', command: 'echo hello' };
    const old = JSON.stringify({
      model: 'opus',
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [user] }], SessionStart: [{ matcher: 'startup', hooks: [user] }] },
    });
    const text = mergeHook(old, ours, 's.json') ?? '';
    assert.deepEqual(JSON.parse(text), {
      model: 'opus',
      hooks: { PreToolUse: [{ matcher: 'Bash', hooks: [user] }], SessionStart: [{ matcher: 'startup', hooks: [user] }, ours] },
    });
    assert.equal(mergeHook(text, ours, 's.json'), undefined);
    assert.deepEqual(JSON.parse(mergeHook(undefined, ours, 's.json') ?? ''), { hooks: { SessionStart: [ours] } });
  });

  it('replaces an older hook of ours (another node, another space), even inside a group of the user, never doubles it', () => {
    const older = { type: 'command', command: "'/home/ann/.nvm/versions/node/v20.1.0/bin/node' /x/live-mem.cjs context web --hook", timeout: 30 };
    const user = { type: 'command', command: 'echo hello' };
    const old = JSON.stringify({
      hooks: {
        SessionStart: [
          { matcher: 'startup', hooks: [user, older] },
          { matcher: HOOK_MATCHER, hooks: [older] },
        ],
      },
    });
    assert.deepEqual(JSON.parse(mergeHook(old, ours, 's.json') ?? '').hooks.SessionStart, [{ matcher: 'startup', hooks: [user] }, ours]);
  });

  it('refuses a file that is not JSON, or hooks not shaped as Claude Code reads them', () => {
    for (const old of ['{ "hooks": ', '[]', '{"hooks": []}', '{"hooks": {"SessionStart": {}}}', '{"hooks": {"SessionStart": [{"hooks": 3}]}}']) {
      assert.throws(
        () => mergeHook(old, ours, '/x/settings.json'),
        (error) => isLiveMemError(error, 'invalid_input') && /\/x\/settings\.json.*nothing was written/.test(error.message),
        old,
      );
    }
  });

  it('quotes a word for the shell only when it must', () => {
    assert.equal(shellWord('/usr/bin/node'), '/usr/bin/node');
    assert.equal(shellWord('/Users/ann/Library/Application Support/x'), "'/Users/ann/Library/Application Support/x'");
    assert.equal(shellWord("it's"), `'it'\\''s'`);
  });
});

describe('setup model: the llm settings in live-mem.yaml', () => {
  const values = { base_url: 'http://127.0.0.1:11434/v1', model: 'qwen2.5:14b', api_key: `\${OLLAMA_KEY}` };

  it("keeps the file's comments and other keys, and changes nothing the second time", () => {
    const old = '# shared by every client\nagent: ann # who I am\nllm:\n  temperature: 0.2\n';
    const text = mergeModel(old, values, 'live-mem.yaml') ?? '';
    assert.equal(
      text,
      `# shared by every client\nagent: ann # who I am\nllm:\n  temperature: 0.2\n  base_url: http://127.0.0.1:11434/v1\n  model: qwen2.5:14b\n  api_key: \${OLLAMA_KEY}\n`,
    );
    assert.equal(mergeModel(text, values, 'live-mem.yaml'), undefined);
    assert.equal(
      mergeModel(undefined, values, 'live-mem.yaml'),
      `llm:\n  base_url: http://127.0.0.1:11434/v1\n  model: qwen2.5:14b\n  api_key: \${OLLAMA_KEY}\n`,
    );
    assert.equal(mergeModel('llm:\n', { model: 'm' }, 'live-mem.yaml'), 'llm:\n  model: m\n');
  });

  it('refuses a file that is not YAML, not a mapping, or whose llm is not a mapping', () => {
    for (const old of ['a: [\n', '- a\n', 'llm: 3\n']) {
      assert.throws(
        () => mergeModel(old, values, '/x/live-mem.yaml'),
        (error) => isLiveMemError(error, 'invalid_input') && /\/x\/live-mem\.yaml.*nothing was written/.test(error.message),
        old,
      );
    }
  });
});

describe('setup: writing files in a folder others can write', () => {
  const TOKEN = 'lm_s3cr3t-token-value';
  const entry = (token: string) => `{"mcpServers": {"live-mem": {"headers": {"Authorization": "Bearer ${token}"}}}}\n`;

  it('never writes the token through a file or a link planted at the temp names an earlier version used', async () => {
    const root = await tempDir('live-mem-setup-planted');
    try {
      const target = path.join(root.dir, 'mcp.json');
      const outside = path.join(root.dir, 'theirs.txt');
      await writeFile(outside, 'theirs\n', { mode: 0o644 });
      // Another user's traps, at the names `setup` used to write through (<target>.live-mem-setup-<pid>).
      const planted = `${target}.live-mem-setup-${process.pid}`;
      for (const trap of ['file', 'link'] as const) {
        await rm(planted, { force: true });
        await rm(target, { force: true });
        if (trap === 'file') {
          await writeFile(planted, '', { mode: 0o666 });
          await chmod(planted, 0o666);
        } else await symlink(outside, planted);
        const change = await apply(await plan('config', target, () => entry(TOKEN), true), backupStamp(new Date()));
        assert.equal(change.action, 'created');
        assert.equal(await readFile(target, 'utf8'), entry(TOKEN));
        assert.equal((await lstat(target)).mode & 0o777, 0o600, `${trap}: the token's file is readable by its owner only`);
        assert.equal(await readFile(outside, 'utf8'), 'theirs\n', `${trap}: nothing written where the link points`);
        if (trap === 'file') {
          assert.equal(await readFile(planted, 'utf8'), '', 'the planted file holds nothing');
          assert.notEqual((await lstat(planted)).ino, (await lstat(target)).ino, 'the planted file did not become the configuration');
        } else assert.ok((await lstat(planted)).isSymbolicLink());
      }
      assert.deepEqual(
        (await readdir(root.dir)).filter((name) => name.includes('tmp')),
        [],
        'no temporary file left',
      );
    } finally {
      await root.remove();
    }
  });

  it('keeps the backup of a file that held a token readable by its owner only, whatever its mode was', async () => {
    const root = await tempDir('live-mem-setup-backup');
    try {
      const target = path.join(root.dir, 'mcp.json');
      await writeFile(target, entry('lm_older-token'), { mode: 0o644 });
      await chmod(target, 0o644);
      const change = await apply(await plan('config', target, () => entry(TOKEN), true), backupStamp(new Date()));
      assert.ok(change.backup);
      assert.equal(await readFile(change.backup, 'utf8'), entry('lm_older-token'));
      assert.equal((await stat(change.backup)).mode & 0o777, 0o600);
      assert.equal((await stat(target)).mode & 0o777, 0o600);
    } finally {
      await root.remove();
    }
  });

  it('refuses a backup name someone made first (a link): nothing written', async () => {
    const root = await tempDir('live-mem-setup-backup-link');
    try {
      const target = path.join(root.dir, 'mcp.json');
      const outside = path.join(root.dir, 'theirs.txt');
      await writeFile(target, entry('lm_older-token'), { mode: 0o600 });
      await writeFile(outside, 'theirs\n');
      const stamp = backupStamp(new Date());
      await symlink(outside, `${target}.bak-${stamp}`);
      await assert.rejects(apply(await plan('config', target, () => entry(TOKEN), true), stamp), /EEXIST/);
      assert.equal(await readFile(target, 'utf8'), entry('lm_older-token'));
      assert.equal(await readFile(outside, 'utf8'), 'theirs\n');
    } finally {
      await root.remove();
    }
  });
});
