/**
 * Secrets never stored, by every field and route that stores a caller's text: each field of each tool over
 * MCP (the binary's server, in this process), the CLI's own routes (a note's tags and agent, a space's
 * description and rules file, ingest), and an import of an archive written with LIVE_MEM_REDACT=off that
 * carries them all (rules, meta, history records with their reasons, the notes a consolidation took,
 * pre-images, summaries, the model's bank and synthesis). Each field gets a secret of its own; then every
 * byte of the store — every file, and every file's name — is read back for any of them.
 */
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { readdir, readFile, writeFile } from 'node:fs/promises';
import path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { execa } from 'execa';
import { plan, rewrite } from '../../fixtures/llm/scenarios.js';
import { inProcessServer } from '../helpers/in-process.js';
import { BIN, type TestServer } from '../helpers/mcp-client.js';
import { startScriptedLlm, type ScriptedLlm } from '../helpers/scripted-llm.js';
import { tempDir } from '../helpers/tmp.js';

/** A GitHub token of its own for each field (masked wherever it stands: a sentence, a tag, a name). */
const secrets = new Map<string, string>();
function secret(field: string): string {
  const body = createHash('sha256')
    .update(field)
    .digest('base64')
    .replace(/[^A-Za-z0-9]/g, '');
  const token = ['ghp_', `${body}0000000000000000000000000000000000`.slice(0, 36)].join('');
  secrets.set(field, token);
  return token;
}

/** Every file under `dir`: its path relative to `dir` and its bytes. */
async function filesUnder(dir: string): Promise<Array<{ name: string; text: string }>> {
  const entries = await readdir(dir, { recursive: true, withFileTypes: true });
  const files = entries.filter((entry) => entry.isFile()).map((entry) => path.join(entry.parentPath, entry.name));
  return Promise.all(files.map(async (file) => ({ name: path.relative(dir, file), text: await readFile(file, 'latin1') })));
}

/** The fields whose secret some byte of the store (or a file name) still holds, each with where. */
async function leaks(dir: string, fields: Iterable<string>): Promise<string[]> {
  const files = await filesUnder(dir);
  const found: string[] = [];
  for (const field of fields) {
    const token = secrets.get(field) as string;
    const where = files.filter((file) => file.name.includes(token) || file.text.includes(token)).map((file) => file.name);
    if (where.length > 0) found.push(`${field}: ${where.join(', ')}`);
  }
  return found;
}

/** The scripted model: plans and summaries; with `leaky`, each writes a secret of its own into what it returns. */
function modelSteps(leaky: boolean) {
  return [
    {
      dynamic: (messages: Array<{ role: string; content: string }>) => {
        const system = messages.find((m) => m.role === 'system')?.content ?? '';
        const mark = (field: string) => (leaky ? ` ${secret(field)}` : '');
        if (system.startsWith('You summarise')) {
          return JSON.stringify({
            summary: `The team set up the deploy.${mark('model summary')}`,
            key_findings: [`deploy works${mark('model key finding')}`],
            topics: ['deploy'],
            agents: [],
            files_mentioned: [],
          });
        }
        return plan(
          [rewrite('techContext.md', `# Tech\n\nThe deploy uses a key.${mark('model bank file')}\n`)],
          `The deploy is set up.${mark('model synthesis')}`,
        );
      },
    },
  ];
}

