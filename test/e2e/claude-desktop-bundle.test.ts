/**
 * The Claude Desktop bundle (`npm run bundle`) as Claude Desktop installs and runs it: packed from the
 * built dist/ by scripts/bundle.mjs with the official mcpb tool, checked by `mcpb validate`, unpacked by
 * `mcpb unpack`, and its declared command launched with the install form's values substituted by the
 * mcpb library's getMcpConfigForManifest (the code Claude Desktop uses to turn a manifest into a server
 * entry), in `/`, with no roots, driven by the MCP SDK's client.
 */
import assert from 'node:assert/strict';
import { createRequire } from 'node:module';
import { readdir, readFile, stat } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { getMcpConfigForManifest, type McpbManifestAny, type McpbUserConfigValues } from '@anthropic-ai/mcpb';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { execa } from 'execa';
import { FIRST_PLAN } from '../../fixtures/llm/scenarios.js';
import { FIELDS } from '../../src/config/fields.js';
import { TOOL_PROFILES } from '../../src/mcp/profiles.js';
import { ROOT } from '../helpers/package.js';
import { startScriptedLlm } from '../helpers/scripted-llm.js';
import { tempDir } from '../helpers/tmp.js';

/** The `mcpb` command of @anthropic-ai/mcpb (its package.json `bin`), run with this node. */
const MCPB = path.join(path.dirname(createRequire(import.meta.url).resolve('@anthropic-ai/mcpb')), 'cli', 'cli.js');
const mcpb = (args: string[]) => execa(process.execPath, [MCPB, ...args], { reject: false });

type Result = Record<string, unknown> & { status: string };
const call = async (client: Client, name: string, args: Record<string, unknown> = {}) =>
  (await client.callTool({ name, arguments: args })).structuredContent as Result;

