/**
 * setup's pure parts: where each client's files are on each OS, and the new text of a configuration
 * or rules file computed from the old one (other servers kept, idempotent, an outdated entry updated).
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { configFile, mergeRules, mergeServer, type Place, RULES_END, RULES_START, rulesBlock, rulesFile } from '../../src/cli/commands/setup.js';
import { isLiveMemError } from '../../src/shared/errors.js';

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