/** Every tool field that stores a caller's text, each given its secret; `expectMasked`: answers say what was kept out. */
async function everyToolField(server: TestServer, expectMasked: boolean): Promise<void> {
  const ok = (result: { status: string }, what: string) =>
    assert.ok(['ok', 'created', 'deleted'].includes(result.status), `${what}: ${JSON.stringify(result)}`);
  ok(
    await server.call('space_create', {
      space_id: 'proj',
      description: `the shop ${secret('space_create description')}`,
      owner: `ops ${secret('space_create owner')}`,
      rules: `# Rules\n\nKeep techContext.md. Deploy token: ${secret('space_create rules')}\n`,
    }),
    'space_create',
  );
  ok(
    await server.call('space_update', {
      space_id: 'proj',
      description: `the shop, v2 ${secret('space_update description')}`,
      owner: `ops team ${secret('space_update owner')}`,
    }),
    'space_update',
  );
  const note = await server.call('live_note', {
    space_id: 'proj',
    category: 'decision',
    content: `deploy with ${secret('live_note content')}`,
    tags: `deploy, ${secret('live_note tags')}`,
    agent: secret('live_note agent'),
  });
  ok(note, 'live_note');
  if (expectMasked) assert.deepEqual(note.redacted, [{ kind: 'github-token', count: 3 }]);
  ok(await server.call('bank_consolidate', { space_id: 'proj' }), 'bank_consolidate');

  const read = await server.call('bank_read', { space_id: 'proj', filename: 'techContext.md' });
  const written = await server.call('bank_write', {
    space_id: 'proj',
    filename: 'techContext.md',
    content: `# Tech\n\n## Deploy\n\nThe key is ${secret('bank_write content')}\n`,
    if_match: read.version,
    reason: `rotated ${secret('bank_write reason')}`,
  });
  ok(written, 'bank_write');
  ok(
    await server.call('bank_write', {
      space_id: 'proj',
      filename: 'techContext.md',
      edits: [{ op: 'add', section: 'Tech', title: `Keys ${secret('bank_write edit title')}`, content: `old key ${secret('bank_write edit content')}` }],
      if_match: written.version,
      reason: `added ${secret('bank_write edits reason')}`,
    }),
    'bank_write edits',
  );
  const rules = await server.call('space_rules', { space_id: 'proj' });
  ok(
    await server.call('space_update_rules', {
      space_id: 'proj',
      rules: `# Rules\n\nKeep techContext.md and ops.md. ${secret('space_update_rules rules')}\n`,
      if_match: rules.version,
      reason: `ops.md too ${secret('space_update_rules reason')}`,
    }),
    'space_update_rules',
  );
  ok(await server.call('bank_write', { space_id: 'proj', filename: 'ops.md', content: '# Ops\n\nnothing yet\n' }), 'bank_write ops.md');
  const deleted = await server.call('bank_delete', { space_id: 'proj', filename: 'ops.md', confirm: true, reason: `gone ${secret('bank_delete reason')}` });
  ok(deleted, 'bank_delete');
  ok(
    await server.call('bank_revert', { space_id: 'proj', revision_id: deleted.revision_id, confirm: true, reason: `back ${secret('bank_revert reason')}` }),
    'bank_revert',
  );
  const doomed = await server.call('live_note', { space_id: 'proj', category: 'observation', content: 'a note to forget' });
  ok(
    await server.call('memory_forget', { space_id: 'proj', refs: [doomed.filename], confirm: true, reason: `leaked ${secret('memory_forget reason')}` }),
    'memory_forget',
  );
  ok(await server.call('live_note', { space_id: 'proj', category: 'progress', content: 'one more note, for the summaries, about the deploy' }), 'live_note');
  ok(
    await server.call('summaries_update', { space_id: 'proj', window_chars: 1000, min_flush_chars: 1, flush_after_ms: 0, batch_delay_ms: 0, concurrency: 1 }),
    'summaries_update',
  );
  ok(await server.call('live_note', { space_id: 'proj', category: 'todo', content: `still live: ${secret('live_note content, kept live')}` }), 'live_note');
  ok(await server.call('backup_create', { space_id: 'proj', description: `before ${secret('backup_create description')}` }), 'backup_create');
  const token = await server.call('admin_create_token', { name: secret('admin_create_token name'), permissions: 'read', space_ids: 'proj' });
  // A token's name is the agent name on its notes: one that looks like a secret is refused (masked, it is no name).
  if (expectMasked) assert.equal(token.code, 'invalid_input', JSON.stringify(token));
}

const base = { PATH: process.env.PATH ?? '', HOME: process.env.HOME ?? '/tmp' };
const cli = (home: string, args: string[], extra: Record<string, string> = {}, input?: string) =>
  execa(process.execPath, [BIN, ...args], { env: { ...base, LIVE_MEM_HOME: home, ...extra }, extendEnv: false, reject: false, ...(input ? { input } : {}) });

