/**
 * The retention check of a consolidation (core/retention, consolidation/retention.ts), end to end in
 * the core on a scripted model: a plan that drops a number, a date, a name and a path from one note
 * each, in each mode (report, retry, refuse); a paraphrase that keeps the items; a note split across
 * two sections; a superseded note whose successor lacks an item. What it finds is in the result, the
 * commit record (checked as input) and history's record.json.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { createCore } from '../../../src/core/core.js';
import type { RetentionMode } from '../../../src/core/retention/record.js';
import { listKeys } from '../../../src/storage/list.js';
import { createMemoryDriver } from '../../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../../src/storage/types.js';
import { fencedNotes } from '../../helpers/obedient-llm.js';
import { owner, steppingClock } from '../../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../../helpers/scripted-llm.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

type Message = { role: string; content: string };

/** Four notes, each with one item the lossy model drops: a number, a date, a name, a path. */
const DROPPED = [
  { note: 'The API listens on port 8443 behind nginx.', item: { kind: 'number', text: '8443' } },
  { note: 'The release freeze starts on 2026-03-14 for the mobile team.', item: { kind: 'date', text: '2026-03-14' } },
  { note: 'Invoices above the threshold are approved by Kowalski.', item: { kind: 'name', text: 'Kowalski' } },
  { note: 'Nightly exports are written to /var/log/livemem/export.log by the scheduler.', item: { kind: 'path', text: '/var/log/livemem/export.log' } },
];

const retentionReminders = (messages: Message[]) => messages.filter((m) => m.role === 'user' && m.content.startsWith('Your plan drops facts'));

/**
 * A model writing techContext.md, one section per note, each citing its note: the note's text with
 * `drop(note)` taken out. Told what it dropped, it puts it back if `listens`.
 */
function lossyModel(drop: (note: string) => string, options: { listens: boolean }): Step {
  return {
    dynamic: (messages) => {
      const told = retentionReminders(messages).length > 0 && options.listens;
      const notes = fencedNotes(messages);
      const sections = notes.map((note, i) => `## Note ${i + 1}\n\n${told ? note : note.replace(drop(note), '').replace(/\s+/g, ' ')}\n`);
      return JSON.stringify({
        files: [{ filename: 'techContext.md', action: 'create', content: `# Tech Context\n\n${sections.join('\n')}`, sources: notes.map((_, i) => i + 1) }],
        synthesis: 'The team recorded its setup.',
      });
    },
  };
}

const dropItem = (note: string) => DROPPED.find((d) => d.note === note)?.item.text ?? '';

async function setup(steps: Step[], retention: RetentionMode, notes: readonly string[]) {
  const server = await startScriptedLlm(steps);
  servers.push(server);
  const storage = createMemoryDriver();
  const core = createCore({
    storage,
    clock: steppingClock('2026-04-01T09:00:00.000Z', 1000),
    llm: server.client(),
    consolidation: { retryBackoffMs: 5 },
    retention,
  });
  await core.spaces.create(owner, { space_id: 'proj' });
  const names: string[] = [];
  for (const content of notes) names.push((await core.notes.write(owner, { space_id: 'proj', category: 'observation', content })).filename as string);
  return { core, storage, server, names };
}

interface StoredEntry {
  note: string;
  status: string;
  items: number;
  missing?: Array<{ kind: string; text: string }>;
}

async function historyRetention(storage: StorageDriver): Promise<StoredEntry[] | undefined> {
  const [key] = (await listKeys(storage, 'proj/history/')).filter((k) => k.endsWith('/record.json'));
  return key ? (JSON.parse((await storage.get(key))?.body.toString() ?? '{}') as { retention?: StoredEntry[] }).retention : undefined;
}

/** Each note's entry names the one item the model dropped from it. */
function assertEachDropNamed(entries: readonly StoredEntry[] | undefined, names: readonly string[]): void {
  assert.equal(entries?.length, DROPPED.length);
  for (const [i, { item }] of DROPPED.entries()) {
    const entry: StoredEntry | undefined = entries?.find((e) => e.note === names[i]);
    assert.equal(entry?.status, 'partly_retained', `${names[i]}: ${JSON.stringify(entry)}`);
    assert.deepEqual(entry?.missing, [item], `${names[i]} lost exactly ${item.text}`);
  }
}

