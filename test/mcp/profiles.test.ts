import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { ANONYMOUS } from '../../src/core/auth/auth-service.js';
import { type Caller, ownerCaller, type Permission } from '../../src/core/caller.js';
import { callableBy, PEOPLE_ONLY, PROFILE_NAMES, selectTools, TOOL_PROFILES } from '../../src/mcp/profiles.js';
import { toolError } from '../../src/mcp/result.js';
import { SERVER_INSTRUCTIONS, serverInstructions } from '../../src/mcp/server.js';
import { allTools } from '../../src/mcp/tools/index.js';
import { isLiveMemError, LiveMemError } from '../../src/shared/errors.js';
import { EVERY_TOOL, type Offered } from '../../src/shared/hints.js';
import { silentLogger } from '../../src/shared/log.js';

const names = (spec?: string) => selectTools(spec).tools.map((tool) => tool.name);

describe('tool profiles', () => {
  it('name only existing tools, each profile containing the one before it', () => {
    const all = new Set(allTools.map((tool) => tool.name));
    let previous: string[] = [];
    for (const profile of PROFILE_NAMES) {
      const selected = names(profile);
      for (const name of previous) assert.ok(selected.includes(name), `${profile} lacks ${name}`);
      const listed = TOOL_PROFILES[profile];
      if (Array.isArray(listed)) for (const name of listed) assert.ok(all.has(name), `${profile}: ${name} is no tool`);
      previous = selected;
    }
    assert.deepEqual(PROFILE_NAMES, ['agent', 'standard', 'all', 'admin']);
  });

  it('defaults to every tool but those for people only (corrections, forget, explain), in the order of allTools; admin adds them', () => {
    assert.deepEqual(selectTools(), { profile: 'all', tools: allTools.filter((tool) => !PEOPLE_ONLY.includes(tool.name)) });
    assert.deepEqual(selectTools('admin'), { profile: 'admin', tools: allTools });
    for (const name of PEOPLE_ONLY)
      assert.ok(
        allTools.some((tool) => tool.name === name),
        name,
      );
    assert.deepEqual(
      names('agent'),
      allTools.map((tool) => tool.name).filter((name) => names('agent').includes(name)),
    );
  });

  it('takes tool names, profile names among them, as a custom selection', () => {
    const selection = selectTools('live_read, agent ,live_read,history_list');
    assert.equal(selection.profile, 'custom');
    assert.deepEqual(selection.tools.map((tool) => tool.name).sort(), [...new Set([...names('agent'), 'history_list'])].sort());
    assert.equal(selectTools('live_note').profile, 'custom');
  });

  it('refuses unknown names (prototype keys included) and an empty list, naming them and the profiles', () => {
    for (const [spec, message] of [
      ['agent,live_nope,bogus', /unknown tools in the tools setting .*: live_nope, bogus; use a profile \(agent, standard, all, admin\)/],
      ['constructor', /unknown tool in the tools setting .*: constructor;/],
      [' , ', /the tools setting .* is empty/],
    ] as const) {
      assert.throws(
        () => selectTools(spec),
        (e) => isLiveMemError(e, 'config_error') && message.test(e.message),
      );
    }
  });
});

describe('what a caller is listed', () => {
  const token = (...permissions: Permission[]): Caller => ({ ...ownerCaller('t'), permissions: new Set(permissions), localOwner: false });
  const listed = (caller: Caller) => callableBy(caller, allTools).map((tool) => tool.name);

  it('the tools whose permission the caller holds (admin implies write implies read), the public ones for anyone', () => {
    const byPermission = (...kinds: string[]) => allTools.filter((tool) => kinds.includes(tool.permission)).map((tool) => tool.name);
    assert.deepEqual(listed(token('read')), byPermission('public', 'read'));
    assert.deepEqual(listed(token('read', 'write')), byPermission('public', 'read', 'write'));
    assert.deepEqual(listed(token('admin')), byPermission('public', 'read', 'write', 'admin'));
    assert.deepEqual(
      listed(ownerCaller('me')),
      allTools.map((tool) => tool.name),
    );
    assert.deepEqual(
      callableBy(ANONYMOUS, allTools).map((tool) => tool.name),
      byPermission('public'),
    );
  });

  it('keeps the order it is given, and leaves what it is not given out', () => {
    const agent = selectTools('agent').tools;
    assert.deepEqual(
      callableBy(token('read'), agent).map((tool) => tool.name),
      names('agent').filter((name) => name !== 'live_note' && name !== 'bank_consolidate'),
    );
  });
});

describe('what a profile is told names only its tools', () => {
  const toolNames = new Set(allTools.map((tool) => tool.name));
  const named = (text: string) => [...new Set(text.match(/\b[a-z]+(?:_[a-z]+)+\b/g) ?? [])].filter((word) => toolNames.has(word));
  const hintOf = (error: LiveMemError, offered: Offered) =>
    String((toolError(error, silentLogger, 'x', offered).structuredContent as { hint?: string }).hint ?? '');
  const errors = [
    new LiveMemError('not_found', "space 'ghost' does not exist", { space_id: 'ghost' }),
    new LiveMemError('not_found', "bank file 'x.md' not found"),
    new LiveMemError('storage_error', 'disk full'),
  ];

  for (const spec of ['agent', 'standard', 'all', 'live_note', 'live_read', 'memory_context,live_note']) {
    it(`${spec}: instructions and hints`, () => {
      const tools = new Set(selectTools(spec).tools.map((tool) => tool.name));
      for (const autoCreateSpaces of [true, false]) {
        const offered: Offered = { tools, autoCreateSpaces, model: true };
        const texts = [serverInstructions(offered), ...errors.map((error) => hintOf(error, offered))];
        for (const text of texts)
          assert.deepEqual(
            named(text).filter((name) => !tools.has(name)),
            [],
            `${spec}: ${text}`,
          );
      }
    });
  }

  it('every tool served: the instructions README carries', () => {
    assert.equal(serverInstructions(), SERVER_INSTRUCTIONS);
    assert.match(hintOf(errors[0] as LiveMemError, EVERY_TOOL), /create it with space_create \(space_id "ghost"\), or check the name with space_list/);
    assert.match(hintOf(errors[0] as LiveMemError, { tools: 'all', autoCreateSpaces: true, model: true }), /write a note to it to create it \(live_note/);
  });
});
