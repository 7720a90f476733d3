import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { ListRootsRequestSchema, type Root } from '@modelcontextprotocol/sdk/types.js';
import { fileURLToPath } from 'node:url';
import { execa, type ResultPromise } from 'execa';

export const BIN = fileURLToPath(new URL('../../bin/live-mem.cjs', import.meta.url));

/** An MCP server under test and the SDK's client connected to it: over stdio to the binary, or in process (in-process.ts). */
export interface TestServer {
  client: Client;
  /** What the server logged (its stderr). */
  stderr(): string;
  /** Calls a tool and returns its structuredContent (asserting there is one). */
  call(name: string, args?: Record<string, unknown>): Promise<Record<string, unknown> & { status: string }>;
  close(): Promise<void>;
}

/** The binary's server, over stdio. */
export type SpawnedServer = TestServer;

export interface SpawnOptions {
  /** The server's working folder, where a client starts it. */
  cwd?: string;
  /** The client declares `roots` (with listChanged) and answers roots/list with this. */
  roots?: () => Root[] | Promise<Root[]>;
}

/** Spawns the built `live-mem` binary and connects the SDK's client to it over stdio. */
export async function spawnServer(env: Record<string, string>, args: string[] = [], options: SpawnOptions = {}): Promise<SpawnedServer> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...args],
    ...(options.cwd ? { cwd: options.cwd } : {}),
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = testClient(options.roots);
  await client.connect(transport);
  return { client, stderr: () => stderr, call: toolCaller(client), close: () => client.close() };
}

/** The SDK's client as tests use it; with `roots`, it declares them (with listChanged) and answers roots/list with them. */
export function testClient(roots?: () => Root[] | Promise<Root[]>): Client {
  const client = new Client({ name: 'live-mem-test', version: '0.0.0' }, roots ? { capabilities: { roots: { listChanged: true } } } : {});
  if (roots) client.setRequestHandler(ListRootsRequestSchema, async () => ({ roots: await roots() }));
  return client;
}

/**
 * A tool call returning its structuredContent, after checking what every result must be: a text copy
 * equal to it, and isError exactly when the status says an error.
 */
export function toolCaller(client: Client): TestServer['call'] {
  return async (name, args = {}) => {
    const result = await client.callTool({ name, arguments: args });
    if (!result.structuredContent) throw new Error(`${name} returned no structuredContent: ${JSON.stringify(result)}`);
    const structured = result.structuredContent as Record<string, unknown> & { status: string };
    const text = (result.content as Array<{ type: string; text: string }>)[0];
    if (!text || JSON.stringify(JSON.parse(text.text)) !== JSON.stringify(structured)) throw new Error(`${name}: text copy differs from structuredContent`);
    const isErrorStatus = !['ok', 'created', 'deleted', 'partial'].includes(structured.status);
    if (Boolean(result.isError) !== isErrorStatus) throw new Error(`${name}: isError=${result.isError} but status=${structured.status}`);
    return structured;
  };
}

export interface HttpServer {
  /** `http://127.0.0.1:{port}` */
  origin: string;
  /** `{origin}/mcp` */
  url: string;
  stop(): Promise<void>;
}

/** Starts `live-mem serve --http` on a free loopback port (the binary, with only `env`) and waits for it to announce its URL. */
export async function startHttpServer(env: Record<string, string>): Promise<HttpServer> {
  const server: ResultPromise = execa(process.execPath, [BIN, 'serve', '--http', '--port', '0'], {
    env: { PATH: process.env.PATH ?? '', ...env },
    extendEnv: false,
    reject: false,
  });
  const url = await new Promise<string>((resolve, reject) => {
    let seen = '';
    server.stderr?.on('data', (chunk: Buffer) => {
      seen += chunk.toString();
      const match = /at (http:\/\/127\.0\.0\.1:\d+\/mcp)/.exec(seen);
      if (match) resolve(match[1] as string);
    });
    setTimeout(() => reject(new Error(`no URL announced: ${seen}`)), 10_000).unref();
  });
  return {
    origin: url.slice(0, -'/mcp'.length),
    url,
    async stop() {
      server.kill('SIGTERM');
      await server;
    },
  };
}
