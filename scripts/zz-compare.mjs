// Compares what a 2025 client (the v1 SDK client) sees from two builds over stdio: main's and this branch's.
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { mkdtempSync } from 'node:fs';
const [binA, binB] = process.argv.slice(2);
async function observe(bin, home) {
  const client = new Client({ name: 'cmp', version: '0' }, { capabilities: { sampling: {} } });
  await client.connect(new StdioClientTransport({ command: process.execPath, args: [bin], env: { PATH: process.env.PATH, HOME: home, LIVE_MEM_HOME: home, LIVE_MEM_AGENT: 'cmp' }, stderr: 'ignore' }));
  const out = {};
  const safe = async (k, f) => { try { out[k] = await f(); } catch (e) { out[k] = { error: e.message, code: e.code, data: e.data }; } };
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
