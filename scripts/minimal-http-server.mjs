/**
 * The bare stateless MCP server over Streamable HTTP that `serve --http` is measured against
 * (scripts/bench-http.ts): the MCP SDK's own stateless example (a server and a transport per request),
 * with the same two tools the benchmark calls and nothing else — `live_note` writes the note as a new
 * file, fsynced before the answer; `memory_search` scans the notes written so far for the query's words.
 * No tokens, no spaces, no validation beyond types.
 *
 *   node scripts/minimal-http-server.mjs <folder>     prints `listening <port>` on stdout
 */
import { mkdirSync } from 'node:fs';
import { open } from 'node:fs/promises';
import { createServer } from 'node:http';
import path from 'node:path';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const [dir] = process.argv.slice(2);
if (!dir) {
  process.stderr.write('usage: minimal-http-server.mjs <folder>\n');
  process.exit(2);
}
mkdirSync(dir, { recursive: true });
const notes = [];
let written = 0;
const result = (value) => ({ content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value });

function build() {
  const server = new McpServer({ name: 'minimal-http', version: '0' });
  server.registerTool(
    'live_note',
    { inputSchema: { space_id: z.string(), category: z.string(), content: z.string() } },
    async ({ space_id, category, content }) => {
      const filename = `${Date.now()}_${written++}_${category}.md`;
      // Asynchronous, as live-mem's driver: notes of concurrent requests are written and fsynced at once.
      const file = await open(path.join(dir, filename), 'wx', 0o600);
      try {
        await file.write(`---\nspace_id: ${JSON.stringify(space_id)}\ncategory: ${category}\n---\n\n${content}`);
        await file.sync();
      } finally {
        await file.close();
      }
      notes.push({ filename, content: content.toLowerCase() });
      return result({ status: 'created', filename });
    },
  );
  server.registerTool(
    'memory_search',
    { inputSchema: { space_id: z.string(), query: z.string(), limit: z.number().optional() } },
    async ({ query, limit = 5 }) => {
      const words = query.toLowerCase().split(/\s+/).filter(Boolean);
      const hits = [];
      for (let i = notes.length - 1; i >= 0 && hits.length < limit; i--) if (words.every((w) => notes[i].content.includes(w))) hits.push(notes[i]);
      return result({ status: 'ok', results: hits });
    },
  );
  return server;
}

const http = createServer(async (req, res) => {
  if (req.method !== 'POST') return res.writeHead(405).end();
  const server = build();
  const transport = new StreamableHTTPServerTransport({ sessionIdGenerator: undefined });
  res.on('close', () => {
    void transport.close();
    void server.close();
  });
  await server.connect(transport);
  await transport.handleRequest(req, res);
});
http.listen(0, '127.0.0.1', () => process.stdout.write(`listening ${http.address().port}\n`));
