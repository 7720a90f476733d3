/** README documents every tool and every setting: a new one without docs fails the build. */
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { describe, it } from 'node:test';
import { FIELDS } from '../src/config/settings.js';
import { allTools } from '../src/mcp/tools/index.js';

const readme = readFileSync(new URL('../README.md', import.meta.url), 'utf8');

describe('README', () => {
  it('lists every MCP tool with its permission', () => {
    for (const tool of allTools) assert.match(readme, new RegExp(`\\| \`${tool.name}\` \\| ${tool.permission} \\|`), tool.name);
  });

  it('documents every environment variable and its aliases', () => {
    for (const field of FIELDS) {
      for (const name of [field.env, ...(field.aliases ?? [])]) assert.ok(readme.includes(`\`${name}\``), name);
    }
  });
});
