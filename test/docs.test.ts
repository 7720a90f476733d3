/** README documents every tool and every setting: a new one without docs fails the build. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { FIELDS } from '../src/config/settings.js';
import { TOOL_PROFILES } from '../src/mcp/profiles.js';
import { SERVER_INSTRUCTIONS } from '../src/mcp/server.js';
import { allTools } from '../src/mcp/tools/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('lists every MCP tool with its permission', () => {
    for (const tool of allTools) assert.match(readme, new RegExp(`\\| \`${tool.name}\` \\| ${tool.permission} \\|`), tool.name);
  });

  it('lists the tools of each profile (a row names its tools or builds on the rows above it)', () => {
    let above = '';
    for (const [profile, names] of Object.entries(TOOL_PROFILES)) {
      const row = readme.split('\n').find((line) => line.startsWith(`| \`${profile}\``));
      assert.ok(row, profile);
      above += row;
      if (names !== 'all') for (const name of names) assert.ok(above.includes(`\`${name}\``), `${profile}: ${name}`);
    }
  });

  it('gives the server instructions word for word, for clients that do not pass them to the model', () => {
    assert.ok(readme.includes(`\`\`\`text\n${SERVER_INSTRUCTIONS}\n\`\`\``), 'README "Memory workflow for agents" differs from SERVER_INSTRUCTIONS');
  });

  it('documents every environment variable and its aliases', () => {
    for (const field of FIELDS) {
      for (const name of [field.env, ...(field.aliases ?? [])]) assert.ok(readme.includes(`\`${name}\``), name);
    }
  });
});
