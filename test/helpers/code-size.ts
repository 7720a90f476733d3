/**
 * The size rule of STYLE.md ("functions that fit on a screen, files under ~400 lines"), measured on a
 * file's text with the TypeScript parser: a function's lines run from its first to its last character,
 * nested functions included (a factory whose closure holds every method is one long function). Used by
 * test/architecture.test.ts.
 */
import ts from 'typescript';

export const MAX_FILE_LINES = 400;
export const MAX_FUNCTION_LINES = 150;

export interface SizeBreach {
  file: string;
  /** `file` for the whole file, else the function's name (or `<anonymous>`) and its first line. */
  what: string;
  lines: number;
}

/** The lines of a text (a final newline opens no line). */
function lineCount(text: string): number {
  return text.length === 0 ? 0 : text.split('\n').length - (text.endsWith('\n') ? 1 : 0);
}

/** A function-like node's name, as a reader would look it up. */
function nameOf(node: ts.Node): string {
  const named = node as ts.Node & { name?: ts.Node };
  if (named.name && ts.isIdentifier(named.name)) return named.name.text;
  if (ts.isConstructorDeclaration(node)) return 'constructor';
  const parent = node.parent;
  if (parent && (ts.isVariableDeclaration(parent) || ts.isPropertyAssignment(parent)) && ts.isIdentifier(parent.name)) return parent.name.text;
  return '<anonymous>';
}

/** The functions of one file longer than `maxFunction` lines, and the file itself if longer than `maxFile`. */
export function sizeBreaches(file: string, text: string, maxFile = MAX_FILE_LINES, maxFunction = MAX_FUNCTION_LINES): SizeBreach[] {
  const breaches: SizeBreach[] = [];
  const lines = lineCount(text);
  if (lines > maxFile) breaches.push({ file, what: 'file', lines });
  const source = ts.createSourceFile(file, text, ts.ScriptTarget.Latest, true);
  const visit = (node: ts.Node): void => {
    if (ts.isFunctionLike(node) && 'body' in node && node.body) {
      const start = source.getLineAndCharacterOfPosition(node.getStart(source)).line;
      const end = source.getLineAndCharacterOfPosition(node.getEnd()).line;
      if (end - start + 1 > maxFunction) breaches.push({ file, what: `${nameOf(node)} (line ${start + 1})`, lines: end - start + 1 });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return breaches;
}