describe('the Claude Desktop bundle', () => {
  let scratch: Awaited<ReturnType<typeof tempDir>>;
  let bundle: string;
  let unpacked: string;
  let manifest: McpbManifestAny;

  before(async () => {
    scratch = await tempDir('live-mem-mcpb');
    bundle = path.join(scratch.dir, 'live-mem.mcpb');
    const packed = await execa(process.execPath, [path.join(ROOT, 'scripts', 'bundle.mjs'), '--out', bundle], { reject: false });
    assert.equal(packed.exitCode, 0, packed.stderr);
    unpacked = path.join(scratch.dir, 'installed');
    const unpacking = await mcpb(['unpack', bundle, unpacked]);
    assert.equal(unpacking.exitCode, 0, unpacking.stdout + unpacking.stderr);
    manifest = JSON.parse(await readFile(path.join(unpacked, 'manifest.json'), 'utf8'));
  });
  after(() => scratch?.remove());

  /**
   * Starts the bundle's server as Claude Desktop does: the manifest's mcp_config with `${__dirname}`, the
   * user's folders and the form's values substituted, `node` from the PATH, in `/`, a client with no roots.
   */
  async function launch(home: string, userConfig: McpbUserConfigValues) {
    const config = await getMcpConfigForManifest({
      manifest,
      extensionPath: unpacked,
      systemDirs: { HOME: home, DESKTOP: path.join(home, 'Desktop'), DOCUMENTS: path.join(home, 'Documents'), DOWNLOADS: path.join(home, 'Downloads') },
      userConfig,
      pathSeparator: path.sep,
    });
    assert.ok(config, 'a server entry');
    const transport = new StdioClientTransport({
      command: config.command,
      args: config.args ?? [],
      env: { PATH: path.dirname(process.execPath), HOME: home, ...config.env },
      cwd: '/',
      stderr: 'pipe',
    });
    let stderr = '';
    transport.stderr?.on('data', (chunk: Buffer) => {
      stderr += chunk.toString();
    });
    const client = new Client({ name: 'claude-ai', version: '0.14.0' });
    return { client, config, connect: () => client.connect(transport), stderr: () => stderr };
  }

  it('passes `mcpb validate`, in the repository and in the bundle, and says the version package.json says', async () => {
    for (const file of [path.join(ROOT, 'clients', 'claude-desktop', 'manifest.json'), path.join(unpacked, 'manifest.json')]) {
      const validated = await mcpb(['validate', file]);
      assert.equal(validated.exitCode, 0, validated.stdout + validated.stderr);
      assert.match(validated.stdout, /Manifest schema validation passes!/);
    }
    const pkg = JSON.parse(await readFile(path.join(ROOT, 'package.json'), 'utf8'));
    assert.equal(manifest.version, pkg.version);
    const shipped = JSON.parse(await readFile(path.join(unpacked, 'package.json'), 'utf8'));
    assert.deepEqual([shipped.name, shipped.version, shipped.type], [pkg.name, pkg.version, 'module'], "dist/'s .js files load as ES modules");
  });

  it('declares the built CLI as its entry point, the agent tools it serves, and only settings live-mem reads', async () => {
    const { server } = manifest;
    assert.equal(server.type, 'node');
    assert.equal(server.entry_point, 'bin/live-mem.cjs');
    assert.ok((await stat(path.join(unpacked, server.entry_point))).isFile());
    assert.deepEqual(server.mcp_config.args, [`\${__dirname}/${server.entry_point}`], 'no command: it serves MCP on stdio, as the entries setup writes');
    const settings = new Set(FIELDS.map((field) => field.env));
    for (const name of Object.keys(server.mcp_config.env ?? {})) assert.ok(settings.has(name), `${name} is not a setting (src/config/fields.ts)`);
    assert.deepEqual(
      (manifest.tools ?? []).map((tool) => tool.name),
      TOOL_PROFILES.agent,
    );
    // Every form field reaches the server, and the key is masked in the form.
    const used = JSON.stringify(server.mcp_config);
    for (const [key, field] of Object.entries(manifest.user_config ?? {})) {
      assert.ok(used.includes(`\${user_config.${key}}`), `${key} is used`);
      assert.equal(field.sensitive === true, key === 'api_key', key);
      assert.equal(field.default, '', `${key}: left empty, it substitutes to nothing (an unset setting), not to its own placeholder`);
    }
    assert.equal(manifest.user_config?.store?.type, 'directory');
  });

  it('holds the built server, the licences and versions of the code bundled in it, and nothing else: no node_modules, under 1.5 MB', async () => {
    const files = (await readdir(unpacked, { recursive: true, withFileTypes: true }))
      .filter((entry) => entry.isFile())
      .map((entry) => path.relative(unpacked, path.join(entry.parentPath, entry.name)).split(path.sep).join('/'));
    const strays = files.filter(
      (file) =>
        !['manifest.json', 'package.json', 'bin/live-mem.cjs', 'LICENSE', 'THIRD-PARTY-LICENSES.txt', 'BUNDLED-DEPENDENCIES.json'].includes(file) &&
        !/^dist\/(cli|chunks)\/[\w-]+\.js$/.test(file),
    );
    assert.deepEqual(strays, []);
    assert.ok(files.includes('dist/cli/main.js'));
    assert.ok((await stat(bundle)).size < 1.5 * 1024 * 1024, `${(await stat(bundle)).size} bytes`);
    assert.match(await readFile(path.join(unpacked, 'LICENSE'), 'utf8'), /^MIT License\n\nCopyright \(c\) 2026 Cloud Temple\n/);
    const notices = await readFile(path.join(unpacked, 'THIRD-PARTY-LICENSES.txt'), 'utf8');
    assert.equal(notices, await readFile(path.join(ROOT, 'dist', 'THIRD-PARTY-LICENSES.txt'), 'utf8'));
    for (const bundled of ['@modelcontextprotocol/server', 'zod', 'openai', 'yaml']) assert.match(notices, new RegExp(`^${bundled} \\S+ \\(`, 'm'), bundled);
    const versions = await readFile(path.join(unpacked, 'BUNDLED-DEPENDENCIES.json'), 'utf8');
    assert.equal(versions, await readFile(path.join(ROOT, 'dist', 'BUNDLED-DEPENDENCIES.json'), 'utf8'));
    assert.equal((await stat(path.join(unpacked, 'bin', 'live-mem.cjs'))).mode & 0o111, 0o111, 'the entry point keeps its mode');
  });

  it('launched as Claude Desktop launches it, with a memory folder and a pinned space: initialises, serves the agent tools, writes and reads a note', async () => {
    const home = path.join(scratch.dir, 'filled');
    const store = path.join(scratch.dir, 'chosen-store');
    const server = await launch(home, { store, space: 'desk-notes' });
    assert.deepEqual(server.config.env?.LIVE_MEM_HOME, store);
    await server.connect();
    try {
      assert.equal(server.client.getServerVersion()?.name, 'live-mem');
      const { tools } = await server.client.listTools();
      assert.deepEqual(
        tools.map((tool) => tool.name),
        (manifest.tools ?? []).map((tool) => tool.name),
        'what the manifest declares',
      );
      const note = await call(server.client, 'live_note', { content: 'Claude Desktop was here', category: 'observation' });
      assert.equal(note.status, 'created', JSON.stringify(note));
      assert.equal(note.space_id, 'desk-notes', 'the pinned space');
      const read = await call(server.client, 'live_read', {});
      assert.equal(read.status, 'ok', JSON.stringify(read));
      const notes = read.notes as Array<{ content: string; agent: string }>;
      assert.deepEqual(
        notes.map(({ content, agent }) => ({ content, agent })),
        [{ content: 'Claude Desktop was here', agent: 'claude-desktop' }],
      );
    } finally {
      await server.client.close();
    }
    assert.ok((await stat(path.join(store, 'desk-notes'))).isDirectory(), 'the note is in the chosen folder');
  });

  it('with the form left empty: the memory in ~/.live-mem, and no default space (a note names its space, or is refused)', async () => {
    const home = path.join(scratch.dir, 'empty');
    const server = await launch(home, {});
    await server.connect();
    try {
      const refused = await server.client.callTool({ name: 'live_note', arguments: { content: 'where?', category: 'observation' } });
      assert.equal(refused.isError, true, JSON.stringify(refused));
      const note = await call(server.client, 'live_note', { space_id: 'named', content: 'a space named', category: 'observation' });
      assert.equal(note.status, 'created', JSON.stringify(note));
      const whoami = await call(server.client, 'system_whoami');
      assert.equal(whoami.tools_profile, 'agent');
    } finally {
      await server.client.close();
    }
    assert.ok((await stat(path.join(home, '.live-mem', 'named'))).isDirectory(), 'the default store: the one every live-mem here shares');
  });

  it("the model fields reach the model: a consolidation calls the form's endpoint with its model and key", async () => {
    const llm = await startScriptedLlm([{ reply: FIRST_PLAN }]);
    const home = path.join(scratch.dir, 'model');
    const server = await launch(home, { space: 'with-model', model_url: llm.url, model: 'form-model', api_key: 'form-key' });
    await server.connect();
    try {
      assert.equal((await call(server.client, 'live_note', { content: 'we chose Postgres', category: 'decision' })).status, 'created');
      const consolidated = await call(server.client, 'bank_consolidate', {});
      assert.equal(consolidated.status, 'ok', `${JSON.stringify(consolidated)}\n${server.stderr()}`);
      assert.equal(llm.requests[0]?.model, 'form-model');
      assert.equal(llm.authorizations[0], 'Bearer form-key');
    } finally {
      await server.client.close();
      await llm.close();
    }
  });

  it('an endpoint without a model name: the server does not start, and its log says what is missing', async () => {
    const server = await launch(path.join(scratch.dir, 'half'), { model_url: 'http://127.0.0.1:9/v1' });
    await assert.rejects(server.connect());
    assert.match(server.stderr(), /LIVE_MEM_LLM_BASE_URL is set but LIVE_MEM_LLM_MODEL is not/);
  });
});
