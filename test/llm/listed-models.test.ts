/** A model the endpoint lists, by its id or by an alias the endpoint takes without listing it; a partial or empty listing proves nothing. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { checkListed, offersModel } from '../../src/llm/listed-models.js';
import { ModelNotListed } from '../../src/llm/types.js';

describe('a model in an endpoint listing', () => {
  it('by its id, as the alias of a dated snapshot, a -latest name, or an Ollama tag', () => {
    assert.ok(offersModel('gpt-4.1-mini', ['gpt-4.1-mini', 'gpt-4o']));
    assert.ok(offersModel('claude-sonnet-4-5', ['claude-opus-4-1-20250805', 'claude-sonnet-4-5-20250929']));
    assert.ok(offersModel('gpt-4o', ['gpt-4o-2024-08-06']));
    assert.ok(offersModel('claude-3-5-haiku-latest', ['claude-3-5-haiku-20241022']));
    assert.ok(offersModel('qwen2.5', ['qwen2.5:latest', 'llama3:8b']));
  });

  it('not as a prefix of another model', () => {
    assert.equal(offersModel('gpt-4o', ['gpt-4o-mini']), false);
    assert.equal(offersModel('claude-sonnet-4', ['claude-sonnet-4-5-20250929']), false);
    assert.equal(offersModel('qwen2.5', ['qwen2.5:14b']), false);
  });

  it('a complete listing without it: ModelNotListed, naming what is listed and the nearest', () => {
    assert.throws(
      () => checkListed('gtp-4o', { ids: ['gpt-4o', 'gpt-4o-mini'], complete: true }),
      (error) =>
        error instanceof ModelNotListed &&
        error.nearest === 'gpt-4o' &&
        !error.retryable &&
        error.message === "the endpoint does not list the model 'gtp-4o' among its 2 (GET /models: gpt-4o, gpt-4o-mini)",
    );
  });

  it('a listing that has more pages, or none at all, proves nothing', () => {
    checkListed('some-model', { ids: ['other'], complete: false });
    checkListed('some-model', { ids: [], complete: true });
  });
});
