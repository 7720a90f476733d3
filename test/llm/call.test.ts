/** The shared call helper's meter: what it may refuse and what it is told. */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { createLlmCalls } from '../../src/llm/call.js';
import { LlmError, type ChatResponse, type LlmClient } from '../../src/llm/types.js';

function flaky(failures: number): LlmClient & { sent: number } {
  const client = {
    label: 'fake',
    contextWindow: 10_000,
    maxOutputTokens: 500,
    sent: 0,
    async chat(): Promise<ChatResponse> {
      client.sent++;
      if (client.sent <= failures) throw new LlmError('scripted 503', true, 503);
      return { text: 'ok', model: 'fake', promptTokens: 10, completionTokens: 2, usageReported: true, truncated: false };
    },
  };
  return client;
}

describe('createLlmCalls meter', () => {
  it('asks before each attempt and tells after each answered one, once', async () => {
    const llm = flaky(1);
    const events: string[] = [];
    const calls = createLlmCalls(llm, {
      timeoutMs: 1_000,
      backoffMs: 1,
      meter: {
        before: async (_request, max) => void events.push(`before ${max}`),
        after: async (_request, response) => void events.push(`after ${response.promptTokens}`),
      },
    });
    await calls.chat({ messages: [{ role: 'user', content: 'hi' }] });
    assert.deepEqual(events, ['before 500', 'before 500', 'after 10']);
    assert.deepEqual(calls.usage, { promptTokens: 10, completionTokens: 2, calls: 2 });
  });

  it('a refusal sends nothing, is not retried and is no call', async () => {
    const llm = flaky(0);
    const refusal = new Error('over the cap');
    const calls = createLlmCalls(llm, { timeoutMs: 1_000, backoffMs: 1, meter: { before: async () => Promise.reject(refusal) } });
    await assert.rejects(calls.chat({ messages: [{ role: 'user', content: 'hi' }] }), (e) => e === refusal);
    assert.equal(llm.sent, 0);
    assert.equal(calls.usage.calls, 0);
  });
});
