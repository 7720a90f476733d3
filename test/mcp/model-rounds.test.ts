/**
 * The client's own model in MCP 2026-07-28, which has no server-to-client request: bank_consolidate
 * answers `input_required` with the window's prompt embedded as sampling/createMessage, the SDK's v2
 * client runs it through its sampling handler and retries, and the call goes on window by window to
 * its end (src/mcp/model-rounds.ts). In process: the SDK's HTTP entry (createMcpHandler) driven
 * through its fetch function, with the SDK's real v2 client; two entries over one store stand for two
 * replicas behind a load balancer. The plans are written by the scripted obedient model
 * (test/helpers/obedient-llm.ts) from the very prompt the server sent, and meet every guard.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { Client, StreamableHTTPClientTransport } from '@modelcontextprotocol/client';
import { createMcpHandler } from '@modelcontextprotocol/server';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { spaceKeys } from '../../src/core/layout.js';
import { nonceIn } from '../../src/core/prompt-fence.js';
import { MAX_ROUNDS } from '../../src/mcp/model-rounds.js';
import { createMcpServer } from '../../src/mcp/server.js';
import { listKeys } from '../../src/storage/list.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { writePlan } from '../helpers/plan-writer.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('owner');
/** A small model: a window holds a few of the notes below, so that a call needs several rounds. */
const SMALL = { contextWindow: 3_600, maxOutputTokens: 300 };

interface Asked {
  system: string;
  user: string;
}

/** A 2026-07-28 client lending its model: every sampling request it gets is recorded and answered by `answer`. */
function samplingClient(asked: Asked[], answer: (request: Asked) => string): Client {
  const client = new Client({ name: 'rounds', version: '0' }, { capabilities: { sampling: {} }, versionNegotiation: { mode: 'auto' } });
  client.setRequestHandler('sampling/createMessage', async (request) => {
    const first = request.params.messages[0]?.content;
    const seen = { system: request.params.systemPrompt ?? '', user: first && 'text' in first ? String(first.text) : '' };
    asked.push(seen);
    return { model: 'client-model', role: 'assistant', content: { type: 'text', text: answer(seen) } };
  });
  return client;
}

/** A careful model's plan for a sampling request: each note of the window appended to activeContext.md, cited. */
const careful = ({ user }: Asked) => writePlan({ prompt: user });

/** `count` notes in space `proj`, each long enough that a small model's window holds only a few. */
async function seeded(storage: StorageDriver, count: number): Promise<void> {
  const core = createCore({ storage });
  await core.spaces.create(owner, { space_id: 'proj' });
  for (let i = 0; i < count; i++)
    await core.notes.write(owner, {
      space_id: 'proj',
      category: 'decision',
      content: `decision ${i}: the ${'rate limiter keeps its token bucket '.repeat(24)}`,
    });
}

/** Entries over one store, each with its own core (two replicas); the client's requests go to them in turn. */
function replicas(storage: StorageDriver, count: number) {
  const handlers = Array.from({ length: count }, () => {
    // Small bank files too: over their budget they are shown in part, so the bank never crowds the notes out.
    const core = createCore({ storage, budgets: { fileTokens: 300 } });
    const options = { core, version: '0.0.0-test', logger: core.context.logger, resolveCaller: () => owner, samplingLimits: SMALL };
    return createMcpHandler(() => createMcpServer({ ...options, era: 'modern', sampling: true }), { legacy: 'reject' });
  });
  let turn = 0;
  const served: number[] = [];
  const fetch = (url: string | URL, init?: RequestInit) => {
    const at = turn++ % handlers.length;
    served.push(at);
    return (handlers[at] as (typeof handlers)[number]).fetch(new Request(url, init));
  };
  return {
    transport: () => new StreamableHTTPClientTransport(new URL('http://test.local/mcp'), { fetch }),
    served,
    close: () => Promise.all(handlers.map((handler) => handler.close())),
  };
}

const liveCount = async (storage: StorageDriver) => (await listKeys(storage, spaceKeys('proj').live)).filter((key) => key.endsWith('.md')).length;

async function withStore(run: (storage: StorageDriver) => Promise<void>): Promise<void> {
  const home = await tempDir();
  try {
    await run(createFsDriver(home.dir));
  } finally {
    await home.remove();
  }
}