describe('consolidation: the retention check', () => {
  it('report: a plan dropping a number, a date, a name and a path is committed, each note flagged with the item named', async () => {
    const { core, storage, server, names } = await setup(
      [lossyModel(dropItem, { listens: false })],
      'report',
      DROPPED.map((d) => d.note),
    );
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 1, 'report never asks again');
    const retention = result.retention as { mode: string; checked: number; retained: number; partly_retained: number; notes: StoredEntry[] };
    assert.equal(retention.mode, 'report');
    assert.equal(retention.checked, 4);
    assert.equal(retention.partly_retained, 4);
    assertEachDropNamed(retention.notes, names);
    assertEachDropNamed(await historyRetention(storage), names);
    assert.match((result.warnings ?? []).join('\n'), /window 1: 4 note\(s\) committed without all their facts in the bank: .*the number "8443"/);
  });

  it('retry: the model is told which facts of which notes are missing, fenced; a model that listens keeps them all', async () => {
    const { core, storage, server } = await setup(
      [lossyModel(dropItem, { listens: true })],
      'retry',
      DROPPED.map((d) => d.note),
    );
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 2);
    const [reminder] = retentionReminders(server.requests[1]?.messages ?? []);
    assert.match(reminder?.content ?? '', /<<<refusal nonce=[\w-]+>>>\n[\s\S]*<<<end refusal nonce=/, 'the reason sent back is fenced: it quotes the notes');
    for (const [i, { item }] of DROPPED.entries()) {
      assert.match(
        reminder?.content ?? '',
        new RegExp(`- note ${i + 1} \\([^)]+\\), integrated into techContext\\.md, which lacks: the ${item.kind} "${item.text.replace(/[/.]/g, '\\$&')}"`),
      );
    }
    assert.deepEqual(
      (await historyRetention(storage))?.map((e) => e.status),
      ['retained', 'retained', 'retained', 'retained'],
    );
    assert.equal((result.retention as { notes: unknown[] }).notes.length, 0);
    assert.match((result.warnings ?? []).join('\n'), /the model's plan leaves out facts of 4 note\(s\) it says it kept .*; it was asked once more/);
  });

  it('retry: a model that drops them again is committed, with what is still missing recorded and said', async () => {
    const { core, storage, server, names } = await setup(
      [lossyModel(dropItem, { listens: false })],
      'retry',
      DROPPED.map((d) => d.note),
    );
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 2, 'one retry, never more');
    assertEachDropNamed(await historyRetention(storage), names);
    assert.match((result.warnings ?? []).join('\n'), /4 note\(s\) committed without all their facts in the bank, after asking the model once more/);
  });

  it('refuse: the window is refused while a note it says it kept is not retained; nothing changes', async () => {
    const { core, storage, server } = await setup(
      [lossyModel(dropItem, { listens: false })],
      'refuse',
      DROPPED.map((d) => d.note),
    );
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error');
    assert.equal(result.code, 'invalid_input');
    assert.equal(server.requests.length, 2, 'asked once more first, like any refused plan');
    for (const { item } of DROPPED) assert.ok(result.message?.includes(`the ${item.kind} "${item.text}"`), result.message);
    assert.match(result.message ?? '', /LIVE_MEM_RETENTION=refuse/);
    assert.equal((await core.spaces.info(owner, { space_id: 'proj' })).live.notes_count, 4, 'the notes stay in live/');
    assert.equal(await storage.get('proj/bank/techContext.md'), null);
    assert.deepEqual(await listKeys(storage, 'proj/history/'), []);
  });

  it('refuse: a model that listens on the retry is committed', async () => {
    const { core, server } = await setup(
      [lossyModel(dropItem, { listens: true })],
      'refuse',
      DROPPED.map((d) => d.note),
    );
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 2);
  });

  it('a paraphrase that keeps the items passes: formats, case, accents, units and inflections differ', async () => {
    const note =
      'Decided: the session store moves to Redis 7.2 on 2026-02-01, capped at 512 MB and 1,000 connections; owner Émilie Durand (see https://wiki.example.com/redis).';
    const paraphrase =
      '# Tech Context\n\n## Sessions\n\n- Sessions: store on REDIS v7.2 from 1 February 2026 (512MB cap, 1000 connection limit), decided with EMILIE DURAND; wiki.example.com/redis/\n';
    const step: Step = {
      dynamic: () =>
        JSON.stringify({ files: [{ filename: 'techContext.md', action: 'create', content: paraphrase, sources: [1] }], synthesis: 'Sessions on Redis.' }),
    };
    const { core, storage, server } = await setup([step], 'retry', [note]);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 1, 'nothing to ask again');
    const [entry] = (await historyRetention(storage)) ?? [];
    assert.equal(entry?.status, 'retained', JSON.stringify(entry));
    assert.ok((entry?.items ?? 0) >= 8, `${entry?.items} items looked for`);
  });

  it('a note split across two sections passes: each cites it, together they hold it', async () => {
    const note = 'The ingest worker retries 3 times with a 250 ms backoff; failures go to the dead-letter queue dlq-ingest.';
    const step: Step = {
      dynamic: () =>
        JSON.stringify({
          files: [
            {
              filename: 'systemPatterns.md',
              action: 'create',
              content: '# System Patterns\n\n## Workers\n\n- placeholder\n\n## Queues\n\n- placeholder\n',
            },
          ],
          synthesis: 'Workers and queues.',
        }),
    };
    const split: Step = {
      dynamic: () =>
        JSON.stringify({
          files: [
            {
              filename: 'systemPatterns.md',
              action: 'edit',
              edits: [
                { op: 'replace', section: 'System Patterns > Workers', content: '- ingest worker: retries 3 times, 250 ms backoff', sources: [1] },
                { op: 'replace', section: 'System Patterns > Queues', content: '- failures land in the dead-letter queue dlq-ingest', sources: [1] },
              ],
            },
          ],
          synthesis: 'Workers and queues.',
        }),
    };
    const { core, storage, server } = await setup([step, split], 'retry', ['The bank starts with two empty sections.']);
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    await core.notes.write(owner, { space_id: 'proj', category: 'observation', content: note });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.equal(server.requests.length, 2, 'one call per consolidation: nothing to ask again');
    const keys = (await listKeys(storage, 'proj/history/')).filter((k) => k.endsWith('/record.json')).sort();
    const record = JSON.parse((await storage.get(keys.at(-1) as string))?.body.toString() ?? '{}') as { retention: StoredEntry[]; dispositions: unknown[] };
    assert.deepEqual(record.dispositions, [
      {
        note: record.retention[0]?.note,
        status: 'integrated',
        into: ['systemPatterns.md#System Patterns > Workers', 'systemPatterns.md#System Patterns > Queues'],
      },
    ]);
    assert.equal(record.retention[0]?.status, 'retained', JSON.stringify(record.retention));
  });

  it('a superseded note whose successor lacks an item is flagged; one whose successor carries it (a value replaced) is not', async () => {
    const older = 'Backups run nightly at 02:00 to s3://bk-prod/nightly with restic.';
    const superseding = (successor: string): Step => ({
      dynamic: () =>
        JSON.stringify({
          files: [{ filename: 'techContext.md', action: 'create', content: `# Tech Context\n\n## Backups\n\n- ${successor}\n`, sources: [2] }],
          notes: [{ note: 1, status: 'superseded', by: 2 }],
          synthesis: 'Backups.',
        }),
    });
    const lacking = 'Backups now run at 03:30.';
    const flagged = await setup([superseding(lacking)], 'report', [older, lacking]);
    assert.equal((await flagged.core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    const [entry] = (await historyRetention(flagged.storage)) ?? [];
    assert.equal(entry?.note, flagged.names[0]);
    assert.equal(entry?.status, 'partly_retained');
    assert.deepEqual(
      entry?.missing?.map((item) => item.text),
      ['s3://bk-prod/nightly', 'nightly', 'restic'],
    );

    const carrying = 'Backups to s3://bk-prod/nightly with restic now run nightly at 03:30.';
    const kept = await setup([superseding(carrying)], 'retry', [older, carrying]);
    assert.equal((await kept.core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    assert.equal(kept.server.requests.length, 1);
    assert.deepEqual(
      (await historyRetention(kept.storage))?.map((e) => e.status),
      ['retained', 'retained'],
      "02:00 replaced by the successor's 03:30 is no loss",
    );
  });

  it('retry: a superseded note whose successor lacks an item is asked about like a gap', async () => {
    const older = 'Backups run nightly at 02:00 to s3://bk-prod/nightly with restic.';
    const step: Step = {
      dynamic: () =>
        JSON.stringify({
          files: [{ filename: 'techContext.md', action: 'create', content: '# Tech Context\n\n## Backups\n\n- Backups now run at 03:30.\n', sources: [2] }],
          notes: [{ note: 1, status: 'superseded', by: 2 }],
          synthesis: 'Backups.',
        }),
    };
    const { core, server } = await setup([step], 'retry', [older, 'Backups now run at 03:30.']);
    assert.equal((await core.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    const [reminder] = retentionReminders(server.requests[1]?.messages ?? []);
    assert.match(reminder?.content ?? '', /- note 1 \([^)]+\), superseded by note 2, which does not carry: the URL "s3:\/\/bk-prod\/nightly"/);
  });
});
