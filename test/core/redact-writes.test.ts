/**
 * Secrets never stored, where they would be written: a note (each LIVE_MEM_REDACT mode), a
 * model's consolidation plan and compaction digests, an import; and a backup restored exactly.
 */
import assert from 'node:assert/strict';
import { after, describe, it } from 'node:test';
import { plan, rewrite } from '../../fixtures/llm/scenarios.js';
import { checkDigests, type Digest } from '../../src/core/compaction/guards.js';
import { splitSections } from '../../src/core/compaction/sections.js';
import { createCore } from '../../src/core/core.js';
import type { RedactMode } from '../../src/core/redact/redact.js';
import { isLiveMemError } from '../../src/shared/errors.js';
import { listKeys } from '../../src/storage/list.js';
import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import type { StorageDriver } from '../../src/storage/types.js';
import { digestOf, progressFile } from '../helpers/compaction.js';
import { CATALOGUE } from '../helpers/secret-catalogue.js';
import { owner, steppingClock } from '../helpers/core.js';
import { startScriptedLlm, type ScriptedLlm, type Step } from '../helpers/scripted-llm.js';

const servers: ScriptedLlm[] = [];
after(async () => Promise.all(servers.map((s) => s.close())));

const AWS_ID = ['AKIA', 'IOSFODNN7', 'EXAMPLE'].join('');
const GH = ['ghp_', 'a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8'].join('');

async function coreWith(redact: RedactMode, storage: StorageDriver = createMemoryDriver(), steps?: Step[]) {
  const server = steps ? await startScriptedLlm(steps) : undefined;
  if (server) servers.push(server);
  const core = createCore({
    storage,
    redact,
    clock: steppingClock('2026-02-20T18:00:00.000Z', 1000),
    ...(server ? { llm: server.client() } : {}),
    consolidation: { retryBackoffMs: 5, timeoutMs: 5_000 },
  });
  if (!(await storage.stat('proj/_meta.json'))) await core.spaces.create(owner, { space_id: 'proj' });
  return { core, storage, server };
}

/** Every byte under a prefix, as one string. */
async function allBytes(storage: StorageDriver, prefix: string): Promise<string> {
  const bodies = await Promise.all((await listKeys(storage, prefix)).map(async (key) => (await storage.get(key))?.body.toString('utf8') ?? ''));
  return bodies.join('\n');
}
const liveNotes = async (storage: StorageDriver) => (await listKeys(storage, 'proj/live/')).filter((key) => key.endsWith('.md'));

describe('live_note: secrets never stored', () => {
  const content = `deploy with ${GH} and DB_PASSWORD=hunter2\n<private>the pin is 4711</private>done`;

  it('mask (the default): the bytes stored hold markers, the answer says what was masked, never the secret', async () => {
    const { core, storage } = await coreWith('mask');
    const result = await core.notes.write(owner, { space_id: 'proj', category: 'progress', content });
    assert.deepEqual(result.redacted, [
      { kind: 'github-token', count: 1 },
      { kind: 'password', count: 1 },
    ]);
    assert.equal(result.private_removed, 1);
    assert.ok(!JSON.stringify(result).includes('hunter2') && !JSON.stringify(result).includes(GH));
    const stored = (await storage.get(`proj/live/${result.filename}`))?.body.toString('utf8') ?? '';
    assert.ok(stored.endsWith('deploy with [redacted: github-token] and DB_PASSWORD=[redacted: password]\ndone'), stored);
    assert.ok(!stored.includes('4711') && !stored.includes('private'));
    assert.equal(result.size, Buffer.byteLength(stored));
  });

  it('a note without secrets answers without redacted or private_removed', async () => {
    const { core } = await coreWith('mask');
    const result = await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'the password policy changed' });
    assert.equal('redacted' in result, false);
    assert.equal('private_removed' in result, false);
  });

  it('refuse: invalid_input naming the kinds, nothing stored', async () => {
    const { core, storage } = await coreWith('refuse');
    await assert.rejects(
      core.notes.write(owner, { space_id: 'proj', category: 'progress', content }),
      (error: unknown) =>
        isLiveMemError(error, 'invalid_input') &&
        /github-token ×1, password ×1/.test(error.message) &&
        !error.message.includes('hunter2') &&
        !error.message.includes(GH),
    );
    assert.deepEqual(await liveNotes(storage), []);
  });

  it('off: stored as given, but <private> still never stored', async () => {
    const { core, storage } = await coreWith('off');
    const result = await core.notes.write(owner, { space_id: 'proj', category: 'progress', content });
    assert.equal('redacted' in result, false);
    assert.equal(result.private_removed, 1);
    const stored = await allBytes(storage, 'proj/live/');
    assert.ok(stored.includes(GH) && stored.includes('hunter2'));
    assert.ok(!stored.includes('4711'));
  });

  it('a note that is all <private> is refused: nothing is left to store', async () => {
    const { core, storage } = await coreWith('mask');
    await assert.rejects(
      core.notes.write(owner, { space_id: 'proj', category: 'progress', content: '<private>only this</private>' }),
      /once its <private> text is removed/,
    );
    assert.deepEqual(await liveNotes(storage), []);
  });
});

