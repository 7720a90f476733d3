// What a 2025-era client (the SDK's v1 client) sees from two builds of live-mem, side by side: the
// initialize answer (capabilities, instructions), the lists, and the errors of bad calls, each as JSON.
// `node scripts/compare-mcp-builds.mjs A/bin/live-mem.cjs B/bin/live-mem.cjs` over stdio; with
// CMP_HTTP=1, over `serve --http` with a token. Prints each difference, then how many are identical.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { spawn, execFileSync } from 'node:child_process';
import { mkdtempSync } from 'node:fs';
const [binA, binB] = process.argv.slice(2);
async function observe(bin, home) {
  const client = new Client({ name: 'cmp', version: '0' }, { capabilities: { sampling: {} } });
  const env = { PATH: process.env.PATH, HOME: home, LIVE_MEM_HOME: home, LIVE_MEM_AGENT: 'cmp' };
  let child;
  if (process.env.CMP_HTTP) {
    execFileSync(process.execPath, [bin, 'space', 'create', 'alpha'], { env });
    const token = JSON.parse(
      execFileSync(process.execPath, [bin, 'token', 'create', 'cmp', '--permissions', 'read,write', '--spaces', 'alpha', '--json'], { env }).toString(),
    ).token;
    child = spawn(process.execPath, [bin, 'serve', '--http', '--port', '0'], { env });
    const url = await new Promise((resolve) => {
      let seen = '';
      child.stderr.on('data', (c) => {
        seen += c;
        const m = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen);
        if (m) resolve(m[1]);
      });
    });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  } else await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin], env, stderr: 'ignore' }));
  const out = {};
  const safe = async (k, f) => {
    try {
      out[k] = await f();
    } catch (e) {
      out[k] = { error: e.message, code: e.code, data: e.data };
    }
  };
  out.capabilities = client.getServerCapabilities();
  out.version = client.getServerVersion();
  out.instructions = client.getInstructions();
  await safe('tools', () => client.listTools());
  await safe('prompts', () => client.listPrompts());
  await safe('templates', () => client.listResourceTemplates());
  await safe('create', () => client.callTool({ name: 'space_create', arguments: { space_id: 'alpha' } }));
  await safe('resources', () => client.listResources());
  await safe('badnote', () => client.callTool({ name: 'live_note', arguments: { space_id: 'alpha', category: 'nope', content: 'x' } }));
  await safe('unknownTool', () => client.callTool({ name: 'nope', arguments: {} }));
  await safe('unknownPrompt', () => client.getPrompt({ name: 'nope' }));
  await safe('badPromptArg', () => client.getPrompt({ name: 'memory_start', arguments: { space: 5 } }));
  await safe('unknownUri', () => client.readResource({ uri: 'live-mem://nope' }));
  await safe('missingFile', () => client.readResource({ uri: 'live-mem://alpha/bank/none.md' }));
  await safe('missingSpace', () => client.readResource({ uri: 'live-mem://ghost/rules' }));
  await safe('rules', () => client.readResource({ uri: 'live-mem://alpha/rules' }));
  await safe('subscribeBad', () => client.subscribeResource({ uri: 'nope:x' }));
  await safe('prompt', () => client.getPrompt({ name: 'memory_wrap_up', arguments: { space: 'alpha' } }));
  await safe('ping', () => client.ping());
  await safe('setLevel', () => client.setLoggingLevel('debug'));
  await client.close();
  child?.kill('SIGTERM');
  return out;
}
const a = await observe(binA, mkdtempSync('/tmp/sdk2cmp/a-'));
const b = await observe(binB, mkdtempSync('/tmp/sdk2cmp/b-'));
let same = 0;
for (const k of Object.keys(a)) {
  const [x, y] = [JSON.stringify(a[k]), JSON.stringify(b[k])];
  if (x === y) same++;
  else console.log(`DIFF ${k}:\n  main:   ${x.slice(0, 400)}\n  branch: ${y.slice(0, 400)}`);
}
console.log(`${same}/${Object.keys(a).length} identical`);
