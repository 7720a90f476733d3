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
  it('asks before each attempt, tells each answered one once, and the end of every attempt', async () => {
    const llm = flaky(1);
    const events: string[] = [];
    const calls = createLlmCalls(llm, {
      timeoutMs: 1_000,
      backoffMs: 1,
      meter: {
        begin: async (_request, max) => {
          events.push(`begin ${max}`);
          return {
            answered: async (response) => void events.push(`answered ${response.promptTokens}`),
            ended: async () => void events.push('ended'),
          };
        },
      },
    });
    await calls.chat({ messages: [{ role: 'user', content: 'hi' }] });
    assert.deepEqual(events, ['begin 500', 'ended', 'begin 500', 'answered 10', 'ended']);
    assert.deepEqual(calls.usage, { promptTokens: 10, completionTokens: 2, calls: 2 });
  });

  it('a refusal sends nothing, is not retried and is no call', async () => {
    const llm = flaky(0);
    const refusal = new Error('over the cap');
    const calls = createLlmCalls(llm, { timeoutMs: 1_000, backoffMs: 1, meter: { begin: async () => Promise.reject(refusal) } });
    await assert.rejects(calls.chat({ messages: [{ role: 'user', content: 'hi' }] }), (e) => e === refusal);
    assert.equal(llm.sent, 0);
    assert.equal(calls.usage.calls, 0);
  });
});
