/** A URL as live-mem shows it: no user or password, credential parameters masked, whether it parses or not. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { shownUrl } from '../../src/shared/shown-url.js';

describe('shownUrl', () => {
  it('drops the user and password, up to the last @ of the authority', () => {
    assert.equal(shownUrl('https://user:p@ss@memory.example.com/mcp'), 'https://memory.example.com/mcp');
    assert.equal(shownUrl(new URL('http://tok3n@127.0.0.1:8080/mcp')), 'http://127.0.0.1:8080/mcp');
    assert.equal(shownUrl('https://memory.example.com/mcp'), 'https://memory.example.com/mcp');
  });

  it('masks the values of query parameters that name a credential, and keeps the others', () => {
    assert.equal(shownUrl('https://h.example/mcp?private_token=abc&space=x'), 'https://h.example/mcp?private_token=***&space=x');
    assert.equal(shownUrl('https://h.example/mcp?API_KEY=abc&sig=def'), 'https://h.example/mcp?API_KEY=***&sig=***');
  });

  it('cleans what does not parse the same way', () => {
    assert.equal(shownUrl('http://alice:s3cret@[bad/mcp?token=abc'), 'http://[bad/mcp?token=***');
  });
});
