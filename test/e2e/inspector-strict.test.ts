/**
 * The MCP Inspector's tool schema portability check (`--strict`, @modelcontextprotocol/inspector's CLI)
 * on the binary's tools/list over stdio: every tool (`admin`), the `all` profile and the `agent` one, in
 * each protocol era (`--protocol-era legacy`: 2025-11-25's initialize; `modern`: 2026-07-28, pinned, which
 * fails unless the server answers server/discover). Each run exits 0 with no error-level finding; a
 * warning is printed as a diagnostic. A server whose schema holds a bare `true` shows the check can fail.
 *
 * The Inspector is no devDependency (it brings some 120 packages: react, vite, ink): `.ci/run` installs it
 * into a folder of its own and names that folder in LIVE_MEM_TEST_INSPECTOR, which makes these tests
 * required; without it they are skipped with the command that adds it. It needs Node.js >= 22.19: on an
 * older node it runs on the first newer one of LIVE_MEM_TEST_NODES (CI's), live-mem on the test's own.
 */
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it, type TestContext } from 'node:test';
import { promisify } from 'node:util';
import { selectTools } from '../../src/mcp/profiles.js';
import { BIN } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

/** The release `.ci/run` installs; the tests refuse another when required, so the two move together. */
const VERSION = '2.12.0';
const INSTALL = `npm install --prefix /tmp/live-mem-peers @modelcontextprotocol/inspector@${VERSION} && export LIVE_MEM_TEST_INSPECTOR=/tmp/live-mem-peers`;
const ERAS = ['legacy', 'modern'] as const;
const PROFILES = ['admin', 'all', 'agent'] as const;

interface Finding {
  rule: string;
  severity: 'error' | 'warning';
  schema: string;
  path: string;
  issue: string;
}
interface Outcome {
  code: number;
  tools: string[];
  findings: Array<Finding & { tool: string }>;
  stderr: string;
}

const atLeast = (version: string, [major, minor]: [number, number]) => {
  const [a = 0, b = 0] = version.replace(/^v/, '').split('.').map(Number);
  return a > major || (a === major && b >= minor);
};

/** A node the Inspector runs on: this one, else the first of LIVE_MEM_TEST_NODES that is new enough. */
function inspectorNode(): string | undefined {
  if (atLeast(process.version, [22, 19])) return process.execPath;
  return (process.env.LIVE_MEM_TEST_NODES ?? '')
    .split(path.delimiter)
    .filter(Boolean)
    .find((node) => atLeast(spawnSync(node, ['-p', 'process.version'], { encoding: 'utf8' }).stdout.trim(), [22, 19]));
}

/** The Inspector's CLI and the node to run it with, or why the tests cannot run. */
function locate(): { cli: string; node: string } | string {
  const folder = process.env.LIVE_MEM_TEST_INSPECTOR;
  if (!folder) return `LIVE_MEM_TEST_INSPECTOR is not set: \`${INSTALL}\` adds the Inspector`;
  const root = path.join(folder, 'node_modules/@modelcontextprotocol/inspector');
  const cli = path.join(root, 'clients/cli/build/index.js');
  if (!existsSync(cli)) return `no @modelcontextprotocol/inspector in LIVE_MEM_TEST_INSPECTOR (${folder}): \`${INSTALL}\` adds it`;
  const { version } = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')) as { version: string };
  if (version !== VERSION) return `LIVE_MEM_TEST_INSPECTOR holds @modelcontextprotocol/inspector ${version}, not ${VERSION} (this test's and .ci/run's)`;
  const node = inspectorNode();
  if (!node) return `the Inspector needs Node.js >= 22.19: run on it, or name one in LIVE_MEM_TEST_NODES`;
  return { cli, node };
}

