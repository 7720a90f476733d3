/**
 * The documentation says what the code does: every tool, profile and setting is in its reference page
 * (a new one without docs fails the build), README stays short enough to be read to the end, and every
 * relative link leads somewhere. README's quick start is run for real by test/e2e/quick-start.test.ts.
 */
import assert from 'node:assert/strict';
import { existsSync, readdirSync, readFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { describe, it } from 'node:test';
import { FIELDS } from '../src/config/fields.js';
import { TOOL_PROFILES } from '../src/mcp/profiles.js';
import { SERVER_INSTRUCTIONS } from '../src/mcp/server.js';
import { allTools } from '../src/mcp/tools/index.js';

const root = fileURLToPath(new URL('..', import.meta.url));
const read = (page: string): string => readFileSync(join(root, page), 'utf8');
const readme = read('README.md');

/** README's budget: a newcomer reads it to the end (the official MCP memory server's README: 1,217 words). */
const README_MAX_WORDS = 3000;

describe('docs/tools.md', () => {
  const tools = read('docs/tools.md');

  it('lists every MCP tool with its permission', () => {
    for (const tool of allTools) assert.match(tools, new RegExp(`\\| \`${tool.name}\` \\| ${tool.permission} \\|`), tool.name);
  });

  it('lists the tools of each profile (a row names its tools or builds on the rows above it)', () => {
    let above = '';
    for (const [profile, names] of Object.entries(TOOL_PROFILES)) {
      const row = tools.split('\n').find((line) => line.startsWith(`| \`${profile}\``));
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
    assert.ok(tools.includes(`\`\`\`text\n${SERVER_INSTRUCTIONS}\n\`\`\``), 'docs/tools.md "The memory workflow for agents" differs from SERVER_INSTRUCTIONS');
  });
});

describe('docs/configuration.md', () => {
  const configuration = read('docs/configuration.md');
  const rows = configuration.split('\n').filter((line) => line.startsWith('| `'));

  it('has a row for every setting: its variable, its key in live-mem.yaml, and its aliases', () => {
    for (const field of FIELDS) {
      const row = rows.find((line) => line.startsWith(`| \`${field.env}\` | \`${field.file}\` |`));
      assert.ok(row, `${field.env} (${field.file})`);
      for (const alias of field.aliases ?? []) assert.ok(row.includes(`\`${alias}\``), `${field.env}: alias ${alias}`);
    }
  });
});

describe('README', () => {
  it(`is at most ${README_MAX_WORDS.toLocaleString('en')} words (counted as wc -w counts them)`, () => {
    const words = readme.split(/\s+/).filter(Boolean).length;
    assert.ok(words <= README_MAX_WORDS, `README.md has ${words} words`);
  });

  it('links every page of docs/', () => {
    for (const page of readdirSync(join(root, 'docs')).filter((f) => f.endsWith('.md'))) {
      assert.ok(readme.includes(`](docs/${page})`) || readme.includes(`](docs/${page}#`), `README does not link docs/${page}`);
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

describe('README, CONTRIBUTING and docs/', () => {
  const pages = [
    'README.md',
    'CONTRIBUTING.md',
    ...readdirSync(join(root, 'docs'))
      .filter((f) => f.endsWith('.md'))
      .map((f) => `docs/${f}`),
  ];

  it('every relative link names a file that exists, and an anchor that its page has', () => {
    const broken: string[] = [];
    for (const page of pages) {
      const text = read(page);
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
    for (const page of pages) assert.doesNotMatch(read(page), /\bseed \d{3}\b/i, page);
  });
});
