/**
 * The import direction of STYLE.md, checked on every run:
 * cli → ui → mcp → core → storage/llm → shared, config beside them; each third-party SDK in one layer.
 * The web viewer's page (ui/web) runs in a browser: no Node module, no server-side layer.
 * Inside, no circle between files, and the rooms in their order (FLOORS): one mechanism, one room,
 * below every feature that uses it (STYLE.md).
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';
import { MAX_FILE_LINES, MAX_FUNCTION_LINES, sizeBreaches } from './helpers/code-size.js';
import { type ImportEdge, importCircles, importEdges, orderBreaches, roomOf, sourceFiles as sourcesUnder } from './helpers/import-graph.js';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

/** For each layer: the local layers it may import. */
const MAY_IMPORT: Record<string, string[]> = {
  shared: ['shared'],
  storage: ['storage', 'shared'],
  llm: ['llm', 'shared'],
  search: ['search', 'shared'],
  config: ['config', 'shared'],
  core: ['core', 'storage', 'llm', 'search', 'shared'],
  http: ['http', 'shared'], // the HTTP front door knows nothing of MCP nor of the core: servers mount on it
  mcp: ['mcp', 'http', 'core', 'storage', 'llm', 'shared'],
  ui: ['ui', 'http', 'mcp', 'core', 'shared'],
  cli: ['cli', 'ui', 'mcp', 'http', 'core', 'storage', 'llm', 'search', 'config', 'shared'],
  index: ['core', 'storage', 'shared'],
};

/** Whether `from` may import `to` (paths under src/): by their layers, a file directly in src/ being `index`. */
const mayImport = (from: string, to: string): boolean =>
  (MAY_IMPORT[from.includes('/') ? (from.split('/')[0] as string) : 'index'] ?? []).includes(to.split('/')[0] as string);

/**
 * The rooms, bottom to top, a floor per line: a room imports only rooms on the floors below its own —
 * never one beside it, never one above. A room is a folder and everything in it (`core/commit/`), the
 * files directly in a folder (`core/*`: the core's base), or one file (`core/core.ts`). A new folder
 * of the core takes its place here before it can hold code. Type-only imports count: `import type`
 * costs nothing at run time, but it ties two designs together all the same.
 */
const FLOORS: string[][] = [
  ['shared/'], // errors, key guards, logging, concurrency: nothing local
  ['storage/', 'llm/', 'search/', 'config/'], // the driver contract and drivers; the chat port, a reply's JSON; the full-text engine; settings
  ['core/markdown/', 'core/redact/', 'core/retention/', 'core/anchors/'], // the Markdown section model; secrets in text; what a rewrite kept of a text; the code a note cites
  ['core/*'], // the base: the context, the caller, the store's layout and names, a backup's manifest, a space's meta, the prompt fence
  ['core/auth/', 'core/derived/', 'core/spend/', 'core/model-output/', 'core/feed/'], // tokens; summaries as stored; spend and caps; the gate of a model's text; the change feed
  ['core/commit/'], // the commit protocol: lease, pending record, the kinds' interface, roll-forward steps, history, section-edit applier
  ['core/jobs.ts', 'core/bank/', 'core/note/'], // background job records; the bank; notes, written and read
  ['core/consolidation/', 'core/compaction/', 'core/revision/', 'core/recall/', 'core/history/', 'core/space/'], // the services
  ['core/backup/', 'core/system/'], // backups (a space claimed as it is restored); doctor and health, over everything
  ['core/forget/'], // a person's forget: finds notes by search, in backups, commits, and rolls forward (backups purged, jobs scrubbed)
  ['core/core.ts'], // the composition
  ['http/'], // the HTTP front door: listening, Host/Origin guards, limits, mounts; no MCP, no core
  ['index.ts', 'mcp/'], // the library's entry; the MCP server
  ['ui/'], // the web viewer
  ['cli/'], // the composition root
];

/**
 * The clients of the commit room (STYLE.md, "One mechanism, one room"): the kinds of commit and the
 * features that take the space's lease. The room knows them only through the interface each registers
 * (core/commit/kind.ts), never by an import; type-only imports count.
 */
const COMMIT_CLIENTS = [
  'core/consolidation/',
  'core/compaction/',
  'core/revision/',
  'core/forget/',
  'core/backup/',
  'core/note/',
  'core/space/',
  'core/system/',
  'core/recall/',
  'core/core.ts',
];

/** Each import from core/commit/ into one of its clients, as `from → to`. */
function commitRoomBreaches(edges: readonly ImportEdge[]): string[] {
  return edges
    .filter(({ from, to }) => from.startsWith('core/commit/') && COMMIT_CLIENTS.some((client) => to.startsWith(client)))
    .map(({ from, to }) => `${from} → ${to}`);
}

