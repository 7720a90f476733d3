/**
 * The retention guard of a compaction (compaction/retention-guard.ts): a digest that drops what its
 * section held (a dated line in any date format, a number, a name) while the file has room to keep
 * it is refused (LIVE_MEM_RETENTION=refuse), asked for once more (retry), or let through and recorded
 * (report); what the file had no room for is recorded as let go to meet the budget. The pre-image is
 * kept as for any compaction.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { checkRetained } from '../../../src/core/compaction/retention-guard.js';
import { splitSections } from '../../../src/core/compaction/sections.js';
import { createCore } from '../../../src/core/core.js';
import type { RetentionMode } from '../../../src/core/retention/record.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { compactionRequest, digestOf, entry, PROSE } from '../../helpers/compaction.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../../helpers/scripted-llm.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

const BUDGET = 1200;
/** Entry 3 holds what a lazy digest drops: a line dated in words, an owner and a port. */
const FACTS = '- 8 May 2026: billing export handed to Kowalski, on port 8443';
const progressWith = (count: number): string =>
  `# Progress\n\nThe history of the project.\n\n## History\n\n${Array.from({ length: count }, (_, i) =>
    i === 3 ? `### Entry 3\n\n- 2026-01-04 shipped feature 3\n${FACTS}\n${PROSE.repeat(5)}\n` : entry(i),
  ).join('\n')}`;

const reminded = (messages: Array<{ role: string; content: string }>) =>
  messages.some((m) => m.role === 'user' && m.content.startsWith('Your digests were refused'));

/** Digests every unprotected section down to its heading and ISO-dated lines; one that `listens` keeps the facts once told. */
function lazyDigests(options: { listens: boolean }): Step {
  return {
    dynamic: (messages) => {
      const request = compactionRequest(messages);
      if (!request) throw new Error('not a compaction request');
      const keep = options.listens && reminded(messages);
      const digests = request.sections
        .filter((s) => !s.protected)
        .map((s) => ({ id: s.id, content: keep && s.content.includes(FACTS) ? `${digestOf(s)}\n${FACTS}` : digestOf(s) }));
      return JSON.stringify({ digests });
    },
  };
}

async function setup(steps: Step[], retention: RetentionMode) {
  const server = await startScriptedLlm(steps);
  servers.push(server);
  const storage = createMemoryDriver();
  const core = createCore({
    storage,
    clock: steppingClock('2026-03-01T10:00:00.000Z', 1000),
    llm: server.client(),
    consolidation: { retryBackoffMs: 5, timeoutMs: 5_000 },
    budgets: { fileTokens: BUDGET },
    retention,
  });
  await core.spaces.create(owner, { space_id: 'proj' });
  await storage.put('proj/bank/progress.md', progressWith(20));
  return { core, storage, server };
}

const progress = async (storage: StorageDriver) => (await storage.get('proj/bank/progress.md'))?.body.toString('utf8') ?? '';

async function compactionRecord(storage: StorageDriver): Promise<Record<string, unknown> | undefined> {
  const [key] = (await listKeys(storage, 'proj/history/')).filter((k) => k.endsWith('/record.json'));
  return key ? (JSON.parse((await storage.get(key))?.body.toString() ?? '{}') as Record<string, unknown>) : undefined;
}

const LOST = ['the date "8 May 2026"', 'the name "Kowalski"', 'the number "8443"'];

describe('compaction: the retention guard', () => {
  it('retry (the default): a digest dropping a dated line (its date in words), a name and a number is refused after one more ask; the file is left as it was', async () => {
    const { core, storage, server } = await setup([lazyDigests({ listens: false })], 'retry');
    const before = await progress(storage);
    const result = await core.compaction.compact(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error');
    assert.equal(server.requests.length, 2, 'asked once more, told what it dropped');
    const reminder = server.requests[1]?.messages.find((m) => m.content.startsWith('Your digests were refused'))?.content ?? '';
    assert.match(reminder, /<<<refusal nonce=/);
    for (const lost of LOST) assert.ok(reminder.includes(lost), `${lost} in ${reminder}`);
    assert.match(result.files[0]?.refused ?? '', /refused by the retention guard: the digest of Progress > History > Entry 3 drops/);
    assert.equal(await progress(storage), before);
    assert.equal(await compactionRecord(storage), undefined);
  });

  it('retry: digests that keep the facts once told are committed, the section retained', async () => {
    const { core, storage, server } = await setup([lazyDigests({ listens: true })], 'retry');
    const result = await core.compaction.compact(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 2);
    assert.ok((await progress(storage)).includes(FACTS));
    const record = await compactionRecord(storage);
    const retention = record?.retention as Array<{ path: string[]; status: string }>;
    assert.ok(retention.length > 0 && retention.every((section) => section.status === 'retained'), JSON.stringify(retention));
  });

  it('refuse: refused at once, the file left as it was', async () => {
    const { core, storage, server } = await setup([lazyDigests({ listens: true })], 'refuse');
    const before = await progress(storage);
    const result = await core.compaction.compact(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error');
    assert.equal(server.requests.length, 1);
    for (const lost of LOST) assert.ok(result.message?.includes(lost), result.message);
    assert.equal(await progress(storage), before);
  });

  it('report: committed, what each digest dropped recorded; the pre-image keeps it', async () => {
    const { core, storage, server } = await setup([lazyDigests({ listens: false })], 'report');
    const result = await core.compaction.compact(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 1);
    assert.ok(!(await progress(storage)).includes(FACTS));
    const lost = { filename: 'progress.md', path: ['Progress', 'History', 'Entry 3'], status: 'partly_retained', items: 5 };
    const missing = [
      { kind: 'date', text: '8 May 2026' },
      { kind: 'name', text: 'Kowalski' },
      { kind: 'number', text: '8443' },
    ];
    assert.deepEqual(result.files[0]?.retention, [{ ...lost, missing }]);
    const record = await compactionRecord(storage);
    assert.deepEqual(
      ((record?.retention ?? []) as Array<{ status: string }>).filter((section) => section.status !== 'retained'),
      [{ ...lost, missing }],
    );
    const [preimages] = (await listKeys(storage, 'proj/history/')).filter((k) => k.endsWith('/preimages.json'));
    assert.ok((await storage.get(preimages as string))?.body.toString().includes('Kowalski'));
  });

  it('what the file has no room for is let go to meet the budget, and recorded so', () => {
    const file = splitSections('progress.md', progressWith(20), BUDGET);
    const section = file.sections.find((s) => s.path.at(-1) === 'Entry 3');
    assert.ok(section);
    const digested = [{ section, text: '### Entry 3\n\n- 2026-01-04 shipped feature 3\n' }];
    const target = 900;
    assert.throws(() => checkRetained(file, digested, '# Progress\n', 600, target, 'refuse'), /which the file has room to keep \(600 tokens, target 900\)/);
    const [entryAtTarget] = checkRetained(file, digested, '# Progress\n', 899, target, 'refuse');
    assert.equal(entryAtTarget?.to_meet_budget, true);
    assert.equal(entryAtTarget?.status, 'partly_retained');
  });
});
