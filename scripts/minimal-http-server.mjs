/**
 * The bare stateless MCP server over Streamable HTTP that `serve --http` is measured against
 * (scripts/bench-http.ts): the MCP SDK's own stateless example (a server and a transport per request),
 * with the same two tools the benchmark calls, doing the same work as live-mem's through live-mem's own
 * library (`dist/index.js` of the build measured): `live_note` writes the note with `core.notes.write`
 * (one file, fsynced), `memory_search` answers with `core.recall.search` (the same index, so the same
 * hits), in the same store as the server it is compared with, in the same spaces as they grow. What is
 * left out is what the server adds around the work: tokens and permissions, validation of inputs and
 * outputs beyond types, rate limits, logging. (Before, this server scanned its newest notes for the
 * query's words: less work than a ranked search over a growing space, and the ratio said little.)
 *
 *   node scripts/minimal-http-server.mjs <home> <dist/index.js>     prints `listening <port>` on stdout
 */
import { createServer } from 'node:http';
import { pathToFileURL } from 'node:url';
import { McpServer } from '@modelcontextprotocol/sdk/server/mcp.js';
import { StreamableHTTPServerTransport } from '@modelcontextprotocol/sdk/server/streamableHttp.js';
import { z } from 'zod';

const [home, library] = process.argv.slice(2);
if (!home || !library) {
  process.stderr.write('usage: minimal-http-server.mjs <home> <dist/index.js>\n');
  process.exit(2);
}
const { createCore, createFsDriver, ownerCaller } = await import(pathToFileURL(library).href);
const core = createCore({ storage: createFsDriver(home) });
const caller = ownerCaller('bench');
const result = (value) => ({ content: [{ type: 'text', text: JSON.stringify(value) }], structuredContent: value });

function build() {
  const server = new McpServer({ name: 'minimal-http', version: '0' });
  server.registerTool(
    'live_note',
    { inputSchema: { space_id: z.string(), category: z.string(), content: z.string() } },
    async ({ space_id, category, content }) => result(await core.notes.write(caller, { space_id, category, content })),
  );
  server.registerTool(
    'memory_search',
    { inputSchema: { space_id: z.string(), query: z.string(), limit: z.number().optional() } },
    async ({ space_id, query, limit = 5 }) => result(await core.recall.search(caller, { space_id, query, limit })),
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
