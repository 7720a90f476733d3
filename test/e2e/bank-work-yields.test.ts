/**
 * Heavy bank work beside other clients (issue 39, item 4), on `serve --http`: a bank_write of 10,000
 * section edits (before: the square of their number, past 300 s at 5,000, while every other request
 * waited and was reset after 20 s) lands whole, and another client's call sent while it runs is
 * answered. That the edits run in slices of the event loop is proven where it is deterministic:
 * test/core/bank/bank-limits.test.ts ("yield to the event loop").
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { type HttpServer, startHttpServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('owner');
const JOURNAL = '# Journal\n\n## Log\n\n- started\n\n## Decisions\n\n- Postgres\n';

async function connect(url: string, token: string): Promise<Client> {
  const client = new Client({ name: 'bank-work-test', version: '0' });
  await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
  return client;
}

describe('heavy bank work on serve --http', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let server: HttpServer | undefined;
  let token = '';

  before(async () => {
    home = await tempDir();
    const core = createCore({ storage: createFsDriver(home.dir) });
    await core.spaces.create(owner, { space_id: 'alpha' });
    await createFsDriver(home.dir).put('alpha/bank/journal.md', JOURNAL);
    token = (await core.auth.create(owner, { name: 'admin', permissions: 'admin', space_ids: '*' })).token;
    server = await startHttpServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_TOOLS: 'admin' });
  });
  after(async () => {
    await server?.stop();
    await home?.remove();
  });

  it("lands a bank_write of 10,000 section edits whole, answering another client's call meanwhile", async () => {
    const url = (server as HttpServer).url;
    const [heavy, light] = await Promise.all([connect(url, token), connect(url, token)]);
    try {
      const read = (await heavy.callTool({ name: 'bank_read', arguments: { space_id: 'alpha', filename: 'journal.md' } })).structuredContent as {
        version: string;
      };
      const edits = Array.from({ length: 10_000 }, (_, i) => ({ op: 'add', section: 'Journal', title: `D${i}`, content: '-' }));
      const write = heavy
        .callTool(
          { name: 'bank_write', arguments: { space_id: 'alpha', filename: 'journal.md', edits, if_match: read.version, reason: 'a long log' } },
          undefined,
          {
            timeout: 120_000,
          },
        )
        .then((result) => result.structuredContent as { status: string });
      // Sent once the server holds the heavy call (its 10,000 edits take far longer than this wait).
      await new Promise((resolve) => setTimeout(resolve, 150));
      const info = await light.callTool({ name: 'space_info', arguments: { space_id: 'alpha' } });
      assert.equal((info.structuredContent as { status: string }).status, 'ok');
      const written = await write;
      assert.equal(written.status, 'ok', JSON.stringify(written));
      const after = (await light.callTool({ name: 'bank_read', arguments: { space_id: 'alpha', filename: 'journal.md' } })).structuredContent as {
        content: string;
      };
      assert.equal([...after.content.matchAll(/^## D\d+$/gm)].length, 10_000);
    } finally {
      await Promise.all([heavy.close(), light.close()]);
    }
  });
});