/** Third-party packages confined to one folder. */
const CONFINED: Array<[RegExp, string]> = [
  [/^@aws-sdk\//, 'storage/s3'],
  [/^openai$/, 'llm'],
  [/^@huggingface\/transformers/, 'llm'],
  [/^@modelcontextprotocol\//, 'mcp'],
  [/^zod$/, 'mcp'],
  [/^commander$/, 'cli'],
  [/^@orama\/stemmers/, 'search'],
];

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : [],
  );
}

function importsOf(file: string): string[] {
  const text = readFileSync(file, 'utf8');
  return [...text.matchAll(/(?:^|\n)\s*(?:import|export)\s[^'"]*?from\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g)].map(
    (m) => (m[1] ?? m[2]) as string,
  );
}

describe('architecture', () => {
  const files = sourceFiles(SRC);

  it('finds the source', () => assert.ok(files.length > 20));

  it('keeps the import direction between layers', () => {
    const problems: string[] = [];
    for (const file of files) {
      const relative = path.relative(SRC, file);
      for (const spec of importsOf(file).filter((s) => s.startsWith('.'))) {
        const target = path.relative(SRC, path.resolve(path.dirname(file), spec));
        if (!mayImport(relative, target)) problems.push(`${relative} imports ${target}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('confines each SDK to its layer', () => {
    const problems: string[] = [];
    for (const file of files) {
      const relative = path.relative(SRC, file);
      for (const spec of importsOf(file)) {
        for (const [pattern, home] of CONFINED) {
          if (pattern.test(spec) && !relative.startsWith(`${home}/`)) problems.push(`${relative} imports ${spec} (only ${home}/ may)`);
        }
      }
    }
    assert.deepEqual(problems, []);
  });

  it('keeps the browser app free of Node and of the server side (it may use pure core modules such as validate.ts)', () => {
    const problems: string[] = [];
    for (const file of files.filter((f) => path.relative(SRC, f).startsWith('ui/web/'))) {
      const relative = path.relative(SRC, file);
      for (const spec of importsOf(file)) {
        const target = spec.startsWith('.') ? path.relative(SRC, path.resolve(path.dirname(file), spec)) : spec;
        const allowed = spec === 'marked' || target.startsWith('ui/web/') || target === 'core/validate.js' || target.startsWith('shared/');
        if (!allowed) problems.push(`${relative} imports ${spec}`);
      }
    }
    assert.deepEqual(problems, []);
  });

  it('reads Markdown in one room: only core/markdown/ (and the browser page) import marked', () => {
    const readers = files.map((file) => path.relative(SRC, file)).filter((relative) => importsOf(path.join(SRC, relative)).includes('marked'));
    assert.deepEqual(
      readers.filter((relative) => !relative.startsWith('core/markdown/') && !relative.startsWith('ui/web/')),
      [],
    );
  });

  it('has no circle between files (type-only imports included)', () => {
    assert.deepEqual(
      importCircles(importEdges(SRC)).map((circle) => circle.join(' → ')),
      [],
    );
  });

  it('places every file in a room of FLOORS', () => {
    const rooms = FLOORS.flat();
    assert.deepEqual(
      sourcesUnder(SRC).filter((file) => roomOf(file, rooms) === undefined),
      [],
    );
  });

  it('keeps the rooms in their order: each imports only rooms below its floor', () => {
    assert.deepEqual(orderBreaches(importEdges(SRC), FLOORS), []);
  });

  it('keeps http/ free of MCP and of the core (planted imports are refused), and serves the viewer through it', () => {
    const planted = [
      { from: 'http/listen.ts', to: 'mcp/server.ts', typeOnly: false },
      { from: 'http/mount.ts', to: 'core/caller.ts', typeOnly: true },
    ];
    assert.deepEqual(
      planted.filter(({ from, to }) => !mayImport(from, to)).map(({ to }) => to),
      ['mcp/server.ts', 'core/caller.ts'],
    );
    assert.deepEqual(orderBreaches(planted, FLOORS), ['http/listen.ts → mcp/server.ts (http/ → mcp/)']);
    // The viewer is served through http/: no file of ui/ reaches the MCP endpoint's server.
    const uiServing = importEdges(SRC).filter(({ from, to }) => from.startsWith('ui/') && /^mcp\/(http|shared-transport)/.test(to));
    assert.deepEqual(uiServing, []);
    assert.ok(mayImport('ui/server.ts', 'http/listen.ts') && mayImport('mcp/http.ts', 'http/mount.ts'));
  });

  it('keeps the commit room ignorant of its clients: core/commit/ imports none of them (they register at core.ts)', () => {
    assert.deepEqual(commitRoomBreaches(importEdges(SRC)), []);
  });

  it('catches a planted breach of the commit room rule (a synthetic edge list)', () => {
    const planted = [
      { from: 'core/commit/commit.ts', to: 'core/forget/roll-forward.ts', typeOnly: false },
      { from: 'core/commit/record.ts', to: 'core/revision/targets.ts', typeOnly: true },
      { from: 'core/commit/pending.ts', to: 'core/layout.ts', typeOnly: false },
      { from: 'core/forget/commit-kind.ts', to: 'core/commit/kind.ts', typeOnly: true },
    ];
    assert.deepEqual(commitRoomBreaches(planted), ['core/commit/commit.ts → core/forget/roll-forward.ts', 'core/commit/record.ts → core/revision/targets.ts']);
    // The floors say it too: a client stands above the room.
    assert.equal(orderBreaches(planted, FLOORS).length, 2);
  });

  it('keeps consolidation a client of the commit layer: nothing in the core but its composition imports it', () => {
    const importers = importEdges(SRC)
      .filter(({ from, to }) => to.startsWith('core/consolidation/') && !from.startsWith('core/consolidation/'))
      .map(({ from }) => from);
    assert.deepEqual(
      importers.filter((from) => from.startsWith('core/') && from !== 'core/core.ts'),
      [],
    );
  });

  it('never writes to stdout outside the CLI output path', () => {
    const offenders = files.filter((file) => {
      const relative = path.relative(SRC, file);
      return !relative.startsWith('cli/') && /console\.log|process\.stdout\.write/.test(readFileSync(file, 'utf8'));
    });
    assert.deepEqual(
      offenders.map((f) => path.relative(SRC, f)),
      [],
    );
  });
});

/**
 * STYLE.md's sizes: no function over MAX_FUNCTION_LINES, no file over MAX_FILE_LINES (code-size.ts). A
 * file may break them only if listed here, with why: a data table, or a file not split yet — to come
 * off this list, not onto it.
 */
const SIZE_ALLOWED: Record<string, string> = {
  'config/fields.ts': 'a data table: one entry per setting (name, variable, flag, parser, help)',
};

describe('architecture: sizes (functions fit a screen, files under ~400 lines)', () => {
  const breaches = sourcesUnder(SRC).flatMap((file) => sizeBreaches(file, readFileSync(path.join(SRC, file), 'utf8')));

  it(`keeps every function under ${MAX_FUNCTION_LINES} lines and every file under ${MAX_FILE_LINES}, but the files allowed`, () => {
    assert.deepEqual(
      breaches.filter((breach) => SIZE_ALLOWED[breach.file] === undefined).map(({ file, what, lines }) => `${file}: ${what} has ${lines} lines`),
      [],
    );
  });

  it('allows only files that still break a limit (a file split comes off the list)', () => {
    const breaking = new Set(breaches.map((breach) => breach.file));
    assert.deepEqual(
      Object.keys(SIZE_ALLOWED).filter((file) => !breaking.has(file)),
      [],
    );
  });

  it('fails a planted breach: a long function, a long file, a long method in a class and an arrow in an object', () => {
    const body = (n: number) => Array.from({ length: n }, (_, i) => `  const v${i} = ${i};`).join('\n');
    const fn = `export function tooLong() {\n${body(MAX_FUNCTION_LINES - 1)}\n}\n`;
    assert.deepEqual(sizeBreaches('planted.ts', fn), [{ file: 'planted.ts', what: 'tooLong (line 1)', lines: MAX_FUNCTION_LINES + 1 }]);
    assert.deepEqual(sizeBreaches('fits.ts', `export function fits() {\n${body(MAX_FUNCTION_LINES - 2)}\n}\n`), []);
    const method = `class A {\n  run(): void {\n${body(MAX_FUNCTION_LINES)}\n  }\n}\n`;
    assert.deepEqual(
      sizeBreaches('method.ts', method).map((breach) => breach.what),
      ['run (line 2)'],
    );
    const arrow = `export const parts = {\n  build: () => {\n${body(MAX_FUNCTION_LINES)}\n  },\n};\n`;
    assert.deepEqual(
      sizeBreaches('arrow.ts', arrow).map((breach) => breach.what),
      ['build (line 2)'],
    );
    const file = Array.from({ length: MAX_FILE_LINES + 1 }, (_, i) => `export const c${i} = ${i};`).join('\n');
    assert.deepEqual(sizeBreaches('big.ts', file), [{ file: 'big.ts', what: 'file', lines: MAX_FILE_LINES + 1 }]);
  });
});