describe("the client's model in 2026-07-28: input_required rounds", () => {
  it('consolidates every note in one call, a round per window, across two replicas', () =>
    withStore(async (storage) => {
      await seeded(storage, 6);
      const entries = replicas(storage, 2);
      const asked: Asked[] = [];
      const client = samplingClient(asked, careful);
      await client.connect(entries.transport());
      try {
        assert.equal(client.getProtocolEra(), 'modern');
        const result = (await client.callTool({ name: 'bank_consolidate', arguments: { space_id: 'proj' } })) as {
          structuredContent: Record<string, unknown>;
          isError?: boolean;
        };
        const out = result.structuredContent;
        assert.equal(result.isError, undefined, JSON.stringify(out));
        assert.equal(out.status, 'ok', JSON.stringify(out));
        assert.equal(out.notes_processed, 6);
        assert.equal(out.notes_remaining, 0);
        const windows = Number(out.windows);
        assert.ok(windows >= 2, `a small model takes the notes in several windows (${windows})`);
        assert.equal(asked.length, windows, 'the model is asked once per window, never twice for one');
        assert.equal((out.consolidations as string[]).length, windows, 'each window committed on its own');
        assert.equal(out.model_rounds, windows + 1);
        assert.ok(new Set(entries.served).size === 2, 'both replicas answered rounds');
        // Each prompt had its own nonce: the answer replayed to the next run was fitted to that run's.
        assert.equal(new Set(asked.map((a) => nonceIn(a.user))).size, asked.length);
        assert.equal(await liveCount(storage), 0);
        const bank = (await client.callTool({ name: 'bank_read', arguments: { space_id: 'proj', filename: 'activeContext.md' } })) as {
          structuredContent: { content: string };
        };
        for (let i = 0; i < 6; i++) assert.match(bank.structuredContent.content, new RegExp(`decision ${i}:`));
        assert.doesNotMatch(bank.structuredContent.content, /nonce=/);
      } finally {
        await client.close();
        await entries.close();
      }
    }));

  it('a plan every guard refuses changes nothing: the notes stay live, the result is an error', () =>
    withStore(async (storage) => {
      await seeded(storage, 2);
      const entries = replicas(storage, 1);
      const asked: Asked[] = [];
      // A model that writes outside the bank, whatever it is told.
      const client = samplingClient(asked, () =>
        JSON.stringify({ files: [{ filename: '../../etc/passwd', action: 'rewrite', content: 'x', sources: [1] }], synthesis: 's' }),
      );
      await client.connect(entries.transport());
      try {
        const result = (await client.callTool({ name: 'bank_consolidate', arguments: { space_id: 'proj' } })) as {
          structuredContent: Record<string, unknown>;
          isError?: boolean;
        };
        assert.equal(result.isError, true);
        assert.equal(result.structuredContent.status, 'error', JSON.stringify(result.structuredContent));
        assert.equal(result.structuredContent.notes_processed, 0);
        assert.ok(asked.length >= 1 && asked.length <= MAX_ROUNDS);
        assert.equal(await liveCount(storage), 2, 'no note left live/');
        assert.deepEqual(
          (await listKeys(storage, spaceKeys('proj').bank)).filter((key) => key.endsWith('.md')),
          [],
          'nothing written to the bank',
        );
      } finally {
        await client.close();
        await entries.close();
      }
    }));

  it(`stops after ${MAX_ROUNDS} rounds with what it did, and says to call again`, () =>
    withStore(async (storage) => {
      await seeded(storage, 24);
      const entries = replicas(storage, 1);
      const asked: Asked[] = [];
      const client = samplingClient(asked, careful);
      await client.connect(entries.transport());
      try {
        const first = (await client.callTool({ name: 'bank_consolidate', arguments: { space_id: 'proj' } })) as { structuredContent: Record<string, unknown> };
        const out = first.structuredContent;
        assert.equal(out.status, 'partial', JSON.stringify(out));
        assert.equal(out.windows, MAX_ROUNDS);
        assert.equal(asked.length, MAX_ROUNDS);
        assert.match(String(out.message), /call bank_consolidate again/);
        const remaining = Number(out.notes_remaining);
        assert.ok(remaining > 0);
        assert.equal(await liveCount(storage), remaining);
        // Called again, it goes on where it stopped.
        const second = (await client.callTool({ name: 'bank_consolidate', arguments: { space_id: 'proj' } })) as { structuredContent: Record<string, unknown> };
        assert.ok(Number(second.structuredContent.notes_processed) > 0);
        assert.ok((await liveCount(storage)) < remaining);
      } finally {
        await client.close();
        await entries.close();
      }
    }));

  it('without sampling, or in the background, the agent gets a work package as before', () =>
    withStore(async (storage) => {
      await seeded(storage, 2);
      const entries = replicas(storage, 1);
      const plain = new Client({ name: 'plain', version: '0' }, { versionNegotiation: { mode: 'auto' } });
      await plain.connect(entries.transport());
      const asked: Asked[] = [];
      const lending = samplingClient(asked, careful);
      await lending.connect(entries.transport());
      try {
        const background = (await lending.callTool({ name: 'bank_consolidate', arguments: { space_id: 'proj', background: true } })) as {
          structuredContent: Record<string, unknown>;
        };
        assert.match(String(background.structuredContent.handle), /^proj:/, 'no job: it would outlive the request its rounds come back on');
        assert.equal(background.structuredContent.job_id, undefined);
        const pkg = (await plain.callTool({ name: 'bank_consolidate', arguments: { space_id: 'proj', handle: 'new' } })) as {
          structuredContent: Record<string, unknown>;
        };
        assert.equal(pkg.structuredContent.job_id, undefined);
        assert.equal(asked.length, 0);
      } finally {
        await plain.close();
        await lending.close();
        await entries.close();
      }
    }));

  it('refuses a requestState it did not give, and changes nothing', () =>
    withStore(async (storage) => {
      await seeded(storage, 2);
      const entries = replicas(storage, 1);
      const client = new Client({ name: 'forger', version: '0' }, { capabilities: { sampling: {} }, versionNegotiation: { mode: 'auto' } });
      await client.connect(entries.transport());
      try {
        for (const forged of ['not base64 json', Buffer.from(JSON.stringify({ v: 1, tool: 'bank_compact', round: 1, answers: {} })).toString('base64url')]) {
          const result = (await client.callTool({ name: 'bank_consolidate', arguments: { space_id: 'proj' }, requestState: forged } as never)) as {
            structuredContent: Record<string, unknown>;
            isError?: boolean;
          };
          assert.equal(result.isError, true);
          assert.match(String(result.structuredContent.message), /requestState/);
        }
        assert.equal(await liveCount(storage), 2);
      } finally {
        await client.close();
        await entries.close();
      }
    }));
});
