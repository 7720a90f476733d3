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

/** The topics the CHANGELOG groups its entries by (`####` under Added, Changed…): one list, so a reader finds a subject
 * under the same name in every section. */
const CHANGELOG_TOPICS = [
  'Notes and spaces',
  'Clients and projects',
  'MCP server and tools',
  'HTTP and team server',
  'Consolidation and the memory bank',
  'Models, summaries and spend',
  'Recall and search',
  'Search index and speed',
  'Backups, import, export and forget',
  'Storage (fs, S3)',
  'Tokens and permissions',
  'Secrets and untrusted text',
  'CLI',
  'Settings',
  'Web viewer',
  'Doctor and health',
  'Benchmarks',
  'Packaging, install and licences',
  'Documentation',
  'Tests, CI and architecture',
];
/** Keep a Changelog's kinds of change, in the order a release lists them, after the newcomer's Highlights. */
const CHANGELOG_SECTIONS = ['Highlights', 'Added', 'Changed', 'Deprecated', 'Removed', 'Fixed', 'Security', 'Dependencies'];
/** A section with more bullets than this is divided into topics; a bullet longer than this many words is split. */
const CHANGELOG_MAX_UNGROUPED = 8;
const CHANGELOG_MAX_BULLET_WORDS = 120;

/**
 * What keeps the unreleased section findable: known `###` headings in order, every long section divided into
 * `####` topics from the one list (no bullet outside a topic there), and no bullet too long to scan.
 */
function changelogProblems(changelog: string): string[] {
  const unreleased = changelog.split(/^## /m).find((part) => part.startsWith('[') && /^\[[^\]]+\] - unreleased/.test(part));
  if (!unreleased) return ['no "## [x.y.z] - unreleased" section'];
  const problems: string[] = [];
  const sections = unreleased.split(/^### /m).slice(1);
  const names = sections.map((section) => section.split('\n', 1)[0]?.trim() ?? '');
  const order = names.map((name) => CHANGELOG_SECTIONS.indexOf(name));
  for (const [i, name] of names.entries()) if (order[i] === -1) problems.push(`unknown section "### ${name}"`);
  if (order.some((rank, i) => i > 0 && rank !== -1 && rank <= (order[i - 1] ?? -1))) problems.push(`sections out of order: ${names.join(', ')}`);
  if (names[0] !== 'Highlights') problems.push('the unreleased section does not open with "### Highlights"');
  for (const [i, section] of sections.entries()) {
    const name = names[i];
    const [lead = '', ...topics] = section.split(/^#### /m);
    const bullets = section.match(/^- .*(?:\n {2}.*)*/gm) ?? [];
    for (const bullet of bullets) {
      const words = bullet.slice(2).split(/\s+/).filter(Boolean).length;
      if (words > CHANGELOG_MAX_BULLET_WORDS) problems.push(`${name}: a bullet of ${words} words: ${bullet.slice(2, 60)}…`);
    }
    for (const topic of topics) {
      const title = topic.split('\n', 1)[0]?.trim() ?? '';
      if (!CHANGELOG_TOPICS.includes(title)) problems.push(`${name}: topic "#### ${title}" is not in the shared list`);
    }
    const ungrouped = (lead.match(/^- /gm) ?? []).length;
    if (bullets.length > CHANGELOG_MAX_UNGROUPED && ungrouped > 0) problems.push(`${name}: ${bullets.length} bullets, ${ungrouped} outside a topic`);
  }
  return problems;
}

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

describe('CHANGELOG', () => {
  it('groups the unreleased section: Keep a Changelog headings, long sections in topics of one list, short bullets', () => {
    assert.deepEqual(changelogProblems(read('CHANGELOG.md')), []);
  });

  it('the checker finds each kind of breach in a planted changelog', () => {
    const bullets = (n: number): string => Array.from({ length: n }, (_, i) => `- entry ${i}`).join('\n');
    const planted = [
      '## [0.2.0] - unreleased',
      '### Added',
      bullets(9),
      '### Fixed',
      '#### Odds and ends',
      `- ${'word '.repeat(130)}`,
      '### Misc',
      '- x',
      '## [0.1.0] - 2020-01-01',
    ].join('\n');
    assert.deepEqual(changelogProblems(planted), [
      'unknown section "### Misc"',
      'the unreleased section does not open with "### Highlights"',
      'Added: 9 bullets, 9 outside a topic',
      'Fixed: a bullet of 130 words: word word word word word word word word word word word wor…',
      'Fixed: topic "#### Odds and ends" is not in the shared list',
    ]);
    assert.match(changelogProblems(planted.replace('### Added', '### Fixed\n#### CLI\n- a\n### Added')).join('\n'), /out of order/);
    assert.deepEqual(changelogProblems('# Changelog\n## [0.1.0] - 2020-01-01\n'), ['no "## [x.y.z] - unreleased" section']);
  });
});
