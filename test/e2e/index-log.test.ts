/**
 * What `recall` and `context` say on stderr about the search index, as processes: nothing for a
 * small space (it never has a snapshot, building is its normal path), a line when a space big
 * enough to have one had to be read whole because its snapshot was unusable.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { mapLimit } from '../../src/shared/concurrency.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { listKeys } from '../../src/storage/list.js';
import { BIN } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('checker');

describe('CLI: the search index log line', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  // Default log level (info): the line must be absent there, not merely filtered out.
  const run = (args: string[]) =>
    execa(process.execPath, [BIN, ...args], {
      env: { PATH: process.env.PATH ?? '', HOME: home.dir, LIVE_MEM_HOME: home.dir, LIVE_MEM_AGENT: 'shell' },
      extendEnv: false,
      reject: false,
    });

  before(async () => {
    home = await tempDir();
    const core = createCore({ storage: createFsDriver(home.dir) });
    await core.spaces.create(owner, { space_id: 'small' });
    await core.spaces.create(owner, { space_id: 'big' });
    for (const i of [1, 2, 3]) await core.notes.write(owner, { space_id: 'small', category: 'progress', content: `Small note ${i} about the heron` });
    await mapLimit(
      Array.from({ length: 80 }, (_, i) => i),
      8,
      (i) => core.notes.write(owner, { space_id: 'big', category: 'progress', content: `Entry ${i}: the kestrel${i} pipeline` }),
    );
  });
  after(async () => home?.remove());

  it('recall and context on a small space print nothing about the index, each time', async () => {
    for (const args of [
      ['recall', 'small', 'heron'],
      ['context', 'small', 'heron'],
      ['recall', 'small', 'heron'],
      ['context', 'small'],
    ]) {
      const result = await run(args);
      assert.equal(result.exitCode, 0, result.stderr);
      assert.doesNotMatch(result.stderr, /snapshot|search index/, `${args.join(' ')}: ${result.stderr}`);
    }
    assert.deepEqual(await listKeys(createFsDriver(home.dir), 'small/_index/'), [], 'a small space has no snapshot');
  });

  it('a space big enough for a snapshot says it was read whole when its snapshot is missing or unusable', async () => {
    const storage = createFsDriver(home.dir);
    const first = await run(['recall', 'big', 'kestrel7']);
    assert.equal(first.exitCode, 0, first.stderr);
    assert.match(first.stderr, /search index of 'big': no usable snapshot, built it from the store \(80 documents\)/);
    const snapshots = (await listKeys(storage, 'big/_index/')).filter((key) => key.endsWith('.snapshot'));
    assert.equal(snapshots.length, 1, 'the first build wrote a snapshot');

    const loaded = await run(['context', 'big', 'kestrel7']);
    assert.equal(loaded.exitCode, 0, loaded.stderr);
    assert.doesNotMatch(loaded.stderr, /snapshot|search index/, 'a usable snapshot is loaded silently');

    await storage.put(snapshots[0]!, 'damaged');
    const damaged = await run(['recall', 'big', 'kestrel7']);
    assert.equal(damaged.exitCode, 0, damaged.stderr);
    assert.match(damaged.stderr, /search index snapshot \S+ is unusable/);
    assert.match(damaged.stderr, /search index of 'big': no usable snapshot, built it from the store \(80 documents\)/);
  });
});