describe("every capability's input, at the core's boundary", () => {
  it('mask: a space described with a secret is stored masked, and the answer says so', async () => {
    const { core, storage } = await coreWith('mask');
    const result = await core.spaces.update(owner, { space_id: 'proj', description: `shop, key ${GH}`, owner: 'ops' });
    assert.deepEqual(result.redacted, [{ kind: 'github-token', count: 1 }]);
    assert.equal(result.description, 'shop, key [redacted: github-token]');
    assert.ok(!(await allBytes(storage, 'proj/')).includes(GH));
  });

  it('refuse: the capability answers invalid_input (a rejected promise) and nothing is created', async () => {
    const { core, storage } = await coreWith('refuse');
    await assert.rejects(
      core.spaces.create(owner, { space_id: 'other', description: `shop, key ${GH}` }),
      (error: unknown) => isLiveMemError(error, 'invalid_input') && /the description holds what looks like secrets \(github-token ×1\)/.test(error.message),
    );
    assert.deepEqual(await listKeys(storage, 'other/'), []);
  });
});

describe('consolidation: a plan that writes a secret into the bank is refused', () => {
  const leaky = plan([rewrite('techContext.md', `# Tech\n\nDeploy key ${AWS_ID}\n`)]);
  const clean = plan([rewrite('techContext.md', '# Tech\n\nDeploy key: in the vault\n')]);

  it('refused, told the kind (never the secret), asked once more: the corrected plan is committed', async () => {
    const { core, storage, server } = await coreWith('mask', createMemoryDriver(), [{ reply: leaky }, { reply: clean }]);
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'deploy key rotated' });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
    assert.match(result.warnings?.join('\n') ?? '', /refused \(the plan writes what looks like a secret into techContext\.md \(aws-access-key-id ×1\)/);
    const retry = server?.requests[1]?.messages.at(-1)?.content ?? '';
    assert.match(retry, /aws-access-key-id/);
    assert.ok(!retry.includes(AWS_ID));
    assert.equal((await storage.get('proj/bank/techContext.md'))?.body.toString(), '# Tech\n\nDeploy key: in the vault\n');
  });

  it('a secret that reached a note with redaction off never reaches the bank: refused twice, the run ends error, nothing written', async () => {
    const storage = createMemoryDriver();
    const { core: off } = await coreWith('off', storage);
    await off.notes.write(owner, { space_id: 'proj', category: 'progress', content: `deploy key ${AWS_ID}` });
    const { core, server } = await coreWith('mask', storage, [{ reply: leaky }]);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error');
    assert.equal(result.code, 'invalid_input');
    assert.match(result.message ?? '', /aws-access-key-id ×1.*nothing was changed$/);
    assert.ok(!(result.message ?? '').includes(AWS_ID));
    assert.equal(server?.requests.length, 2);
    assert.deepEqual(
      (await listKeys(storage, 'proj/bank/')).filter((key) => key.endsWith('.md')),
      [],
    );
    assert.equal(await storage.get('proj/_synthesis.md'), null);
    assert.equal((await liveNotes(storage)).length, 1);
    assert.deepEqual(await listKeys(storage, 'proj/history/'), []);
  });

  it('a secret already in the bank does not block a plan that keeps it', async () => {
    const storage = createMemoryDriver();
    const { core: off, server: first } = await coreWith('off', storage, [{ reply: leaky }]);
    await off.notes.write(owner, { space_id: 'proj', category: 'progress', content: `deploy key ${AWS_ID}` });
    assert.equal((await off.consolidation.consolidate(owner, { space_id: 'proj' })).status, 'ok');
    assert.equal(first?.requests.length, 1);
    const keeps = plan([rewrite('techContext.md', `# Tech\n\nDeploy key ${AWS_ID}\n\n## Later\n\nmore\n`)]);
    const { core } = await coreWith('mask', storage, [{ reply: keeps }]);
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'more' });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'ok', result.message);
  });

  it('a secret in the synthesis is refused like one in a bank file', async () => {
    const { core } = await coreWith('mask', createMemoryDriver(), [{ reply: plan([], `The team uses password=hunter2 now.`) }]);
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: 'x' });
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error');
    assert.match(result.message ?? '', /into the synthesis \(password ×1\)/);
  });
});