/** `inspector --method tools/list --strict --format json` against the stdio `server`: its exit code, the tools it lists, every finding. */
async function inspect(inspector: { cli: string; node: string }, home: string, server: string[], era: string): Promise<Outcome> {
  const args = [inspector.cli, '--method', 'tools/list', '--strict', '--format', 'json', '--protocol-era', era, '-e', `LIVE_MEM_HOME=${home}`, '--', ...server];
  const env = { PATH: process.env.PATH ?? '', HOME: home, NO_COLOR: '1' };
  const { code, stdout, stderr } = await promisify(execFile)(inspector.node, args, { env, timeout: 60_000, maxBuffer: 16 << 20 }).then(
    (done) => ({ code: 0, ...done }),
    (error: { code?: unknown; stdout?: string; stderr?: string; message: string }) => ({
      code: typeof error.code === 'number' ? error.code : -1,
      stdout: error.stdout ?? '',
      stderr: error.stderr ?? error.message,
    }),
  );
  let answer: { result?: { tools?: Array<{ name: string }> }; schemaFindings?: Array<{ toolName: string; findings: Finding[] }> } = {};
  try {
    answer = JSON.parse(stdout);
  } catch {
    assert.fail(`the Inspector exited ${code} with no JSON on stdout: ${stderr}`);
  }
  const findings = (answer.schemaFindings ?? []).flatMap(({ toolName, findings }) => findings.map((finding) => ({ ...finding, tool: toolName })));
  return { code, tools: (answer.result?.tools ?? []).map((tool) => tool.name), findings, stderr };
}

/** A 2025-era stdio server of one tool whose `anything` argument's schema is a bare `true`. */
const UNPORTABLE_SERVER = `
const tools = [{ name: 'loose', inputSchema: { type: 'object', properties: { anything: true } } }];
require('node:readline').createInterface({ input: process.stdin }).on('line', (line) => {
  const message = JSON.parse(line);
  if (message.id === undefined) return;
  const result = message.method === 'initialize'
    ? { protocolVersion: message.params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'unportable', version: '1.0.0' } }
    : message.method === 'tools/list' ? { tools } : {};
  process.stdout.write(JSON.stringify({ jsonrpc: '2.0', id: message.id, result }) + '\\n');
});
`;

const described = (f: Finding & { tool: string }) => `${f.severity} ${f.rule}: ${f.tool} ${f.schema}${f.path ? `.${f.path}` : ''}: ${f.issue}`;

const inspector = locate();
if (typeof inspector === 'string') {
  describe('the MCP Inspector --strict', () => {
    if (process.env.LIVE_MEM_TEST_INSPECTOR) it('inspector --strict: needs @modelcontextprotocol/inspector', () => assert.fail(inspector));
    else it('inspector --strict: needs @modelcontextprotocol/inspector', { skip: inspector }, () => undefined);
  });
} else {
  describe('the MCP Inspector --strict on the binary over stdio', () => {
    let home: Awaited<ReturnType<typeof tempDir>>;
    before(async () => {
      home = await tempDir();
    });
    after(() => home?.remove());

    for (const era of ERAS) {
      for (const profile of PROFILES) {
        it(`inspector --strict passes tools/list: the ${profile} profile, ${era} era`, async (t: TestContext) => {
          const outcome = await inspect(inspector, home.dir, [process.execPath, BIN, 'serve', '--tools', profile], era);
          for (const finding of outcome.findings) t.diagnostic(described(finding));
          assert.deepEqual(outcome.findings.filter((f) => f.severity === 'error').map(described), []);
          assert.equal(outcome.code, 0, outcome.stderr);
          assert.deepEqual(
            outcome.tools,
            selectTools(profile).tools.map((tool) => tool.name),
          );
        });
      }
    }

    it('inspector --strict fails a schema with a bare `true` (exit 6): the check can fail', async () => {
      const script = path.join(home.dir, 'unportable-server.cjs');
      await writeFile(script, UNPORTABLE_SERVER);
      const outcome = await inspect(inspector, home.dir, [process.execPath, script], 'legacy');
      assert.equal(outcome.code, 6, outcome.stderr);
      assert.deepEqual(
        outcome.findings.map((f) => [f.tool, f.rule, f.severity, f.path]),
        [['loose', 'boolean-schema', 'error', 'properties.anything']],
      );
    });
  });
}
