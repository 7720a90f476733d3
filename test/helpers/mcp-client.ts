import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StdioClientTransport } from '@modelcontextprotocol/sdk/client/stdio.js';
import { fileURLToPath } from 'node:url';

export const BIN = fileURLToPath(new URL('../../bin/live-mem.cjs', import.meta.url));

export interface SpawnedServer {
  client: Client;
  stderr(): string;
  /** Calls a tool and returns its structuredContent (asserting there is one). */
  call(name: string, args?: Record<string, unknown>): Promise<Record<string, unknown> & { status: string }>;
  close(): Promise<void>;
}

/** Spawns the built `live-mem` binary and connects the SDK's client to it over stdio. */
export async function spawnServer(env: Record<string, string>, args: string[] = []): Promise<SpawnedServer> {
  const transport = new StdioClientTransport({
    command: process.execPath,
    args: [BIN, ...args],
    env: { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp', ...env },
    stderr: 'pipe',
  });
  let stderr = '';
  transport.stderr?.on('data', (chunk: Buffer) => {
    stderr += chunk.toString();
  });
  const client = new Client({ name: 'live-mem-test', version: '0.0.0' });
  await client.connect(transport);
  return {
    client,
    stderr: () => stderr,
    async call(name, args = {}) {
      const result = await client.callTool({ name, arguments: args });
      if (!result.structuredContent) throw new Error(`${name} returned no structuredContent: ${JSON.stringify(result)}`);
      const structured = result.structuredContent as Record<string, unknown> & { status: string };
      const text = (result.content as Array<{ type: string; text: string }>)[0];
      if (!text || JSON.stringify(JSON.parse(text.text)) !== JSON.stringify(structured)) throw new Error(`${name}: text copy differs from structuredContent`);
      const isErrorStatus = !['ok', 'created', 'deleted', 'partial'].includes(structured.status);
      if (Boolean(result.isError) !== isErrorStatus) throw new Error(`${name}: isError=${result.isError} but status=${structured.status}`);
      return structured;
    },
    close: () => client.close(),
  };
}
