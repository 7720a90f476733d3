/** The progress the core reports for long work the CLI displays: export, import, an index build. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { TransferProgress } from '../../src/core/backup/transfer-progress.js';
import type { IndexProgress } from '../../src/core/recall/space-index.js';
import { makeCore, owner } from '../helpers/core.js';

async function spaceWithNotes(count: number) {
  const made = makeCore();
  await made.core.spaces.create(owner, { space_id: 'proj' });
  for (let i = 0; i < count; i++) await made.core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `note number ${i}` });
  return made;
}

describe('progress reports', () => {
  it('export and import count files and bytes; an import says when it verifies and when it writes', async () => {
    const { core } = await spaceWithNotes(5);
    const exported: TransferProgress[] = [];
    const { stream } = await core.backups.exportStream(owner, 'proj', { onProgress: (event) => exported.push(event) });
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    const files = exported.at(-1)?.files_total ?? 0;
    assert.ok(files >= 7, 'notes, meta, rules');
    assert.deepEqual(
      exported.map((event) => event.files_done),
      Array.from({ length: files }, (_, i) => i + 1),
    );
    assert.ok(exported.every((event, i) => event.phase === 'reading' && (i === 0 || event.bytes >= (exported[i - 1]?.bytes ?? 0))));

    const imported: TransferProgress[] = [];
    const archive = Buffer.concat(chunks);
    await core.backups.importArchive(
      owner,
      async function* () {
        yield archive;
      },
      { as: 'copy', onProgress: (event) => imported.push(event) },
    );
    const verifying = imported.filter((event) => event.phase === 'verifying');
    const writing = imported.filter((event) => event.phase === 'writing');
    assert.equal(verifying.length, files + 1, 'every entry, the manifest too');
    assert.ok(
      verifying.every((event) => event.files_total === null),
      'the total is known once the manifest is read',
    );
    assert.deepEqual(
      writing.map((event) => [event.files_done, event.files_total]),
      Array.from({ length: files }, (_, i) => [i + 1, files]),
    );
    assert.equal(imported.indexOf(writing[0] as TransferProgress), verifying.length, 'verified in full before writing');
  });

  it('a first search reports the index build, note by note', async () => {
    const { core } = await spaceWithNotes(4);
    const events: IndexProgress[] = [];
    await core.recall.search(owner, { space_id: 'proj', query: 'note' }, { onProgress: (event) => events.push(event) });
    assert.deepEqual(
      events.map((event) => [event.phase, event.done, event.total]),
      [1, 2, 3, 4].map((done) => ['live', done, 4]),
    );
    events.length = 0;
    await core.recall.search(owner, { space_id: 'proj', query: 'note' }, { onProgress: (event) => events.push(event) });
    assert.deepEqual(events, [], 'nothing new: nothing to report');
  });
});
