/** A missing space's error names the spaces near it that its caller may see; the suggestion never leaks another's space. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import type { Caller } from '../../../src/core/caller.js';
import { createCore } from '../../../src/core/core.js';
import { withSimilarSpaces } from '../../../src/core/space/similar-spaces.js';
import { LiveMemError } from '../../../src/shared/errors.js';
import { near } from '../../../src/shared/suggest.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import { owner } from '../../helpers/core.js';

describe('spaces near a missing one', () => {
  it('near: a few letters off, or containing the name whole; nearest first, at most three, never the name itself', () => {
    const known = ['alpha', 'alpaca', 'beta', 'acme-webapp-kgtmie3wqx', 'other-webapp-3kd9x0aa1q', 'webapp-old', 'webapp'];
    assert.deepEqual(near('alpah', known), ['alpha']);
    assert.deepEqual(near('webapp', known), ['webapp-old', 'acme-webapp-kgtmie3wqx', 'other-webapp-3kd9x0aa1q']);
    assert.deepEqual(near('zzz', known), []);
    assert.deepEqual(near('ab', ['ab-x', 'abc']), ['abc'], 'a name of two letters is too short to be looked for inside others');
  });

  it("withSimilarSpaces: the caller's visible spaces only; another error, or none near, unchanged", async () => {
    const core = createCore({ storage: createMemoryDriver() });
    for (const id of ['alpha', 'alpaa', 'beta']) await core.spaces.create(owner, { space_id: id });
    const missing = new LiveMemError('not_found', "space 'alpah' does not exist", { space_id: 'alpah' });
    const all = (await withSimilarSpaces(core.context, owner, missing)) as LiveMemError;
    assert.deepEqual(all.data.similar_spaces, ['alpaa', 'alpha'], 'as near, by name');
    assert.equal(all.message, missing.message);
    const limited: Caller = { ...owner, spaces: new Set(['alpaa', 'alpah']), localOwner: false };
    assert.deepEqual(((await withSimilarSpaces(core.context, limited, missing)) as LiveMemError).data.similar_spaces, ['alpaa']);
    const far = new LiveMemError('not_found', "space 'zzz' does not exist", { space_id: 'zzz' });
    assert.equal(await withSimilarSpaces(core.context, owner, far), far);
    const other = new LiveMemError('conflict', 'busy');
    assert.equal(await withSimilarSpaces(core.context, owner, other), other);
  });
});
