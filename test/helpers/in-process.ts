/**
 * The server the binary serves on stdio, run in the test's process: the same composition (settings from
 * the same env parsing, the core, the tools, the default space, the caller), connected to the SDK's real
 * `Client` over its InMemoryTransport. A tool call costs no process and no pipe; what only a process
 * shows (stdout purity, signals, SIGKILL, several processes, the environment at launch) stays with
 * `spawnServer` (mcp-client.ts).
 */
import { homedir } from 'node:os';
import { InMemoryTransport } from '@modelcontextprotocol/sdk/inMemory.js';
import type { Transport } from '@modelcontextprotocol/sdk/shared/transport.js';
import { stdioServer } from '../../src/cli/commands/serve.js';
import { openCore } from '../../src/cli/open.js';
import { connectServer } from '../../src/mcp/stdio.js';
import { type SpawnOptions, type TestServer, testClient, toolCaller } from './mcp-client.js';

/**
 * The binary's stdio server for `env`, launched with no flag, in process. `env` means what it means to
 * `spawnServer`: the server sees it with PATH and HOME only (the test process's own environment is not
 * read), and `cwd` is the folder it runs in. `stderr()` holds what it logged.
 */
export async function inProcessServer(env: Record<string, string>, options: SpawnOptions = {}): Promise<TestServer> {
  const home = env.HOME ?? homedir();
  // A default store under `~` would be the test process's own home, not env.HOME's, as it would be in a child.
  if (home !== homedir() && !env.LIVE_MEM_HOME) throw new Error('inProcessServer: with HOME in env, give LIVE_MEM_HOME too');
  // Its kill point would kill the test's own process.
  if (env.LIVE_MEM_TEST_KILL_AT) throw new Error('inProcessServer: LIVE_MEM_TEST_KILL_AT kills the process: use spawnServer');
  let stderr = '';
  const sink = {
    write: (chunk: string) => {
      stderr += chunk;
      return true;
    },
  };
  const opened = await openCore({}, { PATH: process.env.PATH ?? '', HOME: home, ...env }, sink);
  try {
    const served = await stdioServer(opened, { cwd: options.cwd ?? process.cwd(), home });
    const [clientEnd, serverEnd] = InMemoryTransport.createLinkedPair();
    const server = await connectServer(served, overTheWire(serverEnd));
    const client = testClient(options.roots);
    await client.connect(overTheWire(clientEnd));
    return {
      client,
      stderr: () => stderr,
      call: toolCaller(client),
      // As the binary ends when its stdin closes: the server closed, then the core (an index snapshot being written finishes).
      async close() {
        await client.close();
        await server.close();
        await opened.close();
      },
    };
  } catch (error) {
    await opened.close();
    throw error;
  }
}

/**
 * Each message sent as a pipe carries it: as JSON text (the other end gets what JSON keeps, no undefined
 * field, never the sender's objects), arriving in a later turn of the event loop. Handed over at once,
 * a client polling in a loop would answer itself in microtasks and starve the server's own work (a
 * background job, its timers and I/O), which a process across a pipe never does.
 */
function overTheWire<T extends Transport>(transport: T): T {
  const send = transport.send.bind(transport);
  transport.send = (message, options) => {
    const text = JSON.stringify(message);
    return new Promise<void>((resolve, reject) => setImmediate(() => send(JSON.parse(text), options).then(resolve, reject)));
  };
  return transport;
}
