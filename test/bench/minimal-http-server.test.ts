import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { owner } from '../helpers/core.js';
import { tempDir } from '../helpers/tmp.js';

/**
 * The HTTP benchmark's reference (scripts/minimal-http-server.mjs) stands for "a bare SDK server doing
 * the same work": on the same store, its note must be live-mem's note and its search live-mem's hits,
 * or the ratio of section 17 compares different work (issue 31: it once scanned its newest notes).
 */
const SERVER = fileURLToPath(new URL('../../scripts/minimal-http-server.mjs', import.meta.url));
const LIBRARY = fileURLToPath(new URL('../../dist/index.js', import.meta.url));

describe('the benchmark’s bare HTTP server does live-mem’s work on the same store', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let stop: () => void = () => undefined;
  let url = '';
  before(async () => {
    home = await tempDir();
    const core = createCore({ storage: createFsDriver(home.dir) });
    await core.spaces.create(owner, { space_id: 'bench' });
    for (let i = 0; i < 30; i++)
      await core.notes.write(owner, { space_id: 'bench', category: 'progress', content: `Step ${i}: the kestrel${i % 7} pipeline caches layers` });
    const child = spawn(process.execPath, [SERVER, home.dir, LIBRARY], {
      stdio: ['ignore', 'pipe', 'inherit'],
      env: { ...process.env, LIVE_MEM_LOG_LEVEL: 'warn' },
    });
    stop = () => child.kill('SIGTERM');
    const port = await new Promise<string>((resolve, reject) => {
      child.stdout.on('data', (chunk: Buffer) => {
        const match = /listening (\d+)/.exec(chunk.toString());
        if (match) resolve(match[1] as string);
      });
      child.once('exit', () => reject(new Error('the server exited')));
    });
    url = `http://127.0.0.1:${port}/mcp`;
  });
  after(async () => {
    stop();
    await home?.remove();
  });

  it('writes the note live-mem writes and answers a search with live-mem’s hits', async () => {
    const client = new Client({ name: 'test', version: '0.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url)));
    try {
      const note = (
        await client.callTool({ name: 'live_note', arguments: { space_id: 'bench', category: 'decision', content: 'The kestrel3 pipeline moved' } })
      ).structuredContent as { status: string; filename: string };
      assert.equal(note.status, 'created');
      const found = (await client.callTool({ name: 'memory_search', arguments: { space_id: 'bench', query: 'kestrel3 pipeline', limit: 5 } }))
        .structuredContent as { results: Array<{ ref: string; score: number }> };
      const core = createCore({ storage: createFsDriver(home.dir) });
      const expected = await core.recall.search(owner, { space_id: 'bench', query: 'kestrel3 pipeline', limit: 5 });
      assert.deepEqual(
        found.results.map((hit) => [hit.ref, hit.score]),
        expected.results.map((hit) => [hit.ref, hit.score]),
      );
      assert.ok(
        found.results.some((hit) => hit.ref === note.filename),
        'its own note is found',
      );
    } finally {
      await client.close();
    }
  });
});