describe('consolidation: a plan copying any format of the catalogue from a note into the bank is refused (issue 39)', () => {
  it('every sample in one plan: refused twice, each kind named (never a secret), nothing written', async () => {
    const storage = createMemoryDriver();
    const leaked = CATALOGUE.map(({ text }) => text).join('\n\n');
    const { core: off } = await coreWith('off', storage);
    await off.notes.write(owner, { space_id: 'proj', category: 'progress', content: leaked });
    const { core, server } = await coreWith('mask', storage, [{ reply: plan([rewrite('techContext.md', `# Tech\n\n${leaked}\n`)]) }]);
    const result = await core.consolidation.consolidate(owner, { space_id: 'proj' });
    assert.equal(result.status, 'error');
    assert.equal(result.code, 'invalid_input');
    for (const { kind, secret } of CATALOGUE) {
      assert.match(result.message ?? '', new RegExp(`\\b${kind} ×`), kind);
      assert.ok(!(result.message ?? '').includes(secret), kind);
    }
    assert.equal(server?.requests.length, 2);
    assert.deepEqual(
      (await listKeys(storage, 'proj/bank/')).filter((key) => key.endsWith('.md')),
      [],
    );
  });
});

const room = (split: ReturnType<typeof splitSections>, digest: Digest) =>
  (split.sections.find((s) => s.id === digest.id)?.text.length ?? 0) - digest.content.length;

describe('compaction: a digest adding a secret is refused by the secret guard', () => {
  it('refused when the digest adds one its section did not hold', () => {
    const split = splitSections('progress.md', progressFile(20), 1200);
    const digests: Digest[] = split.sections
      .filter((s) => !s.protected)
      .map((s) => ({ id: s.id, content: digestOf({ id: s.id, path: s.path, tokens: s.tokens, protected: s.protected, content: s.text }) }));
    assert.ok(checkDigests(split, digests).content.length > 0);
    // The digest with the most room under its section's length, so only the secret guard can refuse it.
    const roomy = digests.reduce((best, d) => (room(split, d) > room(split, best) ? d : best));
    assert.ok(room(split, roomy) > 60);
    const leaking = digests.map((d) => (d === roomy ? { ...d, content: `${d.content}\ntoken=${GH}` } : d));
    assert.throws(() => checkDigests(split, leaking), /refused by the secret guard: .*github-token ×1/);
  });
});

describe('import: secrets masked or refused, backups restored exactly', () => {
  /** A space written with redaction off (a secret in a note and in the bank), exported. */
  async function leakyArchive(): Promise<{ archive: Buffer; storage: StorageDriver; core: ReturnType<typeof createCore> }> {
    const storage = createMemoryDriver();
    const { core } = await coreWith('off', storage);
    await core.notes.write(owner, { space_id: 'proj', category: 'progress', content: `token ${GH}` });
    await storage.put('proj/bank/techContext.md', `# Tech\n\npassword: hunter2\n`);
    const { stream } = await core.backups.exportStream(owner, 'proj');
    const chunks: Buffer[] = [];
    for await (const chunk of stream as AsyncIterable<Buffer>) chunks.push(chunk);
    return { archive: Buffer.concat(chunks), storage, core };
  }
  const open = (archive: Buffer) =>
    async function* () {
      yield archive;
    };

  it('mask: verified as the archive holds it, written masked, reported per file', async () => {
    const { archive } = await leakyArchive();
    const copy = createCore({ storage: createMemoryDriver(), redact: 'mask' });
    const result = await copy.backups.importArchive(owner, open(archive), { as: 'copy' });
    assert.equal(result.checksums_verified, result.files_restored);
    const files = result.redacted_files ?? [];
    assert.deepEqual(
      files.map((f) => [f.path.split('/')[0], f.redacted]),
      [
        ['bank', [{ kind: 'password', count: 1 }]],
        ['live', [{ kind: 'github-token', count: 1 }]],
      ].sort(),
    );
    const stored = await allBytes(copy.context.storage, 'copy/');
    assert.ok(!stored.includes(GH) && !stored.includes('hunter2'));
    assert.ok(stored.includes('password: [redacted: password]') && stored.includes('token [redacted: github-token]'));
  });

  it('refuse: the import is refused naming the file and kind, before anything is written', async () => {
    const { archive } = await leakyArchive();
    const storage = createMemoryDriver();
    const copy = createCore({ storage, redact: 'refuse' });
    await assert.rejects(copy.backups.importArchive(owner, open(archive), { as: 'copy' }), (error: unknown) => {
      return (
        isLiveMemError(error, 'invalid_input') &&
        /the archive's (bank|live)\/\S+ holds what looks like secrets/.test(error.message) &&
        !error.message.includes('hunter2')
      );
    });
    assert.deepEqual(await listKeys(storage, ''), []);
  });

  it('backup restore is exact: the backup was taken from this store', async () => {
    const { storage, core } = await leakyArchive();
    const backup = await core.backups.create(owner, { space_id: 'proj' });
    const before = await allBytes(storage, 'proj/');
    const { core: masking } = await coreWith('mask', storage);
    await masking.spaces.delete(owner, { space_id: 'proj', confirm: true });
    await masking.backups.restore(owner, { backup_id: backup.backup_id, confirm: true });
    assert.equal(await allBytes(storage, 'proj/'), before);
  });
});
