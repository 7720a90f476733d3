/**
 * An admin token limited to space `alpha`, used as the red team used it: over HTTP with the SDK's
 * client against `live-mem serve --http`, and through `live-mem token …` as a process. It cannot mint a
 * `*` token or one for `beta`, widen itself, see or touch the global admin or a broader token; it still
 * creates, revokes and deletes tokens for `alpha`.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { execa } from 'execa';
import { ownerCaller } from '../../src/core/caller.js';
import { createCore } from '../../src/core/core.js';
import { createFsDriver } from '../../src/storage/fs/fs-driver.js';
import { BIN, startHttpServer, type HttpServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

const owner = ownerCaller('owner');
type Tokens = Record<'root' | 'lead' | 'wide' | 'betaReader', string>;

/** A store with spaces alpha and beta, a global admin, an admin of alpha, and broader tokens. */
async function seed(dir: string): Promise<Tokens> {
  const core = createCore({ storage: createFsDriver(dir) });
  for (const space of ['alpha', 'beta']) await core.spaces.create(owner, { space_id: space });
  await core.notes.write(owner, { space_id: 'beta', category: 'todo', content: 'a secret of beta' });
  const make = async (name: string, permissions: string, space_ids: string) => (await core.auth.create(owner, { name, permissions, space_ids })).token;
  return {
    root: await make('root', 'read,write,admin', '*'),
    lead: await make('lead', 'read,write,admin', 'alpha'),
    wide: await make('wide', 'read,write', 'alpha,beta'),
    betaReader: await make('beta-reader', 'read', 'beta'),
  };
}

const ALL = ['beta-reader', 'lead', 'root', 'wide'];

describe('a scoped admin over HTTP (SDK client)', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let server: HttpServer | undefined;
  let url = '';
  let tokens: Tokens;

  const connect = async (token: string) => {
    const client = new Client({ name: 'token-scope-test', version: '0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(url), { requestInit: { headers: { authorization: `Bearer ${token}` } } }));
    return client;
  };
  const call = async (client: Client, name: string, args: Record<string, unknown> = {}) => {
    const result = await client.callTool({ name, arguments: args });
    const structured = result.structuredContent as Record<string, unknown> & { status: string };
    assert.equal(Boolean(result.isError), !['ok', 'created', 'deleted'].includes(structured.status), `${name}: ${JSON.stringify(structured)}`);
    return structured;
  };
  const names = async (client: Client) => ((await call(client, 'admin_list_tokens')).tokens as Array<{ name: string }>).map((t) => t.name).sort();

  before(async () => {
    home = await tempDir();
    tokens = await seed(home.dir);
    server = await startHttpServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_LOG_LEVEL: 'info' });
    url = server.url;
  });
  after(async () => {
    await server?.stop();
    await home?.remove();
  });

  it('cannot reach beta through a token it creates or widens, nor touch a broader token', async () => {
    const lead = await connect(tokens.lead);
    try {
      const attempts: Array<[string, Record<string, unknown>]> = [
        ['admin_create_token', { name: 'escalate', permissions: 'read,write,admin', space_ids: '*' }],
        ['admin_create_token', { name: 'escalate', permissions: 'read', space_ids: 'beta' }],
        ['admin_create_token', { name: 'escalate', permissions: 'read', space_ids: 'alpha,beta' }],
        ['admin_update_token', { token_hash: 'lead', space_ids: '*' }],
        ['admin_update_token', { token_hash: 'lead', add_space_ids: 'beta' }],
        ['admin_update_token', { token_hash: 'root', permissions: 'read' }],
        ['admin_update_token', { token_hash: 'wide', remove_space_ids: 'beta' }],
        ['admin_revoke_token', { token_hash: 'root' }],
        ['admin_revoke_token', { token_hash: 'beta-reader' }],
        ['admin_delete_token', { token_hash: 'root' }],
        ['admin_delete_token', { token_hash: 'wide' }],
      ];
      for (const [tool, args] of attempts) {
        const result = await call(lead, tool, args);
        assert.equal(result.status, 'forbidden', `${tool} ${JSON.stringify(args)}: ${JSON.stringify(result)}`);
      }
      assert.deepEqual(await names(lead), ['lead']);
      const listed = await call(lead, 'admin_list_tokens');
      assert.deepEqual(listed.scope, ['alpha']);
      assert.equal(listed.total, 1);
      assert.equal((await call(lead, 'space_info', { space_id: 'beta' })).status, 'forbidden');
    } finally {
      await lead.close();
    }
    const root = await connect(tokens.root);
    try {
      assert.deepEqual(await names(root), ALL, 'every token still there');
      const list = (await call(root, 'admin_list_tokens')).tokens as Array<{ name: string; state: string; space_ids: unknown }>;
      assert.deepEqual(list.map((t) => [t.name, t.state, t.space_ids]).sort(), [
        ['beta-reader', 'active', ['beta']],
        ['lead', 'active', ['alpha']],
        ['root', 'active', '*'],
        ['wide', 'active', ['alpha', 'beta']],
      ]);
    } finally {
      await root.close();
    }
  });

  it('still creates a read token for alpha, which reads alpha only, and revokes it', async () => {
    const lead = await connect(tokens.lead);
    try {
      const created = await call(lead, 'admin_create_token', { name: 'helper', permissions: 'read', space_ids: 'alpha' });
      assert.equal(created.status, 'created');
      const helper = await connect(created.token as string);
      try {
        assert.equal((await call(helper, 'live_read', { space_id: 'alpha' })).status, 'ok');
        assert.equal((await call(helper, 'live_read', { space_id: 'beta' })).status, 'forbidden');
        assert.deepEqual(await names(lead), ['helper', 'lead']);
        assert.equal((await call(lead, 'admin_revoke_token', { token_hash: 'helper' })).state, 'revoked');
        await assert.rejects(helper.callTool({ name: 'live_read', arguments: { space_id: 'alpha' } }), /403|forbidden/i);
      } finally {
        await helper.close().catch(() => undefined);
      }
      assert.equal((await call(lead, 'admin_delete_token', { token_hash: 'helper' })).status, 'deleted');
    } finally {
      await lead.close();
    }
  });
});

