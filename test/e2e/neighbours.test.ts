/**
 * Neighbour notes over MCP (the binary's server, in this process): memory_search hits carry the notes written
 * around them when asked, and memory_context shows the answer written after a question hit.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { inProcessServer } from '../helpers/in-process.js';
import type { TestServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

describe('neighbour notes over MCP', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let server: TestServer;
  before(async () => {
    home = await tempDir();
    server = await inProcessServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_AGENT: 'tester' });
    await server.call('space_create', { space_id: 'talk' });
    for (const content of [
      'We walked by the lake on Sunday.',
      "You got a new puppy! What's the pup's name?",
      'I named him Buddy, after my grandfather.',
      'That is lovely.',
    ]) {
      await server.call('live_note', { space_id: 'talk', category: 'observation', content });
    }
  });
  after(async () => {
    await server?.close();
    await home?.remove();
  });

  it('memory_search with neighbours gives each note hit the notes before and after it', async () => {
    const { results } = (await server.call('memory_search', { space_id: 'talk', query: 'puppy', neighbours: 1 })) as unknown as {
      results: Array<{ text: string; before: Array<{ ref: string; text: string }>; after: Array<{ ref: string; text: string }> }>;
    };
    assert.equal(results[0]?.text, "You got a new puppy! What's the pup's name?");
    assert.deepEqual(
      [results[0]?.before.map((note) => note.text), results[0]?.after.map((note) => note.text)],
      [['We walked by the lake on Sunday.'], ['I named him Buddy, after my grandfather.']],
    );
    assert.match(results[0]?.after[0]?.ref ?? '', /^\d{8}T\d{6}_tester_observation_\w+\.md$/);
    const plain = (await server.call('memory_search', { space_id: 'talk', query: 'puppy' })) as unknown as { results: Array<Record<string, unknown>> };
    assert.equal('after' in (plain.results[0] ?? {}), false);
    const refused = await server.call('memory_search', { space_id: 'talk', query: 'puppy', neighbours: 9 });
    assert.deepEqual([refused.status, refused.code], ['error', 'invalid_input']);
  });

  it('memory_context shows the answer under the question it follows', async () => {
    const context = await server.call('memory_context', { space_id: 'talk', query: 'puppy', max_tokens: 300 });
    assert.match(String(context.text), /What's the pup's name\?\n {2}- before .*\n {2}- after \d{2}:\d{2} "tester": I named him Buddy/);
    assert.ok((context.tokens as number) <= 300);
  });
});
