/**
 * The bare stateless MCP server on the SDK v2 packages that section 27 of the benchmark
 * (scripts/bench-eras.ts) measures `live-mem serve --http` against: the SDK's own entry
 * (`createMcpHandler` with a factory, an McpServer per request, through `toNodeHandler` on node:http),
 * serving both eras as the SDK does by default, with one tool, `live_note`, that writes the note as
 * live-mem writes it (minimal-note-file.mjs: same name, same front-matter, fsynced before the answer)
 * into one folder. Nothing else: no tokens, no permissions, no spaces, no validation beyond types, no
 * logs, no limits.
 *
 *   node scripts/minimal-eras-server.mjs <folder>     prints `listening <port>` on stdout
 */
import { createServer } from 'node:http';
import { toNodeHandler } from '@modelcontextprotocol/node';
import { createMcpHandler, McpServer } from '@modelcontextprotocol/server';
import { z } from 'zod';
import { noteWriter } from './minimal-note-file.mjs';

const [dir] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: minimal-eras-server.mjs <folder>\n');
  process.exit(2);
}
const notes = noteWriter(dir, 'bench');
process.on('exit', notes.close);
process.on('SIGTERM', () => process.exit(0));
const input = z.object({ space_id: z.string(), category: z.string(), content: z.string(), tags: z.string().optional() });

function build() {
  const server = new McpServer({ name: 'minimal-eras', version: '0' });
  server.registerTool('live_note', { description: 'Write a note.', inputSchema: input }, async (args) => {
    const note = notes.write(args);
    return { content: [{ type: 'text', text: JSON.stringify(note) }], structuredContent: note };
  });
  return server;
}

const handle = toNodeHandler(createMcpHandler(build));
const http = createServer((req, res) => {
  if (req.url !== '/mcp') return res.writeHead(404).end();
  void handle(req, res);
});
http.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${http.address().port}\n`));
