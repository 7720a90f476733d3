/** README documents every tool and every setting: a new one without docs fails the build. */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { FIELDS } from '../src/config/fields.js';
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
      if (names === 'all') continue;
      // A profile of nearly every tool is told by what it leaves out ("every tool but …").
      const left = allTools.map((tool) => tool.name).filter((name) => !names.includes(name));
      if (left.length < names.length / 2) for (const name of left) assert.ok(row.includes(`\`${name}\``), `${profile} leaves out ${name}`);
      else for (const name of names) assert.ok(above.includes(`\`${name}\``), `${profile}: ${name}`);
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

/** GitHub's anchor for a heading: lower case, punctuation dropped but `-` and `_`, spaces as hyphens. */
function anchorsOf(markdown: string): Set<string> {
  const prose = markdown.replace(/```[\s\S]*?```/g, '');
  const headings = prose.match(/^#{1,6} .+$/gm) ?? [];
  return new Set(
    headings.map((h) =>
      h
        .replace(/^#+ /, '')
        .trim()
        .toLowerCase()
        .replace(/[^\p{L}\p{N}_\- ]/gu, '')
        .replace(/ /g, '-'),
    ),
  );
}

describe('README and docs/', () => {
  const root = fileURLToPath(new URL('..', import.meta.url));
  const pages = [
    'README.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];

  it('every relative link names a file that exists, and an anchor that its page has', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = readFileSync(join(root, page), 'utf8');
      for (const [, link] of text.matchAll(/\]\(([^)\s]+)\)/g)) {
        const target = String(link);
        if (/^(https?|mailto):/.test(target)) continue;
        const [file, anchor] = target.split('#');
        const path = file ? join(root, dirname(page), file) : join(root, page);
        if (!existsSync(path)) broken.push(`${page}: ${target} (no such file)`);
        else if (anchor && path.endsWith('.md') && !anchorsOf(readFileSync(path, 'utf8')).has(anchor)) broken.push(`${page}: ${target} (no such heading)`);
      }
    }
    assert.deepEqual(broken, []);
  });

  it('user docs never name the design documents (say what is meant instead)', () => {
    for (const page of pages) assert.doesNotMatch(readFileSync(join(root, page), 'utf8'), /\bseed \d{3}\b/i, page);
  });
});
