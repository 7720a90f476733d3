/**
 * The least an MCP server can do to answer `live_note`, as a reference for the benchmark (section 2):
 * the note formatted as live-mem formats it (same name, same front-matter) and created with the same
 * guarantee (temp file opened ahead, written, linked to its name, fsynced before the answer), and
 * nothing else: no space check, no permissions, no validation beyond types, no logs.
 *
 *   node scripts/minimal-note-server.mjs <live folder> by-hand   JSON-RPC read and written by hand
 *   node scripts/minimal-note-server.mjs <live folder> sdk       the MCP SDK's McpServer, one tool
 *
 * Both also answer `system_whoami` with a fixed result, so the benchmark can measure their round trip,
 * and `live_search` as live-mem does (the newest notes whose content or tags hold the query,
 * case-insensitively, `limit` of them, with the total found) over the notes this process wrote, kept in
 * memory: the benchmark page (scripts/bench-page-speed.ts) runs one per session, as a stateful server.
 * test/bench/minimal-note-server.test.ts checks that the note is byte for byte the one live-mem writes.
 */
import { noteWriter } from './minimal-note-file.mjs';

const [dir, mode = 'by-hand'] = process.argv.slice(2);
if (!dir || !['by-hand', 'sdk'].includes(mode)) {
  process.stderr.write('usage: minimal-note-server.mjs <live folder> by-hand|sdk\n');
  process.exit(2);
}
const AGENT = 'bench';
const WHOAMI = { status: 'ok', agent: AGENT, permissions: 'admin', spaces: '*' };

// -------------------------------------------------------------------------------------------------
// The note (minimal-note-file.mjs)

const notes = noteWriter(dir, AGENT);
process.on('exit', notes.close);
const writeNote = notes.write;
const searchNotes = notes.search;

const toolResult = (result) => ({ content: [{ type: 'text', text: JSON.stringify(result) }], structuredContent: result });

// -------------------------------------------------------------------------------------------------
// The protocol

if (mode === 'sdk') {
  const { McpServer } = await import('@modelcontextprotocol/sdk/server/mcp.js');
  const { StdioServerTransport } = await import('@modelcontextprotocol/sdk/server/stdio.js');
  const { z } = await import('zod');
  const server = new McpServer({ name: 'minimal-note-server', version: '0.0.0' });
  const input = { space_id: z.string(), category: z.string(), content: z.string(), agent: z.string().default(''), tags: z.string().default('') };
  server.registerTool('live_note', { description: 'Write a note.', inputSchema: input }, async (args) => toolResult(writeNote(args)));
  server.registerTool('system_whoami', { description: 'Who is calling.', inputSchema: {} }, async () => toolResult(WHOAMI));
  const search = { space_id: z.string(), query: z.string(), limit: z.number().int().default(20) };
  server.registerTool('live_search', { description: 'Find notes holding a text.', inputSchema: search }, async (args) => toolResult(searchNotes(args)));
  await server.connect(new StdioServerTransport());
} else {
  const send = (message) => process.stdout.write(`${JSON.stringify({ jsonrpc: '2.0', ...message })}\n`);
  const answer = ({ method, params }) => {
    if (method === 'initialize') {
      return { protocolVersion: params.protocolVersion, capabilities: { tools: {} }, serverInfo: { name: 'minimal-note-server', version: '0.0.0' } };
    }
    if (method === 'ping') return {};
    if (method !== 'tools/call') throw Object.assign(new Error(`no method ${method}`), { code: -32601 });
    if (params.name === 'system_whoami') return toolResult(WHOAMI);
    const args = params.arguments ?? {};
    if (params.name === 'live_search' && typeof args.query === 'string') return toolResult(searchNotes(args));
    if (params.name !== 'live_note' || typeof args.space_id !== 'string' || typeof args.category !== 'string' || typeof args.content !== 'string') {
      throw Object.assign(new Error('invalid tools/call'), { code: -32602 });
    }
    return toolResult(writeNote(args));
  };
  let pending = '';
  process.stdin.setEncoding('utf8');
  process.stdin.on('data', (chunk) => {
    pending += chunk;
    for (let end = pending.indexOf('\n'); end >= 0; end = pending.indexOf('\n')) {
      const message = JSON.parse(pending.slice(0, end));
      pending = pending.slice(end + 1);
      if (message.id === undefined) continue; // notifications
      try {
        send({ id: message.id, result: answer(message) });
      } catch (error) {
        send({ id: message.id, error: { code: error.code ?? -32603, message: error.message } });
      }
    }
  });
}
