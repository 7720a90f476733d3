/**
 * The import direction of STYLE.md, checked on every run:
 * cli → ui → mcp → core → storage/llm → shared, config beside them; each third-party SDK in one layer.
 * The web viewer's page (ui/web) runs in a browser: no Node module, no server-side layer.
 */
import assert from 'node:assert/strict';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { describe, it } from 'node:test';
import { fileURLToPath } from 'node:url';

const SRC = fileURLToPath(new URL('../src', import.meta.url));

/** For each layer: the local layers it may import. */
const MAY_IMPORT: Record<string, string[]> = {
  shared: ['shared'],
  storage: ['storage', 'shared'],
  llm: ['llm', 'shared'],
  search: ['search', 'shared'],
  config: ['config', 'shared'],
  core: ['core', 'storage', 'llm', 'search', 'shared'],
  mcp: ['mcp', 'core', 'storage', 'llm', 'shared'],
  ui: ['ui', 'mcp', 'core', 'shared'],
  cli: ['cli', 'ui', 'mcp', 'core', 'storage', 'llm', 'search', 'config', 'shared'],
  index: ['core', 'storage', 'shared'],
};

/** Third-party packages confined to one folder. */
const CONFINED: Array<[RegExp, string]> = [
  [/^@aws-sdk\//, 'storage/s3'],
  [/^openai$/, 'llm'],
  [/^@huggingface\/transformers/, 'llm'],
  [/^@modelcontextprotocol\/sdk/, 'mcp'],
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
      const layer = relative.includes('/') ? (relative.split('/')[0] as string) : 'index';
      for (const spec of importsOf(file).filter((s) => s.startsWith('.'))) {
        const target = path.relative(SRC, path.resolve(path.dirname(file), spec));
        const targetLayer = target.split('/')[0] as string;
        if (!(MAY_IMPORT[layer] ?? []).includes(targetLayer)) problems.push(`${relative} imports ${target}`);
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