describe('a scoped admin through the CLI (live-mem token …)', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let tokens: Tokens;
  const run = (token: string, args: string[]) =>
    execa(process.execPath, [BIN, 'token', ...args], {
      env: { PATH: process.env.PATH ?? '', LIVE_MEM_HOME: home.dir, LIVE_MEM_AUTH: 'required', LIVE_MEM_TOKEN: token },
      extendEnv: false,
      reject: false,
    });
  const list = async (token: string) => {
    const result = await run(token, ['list', '--json']);
    assert.equal(result.exitCode, 0, result.stderr);
    return JSON.parse(result.stdout) as { tokens: Array<{ name: string; space_ids: unknown; permissions: string[] }>; total: number; scope: unknown };
  };

  before(async () => {
    home = await tempDir();
    tokens = await seed(home.dir);
  });
  after(async () => home?.remove());

  it('refuses every escalation with exit 1 and a line saying why, changing nothing', async () => {
    const attempts: Array<[string[], RegExp]> = [
      [['create', 'escalate', '-p', 'read,write,admin', '-s', '*'], /every space/],
      [['create', 'escalate', '-p', 'read', '-s', 'alpha,beta'], /space 'beta'/],
      [['update', 'lead', '--add-spaces', 'beta'], /its own token/],
      [['update', 'lead', '-s', '*'], /its own token/],
      [['update', 'root', '-p', 'read'], /within spaces alpha/],
      [['update', 'wide', '--remove-spaces', 'beta'], /within spaces alpha/],
      [['revoke', 'root'], /within spaces alpha/],
      [['delete', 'root'], /within spaces alpha/],
      [['delete', 'beta-reader'], /within spaces alpha/],
    ];
    const before = await list(tokens.root);
    for (const [args, why] of attempts) {
      const result = await run(tokens.lead, args);
      assert.equal(result.exitCode, 1, `${args.join(' ')}: ${result.stdout}${result.stderr}`);
      assert.match(result.stderr, why, args.join(' '));
      assert.equal(result.stdout, '');
    }
    assert.deepEqual(await list(tokens.root), before);
  });

  it('lists only the tokens within its spaces, and says so', async () => {
    const json = await list(tokens.lead);
    assert.deepEqual(
      json.tokens.map((t) => t.name),
      ['lead'],
    );
    assert.deepEqual(json.scope, ['alpha']);
    const text = await run(tokens.lead, ['list']);
    assert.equal(text.exitCode, 0, text.stderr);
    assert.doesNotMatch(text.stdout, /root|wide|beta-reader/);
    assert.match(text.stdout, /only the tokens within spaces alpha/);
    assert.deepEqual((await list(tokens.root)).tokens.map((t) => t.name).sort(), ALL);
  });

  it('creates, changes, revokes and deletes a token for its own space', async () => {
    const created = await run(tokens.lead, ['create', 'helper', '-p', 'read', '-s', 'alpha', '--json']);
    assert.equal(created.exitCode, 0, created.stderr);
    assert.match(JSON.parse(created.stdout).token, /^lm_/);
    assert.equal((await run(tokens.lead, ['update', 'helper', '-p', 'read,write'])).exitCode, 0);
    assert.equal((await run(tokens.lead, ['revoke', 'helper'])).exitCode, 0);
    assert.deepEqual(
      (await list(tokens.lead)).tokens.map((t) => t.name),
      ['lead', 'helper'],
    );
    assert.equal((await run(tokens.lead, ['delete', 'helper'])).exitCode, 0);
    assert.deepEqual((await list(tokens.root)).tokens.map((t) => t.name).sort(), ALL);
  });
});
