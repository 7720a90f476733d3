/**
 * A process leaves a snapshot of the search index when it exits after replaying many new notes
 * (issue 22): a CLI command, and the stdio server when its client goes away. Before, a snapshot
 * needed 500 changes, so every new process replayed up to 499 notes again.
 */
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore, type Core } from '../../src/core/core.js';
import { mapLimit } from '../../src/shared/concurrency.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../src/storage/list.js';
import { BIN, spawnServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('checker');

describe('a snapshot written on exit', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let core: Core;
  let written = 0;
  const env = () => ({ PATH: process.env.PATH ?? '', HOME: home.dir, LIVE_MEM_HOME: home.dir, LIVE_MEM_AGENT: 'shell' });
  const addNotes = (count: number) =>
    mapLimit(
      Array.from({ length: count }, () => written++),
      8,
      (i) => core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `Entry ${i}: the kestrel${i} pipeline` }),
    );
  const snapshots = async () => (await listKeys(createFsDriver(home.dir), 'proj/_index/')).filter((key) => key.endsWith('.snapshot'));

  before(async () => {
    home = await tempDir();
    core = createCore({ storage: createFsDriver(home.dir) });
    await core.spaces.create(owner, { space_id: 'proj' });
    await addNotes(60);
  });
  after(async () => home?.remove());

  it('by a CLI command that replayed 150 new notes', async () => {
    const first = await execa(process.execPath, [BIN, 'recall', 'proj', 'kestrel7'], { env: env(), extendEnv: false });
    assert.equal(first.exitCode, 0, first.stderr);
    const built = await snapshots();
    assert.equal(built.length, 1, 'the first build');
    await addNotes(150);
    const second = await execa(process.execPath, [BIN, 'recall', 'proj', 'kestrel200'], { env: env(), extendEnv: false });
    assert.match(second.stdout, /kestrel200/);
    const now = await snapshots();
    assert.equal(now.length, 2, 'the catch-up was saved before the command exited');
    assert.ok((now[now.length - 1] as string) > (built[0] as string));
  });

  it('by the stdio server when its client goes away', async () => {
    const before = (await snapshots()).sort().pop() as string;
    await addNotes(150);
    const server = await spawnServer(env());
    const found = await server.call('memory_search', { space_id: 'proj', query: 'kestrel350' });
    assert.equal(found.status, 'ok');
    await server.close();
    // The server exits on its own once stdin ends: wait for its last write, however long it takes.
    let newest = before;
    while (newest === before) {
      await sleep(50);
      newest = (await snapshots()).sort().pop() as string;
    }
    assert.ok(newest > before, 'a newer snapshot covers the notes the server replayed');
  });

  it('by a server that only ran live_search: the texts it read, for the next one', async () => {
    const texts = async () => (await listKeys(createFsDriver(home.dir), 'fresh/_index/')).filter((key) => key.endsWith('.live'));
    await core.spaces.create(owner, { space_id: 'fresh' });
    // One at a time: newest first is then the order written.
    await mapLimit(
      Array.from({ length: 150 }, (_, i) => i),
      1,
      (i) => core.notes.write(owner, { space_id: 'fresh', category: 'progress', content: `Entry ${i}: the osprey${i} pipeline` }),
    );
    const server = await spawnServer(env());
    const first = await server.call('live_search', { space_id: 'fresh', query: 'OSPREY149 ' });
    assert.equal(first.total, 1);
    await server.close();
    while ((await texts()).length === 0) await sleep(50);

    const next = await spawnServer(env());
    const found = await next.call('live_search', { space_id: 'fresh', query: 'osprey14', limit: 5 });
    assert.deepEqual(
      (found.notes as Array<{ content: string }>).map((note) => note.content),
      [149, 148, 147, 146, 145].map((i) => `Entry ${i}: the osprey${i} pipeline`),
    );
    assert.equal(found.has_more, true);
    await next.close();
  });
});
