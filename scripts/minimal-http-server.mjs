/**
 * The bare stateless MCP server over Streamable HTTP that `serve --http` is measured against
 * (scripts/bench-http.ts): the MCP SDK's own stateless example (a server and a transport per request),
 * with the same two tools the benchmark calls and nothing else — `live_note` writes the note as a new
 * file with live-mem's front matter, fsynced before the answer; `memory_search` scans the space's notes
 * written so far, newest first, for the query's words. Both answer in live-mem's shape, field for field, so
 * that both servers (and their clients) serialise and parse answers of the same size. No tokens, no
 * spaces, no index, no validation beyond types, no logging.
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
/** The notes of each space, oldest first. */
const spaces = new Map();
const notesOf = (spaceId) => {
  let notes = spaces.get(spaceId);
  if (!notes) spaces.set(spaceId, (notes = []));
  return notes;
};
let written = 0;
const result = (value) => ({ content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value });

function build() {
  const server = new McpServer({ name: 'minimal-http', version: '0' });
  server.registerTool(
    'live_note',
    { inputSchema: { space_id: z.string(), category: z.string(), content: z.string() } },
    async ({ space_id, category, content }) => {
      const timestamp = `${new Date().toISOString().slice(0, 19)}Z`;
      const filename = `${timestamp.replace(/[-:]/g, '').slice(0, 15)}_bench_${category}_${(written++).toString(36).padStart(8, '0')}.md`;
      const body = `---\ntimestamp: "${timestamp}"\nagent: "bench"\ncategory: ${JSON.stringify(category)}\ntags: []\nspace_id: ${JSON.stringify(space_id)}\n---\n\n${content}\n`;
      // Asynchronous, as live-mem's driver: notes of concurrent requests are written and fsynced at once.
      const file = await open(path.join(dir, filename), 'wx', 0o600);
      try {
        await file.write(body);
        await file.sync();
      } finally {
        await file.close();
      }
      notesOf(space_id).push({ ref: filename, timestamp, category, text: content, folded: content.toLowerCase() });
      return result({ status: 'created', space_id, filename, category, agent: 'bench', tags: [], size: Buffer.byteLength(body), timestamp });
    },
  );
  server.registerTool(
    'memory_search',
    { inputSchema: { space_id: z.string(), query: z.string(), limit: z.number().optional() } },
    async ({ space_id, query, limit = 5 }) => {
      const words = query.toLowerCase().split(/\s+/).filter(Boolean);
      const notes = notesOf(space_id);
      const results = [];
      for (let i = notes.length - 1; i >= 0 && results.length < limit; i--) {
        const { ref, timestamp, category, text, folded } = notes[i];
        if (words.every((w) => folded.includes(w)))
          results.push({ score: 0.0784, source: 'live', level: 0, ref, timestamp, agent: 'bench', category, text, truncated: false });
      }
      return result({ status: 'ok', space_id, query, mode: 'bm25', results, total: results.length });
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
