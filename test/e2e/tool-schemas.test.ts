/**
 * What tools/list tells a model about each argument, and that the server holds to it: every input
 * property described, note categories as an enum (refused with the valid ones, nothing stored), the
 * admin tools naming a token by `token` with the original server's `token_hash` still accepted.
 * The binary's server (in this process), every tool offered, the SDK client.
 */
import assert from 'node:assert/strict';
import { after, before, describe, it } from 'node:test';
import { CATEGORIES } from '../../src/core/validate.js';
import { inProcessServer } from '../helpers/in-process.js';
import type { TestServer } from '../helpers/mcp-client.js';
import { tempDir } from '../helpers/tmp.js';

type Schema = { type?: string; description?: string; enum?: unknown[]; properties?: Record<string, Schema>; items?: Schema; required?: string[] };

/** `tool.path` of every property of a schema, nested objects and array items included, with its schema. */
function properties(prefix: string, schema: Schema): Array<[string, Schema]> {
  return Object.entries(schema.properties ?? {}).flatMap(
    ([name, property]): Array<[string, Schema]> => [
      [`${prefix}.${name}`, property],
      ...properties(`${prefix}.${name}`, property),
      ...(property.items ? properties(`${prefix}.${name}[]`, property.items) : []),
    ],
  );
}

/**
 * Where a schema says a value may be null: a `type` list, or a union (`anyOf`, `oneOf`) with a null
 * branch. Gemini's schema subset takes neither; a field that may be missing is a plain optional one.
 */
function nullables(path: string, schema: unknown): string[] {
  if (schema === null || typeof schema !== 'object') return [];
  const node = schema as Record<string, unknown>;
  const here =
    Array.isArray(node.type) ||
    node.type === 'null' ||
    node.nullable === true ||
    (['anyOf', 'oneOf'] as const).some((key) => Array.isArray(node[key]) && (node[key] as Array<{ type?: unknown }>).some((branch) => branch?.type === 'null'))
      ? [path]
      : [];
  return [...here, ...Object.entries(node).flatMap(([key, value]) => nullables(`${path}.${key}`, value))];
}

describe('every schema tools/list gives, with every tool served (admin)', () => {
  it('has no nullable type: no type list, no union with null', async () => {
    const home = await tempDir();
    const admin = await inProcessServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_TOOLS: 'admin', LIVE_MEM_LOG_LEVEL: 'warn' });
    try {
      const { tools } = await admin.client.listTools();
      assert.ok(tools.length >= 40, `${tools.length} tools`);
      const found = tools.flatMap((tool) => [...nullables(`${tool.name}.input`, tool.inputSchema), ...nullables(`${tool.name}.output`, tool.outputSchema)]);
      assert.deepEqual(found, []);
    } finally {
      await admin.close();
      await home.remove();
    }
  });
});

