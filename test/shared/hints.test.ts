/**
 * One hint table for both shells (src/shared/hints.ts): every hint worded for MCP (tools the profile
 * offers, confirm=true) and for the CLI (commands, --yes), and the two shells' own error mappers
 * (toolError, describeError) giving the same advice for the same error.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { describeError } from '../../src/cli/error-output.js';
import { toolError } from '../../src/mcp/result.js';
import { allTools } from '../../src/mcp/tools/index.js';
import { LiveMemError, unconfirmed } from '../../src/shared/errors.js';
import { CLI_WORDING, EVERY_TOOL, HINTS, mcpWording, PIN_SPACE, PIN_SPACE_REMOTE, type Situation, type Wording } from '../../src/shared/hints.js';
import { MODEL_FIX, MODEL_FIX_REMOTE } from '../../src/core/model.js';
import { silentLogger } from '../../src/shared/log.js';
import { createCore } from '../../src/core/core.js';
import { createMemoryDriver } from '../../src/storage/memory/memory-driver.js';
import { owner } from '../helpers/core.js';
import { normalised } from '../helpers/hints.js';

const MCP = mcpWording(EVERY_TOOL);
const TOOL_NAMES = new Set(allTools.map((tool) => tool.name));
const toolsNamed = (text: string) => (text.match(/\b[a-z]+(?:_[a-z]+)+\b/g) ?? []).filter((word) => TOOL_NAMES.has(word));

describe('the hint table', () => {
  const situations = Object.keys(HINTS) as Situation[];

  it('covers the errors a caller meets', () => {
    for (const situation of [
      'space_missing',
      'not_found',
      'unconfirmed',
      'no_default_space',
      'conflict',
      'quota_exceeded',
      'storage_error',
      'llm_error',
      'forbidden',
    ] as const)
      assert.ok(situations.includes(situation), situation);
  });

  it('words every hint for both shells: tools and confirm=true over MCP, commands and --yes in the CLI', () => {
    for (const situation of situations) {
      const hint = HINTS[situation] as (w: Wording, about: { space: string }) => string;
      const mcp = hint(MCP, { space: 'ghost' });
      const cli = hint(CLI_WORDING, { space: 'ghost' });
      assert.ok(mcp.trim() && cli.trim(), situation);
      // A step for a person (pinning a client's space) names its command in both shells.
      assert.doesNotMatch(mcp.replace(PIN_SPACE, ''), /`live-mem |--yes/, `${situation} (MCP): ${mcp}`);
      assert.deepEqual(toolsNamed(cli), [], `${situation} (CLI): ${cli}`);
      assert.doesNotMatch(cli, /confirm=true|call again/, `${situation} (CLI): ${cli}`);
      // Over MCP a missing default space first asks for the project argument, which only an agent gives.
      const agentOnly = situation === 'no_default_space' ? mcp.replace(/^Give project, [^,]*, or (.*); or /, 'Give $1, or ') : mcp;
      assert.equal(normalised(agentOnly, MCP), normalised(cli, CLI_WORDING), situation);
    }
    assert.match(String(HINTS.unconfirmed?.(MCP, { space: '' })), /call again with confirm=true only if the user asked for it/);
    assert.match(String(HINTS.storage_error?.(CLI_WORDING, { space: '' })), /check it with `live-mem doctor`/);
  });

  it('names over MCP only the tools a profile offers', () => {
    const agent = mcpWording({ tools: new Set(['live_note', 'live_read', 'space_list']), autoCreateSpaces: false, model: true });
    for (const situation of situations) {
      const text = String(HINTS[situation]?.(agent, { space: 'ghost' }));
      assert.deepEqual(
        toolsNamed(text).filter((name) => !['live_note', 'live_read', 'space_list'].includes(name)),
        [],
        `${situation}: ${text}`,
      );
    }
  });
});

describe('MCP and the CLI give the same advice for the same error', () => {
  const cases: Array<[string, LiveMemError]> = [
    ['a missing space', new LiveMemError('not_found', "space 'ghost' does not exist", { space_id: 'ghost' })],
    ['a missing bank file', new LiveMemError('not_found', "bank file 'x.md' not found")],
    ['a missing bank file, as the core says it', new LiveMemError('not_found', "bank file 'x.md' does not exist in space 'ghost'")],
    ['a missing confirmation', unconfirmed("deleting space 'ghost' erases all its notes and bank")],
    ['a spending cap', new LiveMemError('quota_exceeded', 'the daily cap of 1000 tokens (LIVE_MEM_LLM_DAILY_TOKENS) is reached')],
    ['a held lock', new LiveMemError('conflict', "a consolidation of 'ghost' is running")],
    ['a failed store', new LiveMemError('storage_error', 'disk full')],
    ['a failed model', new LiveMemError('llm_error', 'the model returned no usable plan twice')],
    ['a refusal', new LiveMemError('forbidden', "this token has no access to space 'ghost'")],
    ['a taken name', new LiveMemError('already_exists', "space 'ghost' already exists")],
  ];

  for (const [what, error] of cases) {
    it(what, () => {
      const mcp = toolError(error, silentLogger, 'x').structuredContent as { message: string; hint?: string };
      const cli = describeError(error);
      // What to do, as each shell's user reads it: the message, then the hint when there is one.
      const mcpAdvice = normalised(`${mcp.message} ${mcp.hint ?? ''}`, MCP);
      const cliAdvice = normalised(`${cli.message} ${cli.hint ?? ''}`, CLI_WORDING);
      if (error.code === 'invalid_input') {
        // A usage error's message is the CLI's whole advice (no hint line); it ends as MCP's does.
        assert.equal(cli.hint, undefined);
        assert.ok(mcpAdvice.startsWith(cliAdvice.trim()), `${mcpAdvice} / ${cliAdvice}`);
        assert.match(cli.message, /: run again with --yes$/);
        assert.match(String(mcp.hint), /confirm=true/);
      } else {
        assert.ok(mcp.hint && cli.hint, what);
        assert.equal(mcpAdvice, cliAdvice);
      }
    });
  }

  it('a missing space: create it or check the name, each shell its own way', () => {
    const error = cases[0]?.[1] as LiveMemError;
    assert.equal(
      (toolError(error, silentLogger, 'x').structuredContent as { hint: string }).hint,
      'The space does not exist: create it with space_create (space_id "ghost"), or check the name with space_list.',
    );
    assert.equal(
      describeError(error).hint,
      'The space does not exist: create it with `live-mem space create ghost`, or check the name with `live-mem space list`.',
    );
  });

  it('a mistyped space: the spaces near it and how to list them, never an invitation to create it', () => {
    const error = new LiveMemError('not_found', "space 'alpah' does not exist", { space_id: 'alpah', similar_spaces: ['alpha', 'alpaca'] });
    for (const autoCreateSpaces of [false, true]) {
      const result = toolError(error, silentLogger, 'x', { ...EVERY_TOOL, autoCreateSpaces }).structuredContent as { hint: string; similar_spaces: string[] };
      assert.equal(result.hint, "The space does not exist: did you mean 'alpha' or 'alpaca'? space_list lists the spaces.");
      assert.deepEqual(result.similar_spaces, ['alpha', 'alpaca'], 'the names are in the result too');
    }
    assert.equal(describeError(error).hint, "The space does not exist: did you mean 'alpha' or 'alpaca'? `live-mem space list` lists the spaces.");
  });

  it('a missing bank file: the bank listing, which names files (space_list names none)', async () => {
    const core = createCore({ storage: createMemoryDriver() });
    await core.spaces.create(owner, { space_id: 'proj' });
    const error = (await core.bank.read(owner, { space_id: 'proj', filename: 'nope.md' }).catch((caught: unknown) => caught)) as LiveMemError;
    assert.equal(error.code, 'not_found');
    const hint = (offered = EVERY_TOOL) => (toolError(error, silentLogger, 'bank_read', offered).structuredContent as { hint: string }).hint;
    assert.equal(hint(), "Check the file name: bank_list lists the bank's files.");
    assert.equal(describeError(error).hint, "Check the file name: `live-mem bank list <space_id>` lists the bank's files.");
    // The agent profile has no bank_list: a hint never names a tool the model cannot call.
    assert.equal(hint({ tools: new Set(['bank_read', 'space_list']), autoCreateSpaces: false, model: true }), 'Check the file name and call again.');
  });
});

describe('over HTTP, advice for whoever can act on it', () => {
  const REMOTE = { ...EVERY_TOOL, remote: true };

  it("no hint sends a team server's client to its own entry or to setup", () => {
    for (const situation of Object.keys(HINTS) as Situation[]) {
      const text = String(HINTS[situation]?.(mcpWording(REMOTE), { space: 'ghost' }));
      assert.doesNotMatch(text, /live-mem setup|LIVE_MEM_SPACE|--space|its live-mem entry/, `${situation}: ${text}`);
    }
    assert.match(
      String(HINTS.no_default_space?.(mcpWording(REMOTE), { space: '' })),
      /^Give project, your workspace's git remote \(`git remote get-url origin` prints it\), or space_id \(space_list shows the spaces\); or ask whoever runs this server for a token limited to the project's space/,
    );
    assert.ok(String(HINTS.no_default_space?.(mcpWording(REMOTE), { space: '' })).includes(PIN_SPACE_REMOTE));
    assert.match(String(HINTS.config_error?.(mcpWording(REMOTE), { space: '' })), /^this server is not configured for this: ask whoever runs it/);
  });

  it("a refused consolidation names the server's model, set where it runs; on stdio, this machine's", () => {
    const error = new LiveMemError('config_error', `no model is configured for consolidation: ${MODEL_FIX}`);
    const remote = toolError(error, silentLogger, 'bank_consolidate', REMOTE).structuredContent as { message: string };
    assert.equal(remote.message, `no model is configured for consolidation: ${MODEL_FIX_REMOTE}`);
    assert.doesNotMatch(MODEL_FIX_REMOTE, /every client's live-mem|where live-mem runs/);
    const local = toolError(error, silentLogger, 'bank_consolidate', EVERY_TOOL).structuredContent as { message: string };
    assert.equal(local.message, error.message);
  });
});
