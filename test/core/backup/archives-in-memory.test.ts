import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createCore } from '../../../src/core/core.js';
import { isLiveMemError } from '../../../src/shared/errors.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { owner } from '../../helpers/core.js';

/** A memory store whose reads wait while it is held: archives in the making stay in flight. */
function holdableStore(): { storage: StorageDriver; hold(): void; release(): void } {
  const inner = createMemoryDriver();
  let gate: Promise<void> | null = null;
  let open: () => void = () => undefined;
  const storage: StorageDriver = Object.assign(Object.create(inner) as StorageDriver, {
    get: async (key: string) => {
      if (gate) await gate;
      return inner.get(key);
    },
  });
  return {
    storage,
    hold: () => {
      gate = new Promise<void>((resolve) => (open = resolve));
    },
    release: () => {
      gate = null;
      open();
    },
  };
}

describe('archives answered in base64', () => {
  it('prepares at most 2 at once (space_export, backup_download); the next is refused until one is done', async () => {
    const store = holdableStore();
    const core = createCore({ storage: store.storage });
    for (const space_id of ['alpha', 'beta', 'gamma']) {
      await core.spaces.create(owner, { space_id });
      await core.notes.write(owner, { space_id, category: 'observation', content: `a note in ${space_id}` });
    }
    const { backup_id } = await core.backups.create(owner, { space_id: 'alpha' });

    store.hold();
    const running = [core.backups.exportBase64(owner, { space_id: 'alpha' }), core.backups.download(owner, { backup_id })];
    const busy = (error: unknown) =>
      isLiveMemError(error, 'conflict') && /2 archives are already being prepared in memory.*retry in a moment/.test(error.message);
    await assert.rejects(core.backups.exportBase64(owner, { space_id: 'beta' }), busy);
    await assert.rejects(core.backups.download(owner, { backup_id }), busy);
    // Bad input is still bad input, whatever is running.
    await assert.rejects(core.backups.exportBase64(owner, { space_id: '../x' }), (error) => isLiveMemError(error, 'invalid_input'));

    store.release();
    for (const result of await Promise.all(running)) assert.equal(result.status, 'ok');
    const next = await core.backups.exportBase64(owner, { space_id: 'gamma' });
    assert.equal(next.status, 'ok');
    assert.ok(next.archive_size > 0);
  });
});