describe('tool input schemas, over MCP', () => {
  let home: Awaited<ReturnType<typeof tempDir>>;
  let server: TestServer;
  let tools: Awaited<ReturnType<TestServer['client']['listTools']>>['tools'];
  const schemaOf = (name: string) => tools.find((tool) => tool.name === name)?.inputSchema as Schema;

  before(async () => {
    home = await tempDir();
    server = await inProcessServer({ LIVE_MEM_HOME: home.dir, LIVE_MEM_AGENT: 'tester', LIVE_MEM_TOOLS: 'all', LIVE_MEM_LOG_LEVEL: 'warn' });
    tools = (await server.client.listTools()).tools;
    assert.equal((await server.call('space_create', { space_id: 'alpha' })).status, 'created');
  });
  after(async () => {
    await server?.close();
    await home?.remove();
  });

  it('describes every input property of every tool, nested ones too', () => {
    const all = tools.flatMap((tool) => properties(tool.name, tool.inputSchema as Schema));
    assert.ok(all.length > 80, `${all.length} properties`);
    const undescribed = all.filter(([, schema]) => !schema.description?.trim()).map(([where]) => where);
    assert.deepEqual(undescribed, []);
  });

  it('lists note categories as an enum: the seven to write, and empty (all) besides them to filter', () => {
    assert.deepEqual(schemaOf('live_note').properties?.category?.enum, [...CATEGORIES]);
    assert.deepEqual(schemaOf('live_note').required?.includes('category'), true);
    for (const tool of ['live_read', 'memory_search']) assert.deepEqual(schemaOf(tool).properties?.category?.enum, ['', ...CATEGORIES], tool);
  });

  it('refuses an unknown category over MCP with its status, naming the valid ones, and stores nothing', async () => {
    const calls: Array<[string, Record<string, unknown>]> = [
      ...['thought', '', 'Decision'].map((category): [string, Record<string, unknown>] => ['live_note', { space_id: 'alpha', category, content: 'x' }]),
      ['live_read', { space_id: 'alpha', category: 'thought' }],
      ['memory_search', { space_id: 'alpha', query: 'x', category: 'thought' }],
    ];
    for (const [tool, args] of calls) {
      const result = await server.call(tool, args);
      assert.equal(result.status, 'error', `${tool} ${String(args.category)}`);
      assert.equal(result.code, 'invalid_input');
      const quoted = JSON.stringify(args.category).replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
      assert.match(
        String(result.message),
        new RegExp(`^invalid arguments for ${tool}: unknown category ${quoted}: use one of ${CATEGORIES.join(', ')} at category$`),
      );
      assert.match(String(result.hint), /Fix the argument/);
    }
    assert.equal((await server.call('live_read', { space_id: 'alpha' })).total, 0, 'nothing stored');
  });

  it('a note without a category is told the category is required, with the seven, and stores nothing', async () => {
    const result = await server.call('live_note', { space_id: 'alpha', content: 'x' });
    assert.equal(result.code, 'invalid_input');
    assert.equal(String(result.message), `invalid arguments for live_note: category is required: use one of ${CATEGORIES.join(', ')} at category`);
    assert.doesNotMatch(String(result.message), /undefined/);
    assert.equal((await server.call('live_read', { space_id: 'alpha' })).total, 0, 'nothing stored');
  });

  it('space_info before any consolidation leaves last_consolidation out (a plain optional string, never null)', async () => {
    const info = await server.call('space_info', { space_id: 'alpha' });
    assert.equal(info.status, 'ok');
    assert.equal(info.consolidation_count, 0);
    assert.ok(!('last_consolidation' in info), JSON.stringify(info));
    const schema = tools.find((tool) => tool.name === 'space_info')?.outputSchema as Schema;
    assert.deepEqual(schema.properties?.last_consolidation, { type: 'string' });
  });

  it('space_create says who can change the rules later, rather than that nobody can', () => {
    const description = String(tools.find((tool) => tool.name === 'space_create')?.description);
    assert.doesNotMatch(description, /cannot be changed/);
    assert.match(description, /space_update_rules/);
  });

  it('still takes every category, and an empty filter as all (as the original server did)', async () => {
    for (const category of CATEGORIES) assert.equal((await server.call('live_note', { space_id: 'alpha', category, content: category })).status, 'created');
    assert.equal((await server.call('live_read', { space_id: 'alpha', category: '' })).total, CATEGORIES.length);
    const decisions = await server.call('live_read', { space_id: 'alpha', category: 'decision' });
    assert.deepEqual(
      (decisions.notes as Array<{ content: string }>).map((note) => note.content),
      ['decision'],
    );
    assert.equal((await server.call('memory_search', { space_id: 'alpha', query: 'todo', category: '' })).status, 'ok');
  });

  describe('admin tools name a token by `token`, `token_hash` kept as its alias', () => {
    const stateOf = async (name: string) =>
      ((await server.call('admin_list_tokens')).tokens as Array<{ name: string; state: string; permissions: string[]; hash_prefix: string }>).find(
        (token) => token.name === name,
      );

    before(async () => {
      for (const name of ['ann', 'bob', 'cid', 'dee']) {
        assert.equal((await server.call('admin_create_token', { name, permissions: 'read,write', space_ids: 'alpha' })).status, 'created', name);
      }
    });

    it('lists token (name or hash) and token_hash (the same, the original name), neither required by the schema', () => {
      for (const tool of ['admin_revoke_token', 'admin_update_token', 'admin_delete_token']) {
        const schema = schemaOf(tool);
        assert.match(String(schema.properties?.token?.description), /name or hash prefix/, tool);
        assert.match(String(schema.properties?.token_hash?.description), /token's former name, still accepted/, tool);
        assert.ok(!schema.required?.includes('token') && !schema.required?.includes('token_hash'), tool);
      }
    });

    it('accepts either spelling, a name or a hash prefix, and both when they agree', async () => {
      assert.deepEqual((await stateOf('ann'))?.permissions, ['read', 'write']);
      assert.equal((await server.call('admin_update_token', { token: 'ann', permissions: 'read' })).status, 'ok');
      assert.deepEqual((await stateOf('ann'))?.permissions, ['read']);
      assert.equal((await server.call('admin_update_token', { token_hash: 'ann', permissions: 'read,write' })).status, 'ok');
      assert.deepEqual((await stateOf('ann'))?.permissions, ['read', 'write']);
      assert.equal((await server.call('admin_revoke_token', { token_hash: 'bob' })).state, 'revoked');
      const prefix = String((await stateOf('cid'))?.hash_prefix);
      assert.equal((await server.call('admin_revoke_token', { token: prefix })).state, 'revoked');
      assert.equal((await server.call('admin_revoke_token', { token: 'ann', token_hash: 'ann' })).state, 'revoked');
      // Clients that fill every optional argument send the other one empty.
      assert.equal((await server.call('admin_delete_token', { token: '', token_hash: 'bob' })).status, 'deleted');
      assert.equal((await server.call('admin_delete_token', { token: prefix, token_hash: '' })).status, 'deleted');
      assert.equal(await stateOf('bob'), undefined);
      assert.equal(await stateOf('cid'), undefined);
    });

    it('refuses neither or two different tokens, changing nothing', async () => {
      for (const tool of ['admin_revoke_token', 'admin_update_token', 'admin_delete_token']) {
        const extra = tool === 'admin_update_token' ? { permissions: 'read' } : {};
        const none = await server.call(tool, { ...extra });
        assert.equal(none.status, 'error', tool);
        assert.equal(none.code, 'invalid_input', tool);
        assert.match(String(none.message), /^token is required: the name or hash prefix of the token/, tool);
        const two = await server.call(tool, { token: 'dee', token_hash: 'ann', ...extra });
        assert.equal(two.code, 'invalid_input', tool);
        assert.match(String(two.message), /token "dee" and token_hash "ann" differ: give only token/, tool);
        assert.ok(two.hint, tool);
      }
      const dee = await stateOf('dee');
      assert.equal(dee?.state, 'active');
      assert.deepEqual(dee?.permissions, ['read', 'write']);
      assert.equal((await stateOf('ann'))?.state, 'revoked');
    });
  });
});