describe('secrets never stored, by every field and route', () => {
  let tmp: Awaited<ReturnType<typeof tempDir>>;
  const llms: ScriptedLlm[] = [];
  before(async () => {
    tmp = await tempDir();
  });
  after(async () => {
    await Promise.all(llms.map((llm) => llm.close()));
    await tmp?.remove();
  });
  const withModel = async (leaky: boolean) => {
    const llm = await startScriptedLlm(modelSteps(leaky));
    llms.push(llm);
    return { LIVE_MEM_LLM_BASE_URL: llm.url, LIVE_MEM_LLM_MODEL: 'scripted-model', LIVE_MEM_LLM_API_KEY: 'k', LIVE_MEM_TOOLS: 'admin' };
  };

  it('over MCP: every tool field; then every byte of the store holds none of their secrets', async () => {
    const home = path.join(tmp.dir, 'mcp');
    const server = await inProcessServer({ LIVE_MEM_HOME: home, LIVE_MEM_LOG_LEVEL: 'warn', ...(await withModel(false)) });
    const before = secrets.size;
    try {
      await everyToolField(server, true);
    } finally {
      await server.close();
    }
    assert.ok(secrets.size - before >= 20, 'every field got its secret');
    assert.deepEqual(await leaks(home, secrets.keys()), []);
  });

  it("the CLI's routes: a note's tags and agent, a space's description, owner and rules file, ingest", async () => {
    const home = path.join(tmp.dir, 'cli');
    const rulesFile = path.join(tmp.dir, 'rules.md');
    await writeFile(rulesFile, `# Rules\n\nKeep progress.md. ${secret('cli rules file')}\n`);
    const created = await cli(home, [
      'space',
      'create',
      'proj',
      '-d',
      `shop ${secret('cli space description')}`,
      '--owner',
      secret('cli space owner'),
      '--rules-file',
      rulesFile,
    ]);
    assert.equal(created.exitCode, 0, created.stderr);
    const noted = await cli(home, ['note', 'proj', `deploy ${secret('cli note content')}`, '-t', secret('cli note tags'), '--as', secret('cli note agent')]);
    assert.equal(noted.exitCode, 0, noted.stderr);
    assert.match(noted.stdout, /secrets masked: github-token ×3/);
    const lines = [
      JSON.stringify({
        timestamp: '2024-03-01T10:00:00Z',
        content: `from the chat ${secret('ingest content')}`,
        tags: [secret('ingest tags')],
        agent: secret('ingest agent'),
      }),
    ].join('\n');
    const source = path.join(tmp.dir, 'chat.jsonl');
    await writeFile(source, `${lines}\n`);
    const ingested = await cli(home, ['ingest', 'proj', source]);
    assert.equal(ingested.exitCode, 0, ingested.stderr);
    const fields = [
      'cli rules file',
      'cli space description',
      'cli space owner',
      'cli note content',
      'cli note tags',
      'cli note agent',
      'ingest content',
      'ingest tags',
      'ingest agent',
    ];
    assert.deepEqual(await leaks(home, fields), []);
  });

  it('an import: an archive written with LIVE_MEM_REDACT=off carries every field; imported, the store holds none of them', async () => {
    const source = path.join(tmp.dir, 'source');
    const server = await inProcessServer({ LIVE_MEM_HOME: source, LIVE_MEM_LOG_LEVEL: 'warn', LIVE_MEM_REDACT: 'off', ...(await withModel(true)) });
    try {
      await everyToolField(server, false);
    } finally {
      await server.close();
    }
    const archive = path.join(tmp.dir, 'proj.tar.gz');
    const exported = await cli(source, ['export', 'proj', '-o', archive]);
    assert.equal(exported.exitCode, 0, exported.stderr);
    // The archive does carry them (else this would prove nothing): in its meta, rules, history, summaries, bank.
    const carried = await leaks(path.join(source, 'proj'), secrets.keys());
    for (const field of [
      'space_update description',
      'space_update_rules rules',
      'bank_write reason',
      'memory_forget reason',
      'model summary',
      'model synthesis',
    ]) {
      assert.ok(
        carried.some((line) => line.startsWith(`${field}:`)),
        `the source holds ${field}`,
      );
    }

    const target = path.join(tmp.dir, 'target');
    const imported = await cli(target, ['import', archive, '--as', 'copy', '--json']);
    assert.equal(imported.exitCode, 0, imported.stderr);
    const result = JSON.parse(imported.stdout) as { redacted_files: Array<{ path: string }> };
    const paths = result.redacted_files.map((file) => file.path);
    for (const expected of [
      /^_meta\.json$/,
      /^_rules\.md$/,
      /^_synthesis\.md$/,
      /^bank\//,
      /^live\//,
      /^history\/.*record\.json$/,
      /^history\/.*notes\.json$/,
      /^_summaries\//,
    ]) {
      assert.ok(
        paths.some((p) => expected.test(p)),
        `${expected} reported masked: ${paths.join(', ')}`,
      );
    }
    assert.deepEqual(await leaks(target, secrets.keys()), []);
  });
});
