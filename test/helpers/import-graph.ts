/**
 * The source's own import graph, read from the text of its files (no compiler): which file imports which,
 * the circles between files, and each file's room. Used by test/architecture.test.ts and
 * scripts/import-graph.ts (which prints the same figures for a person).
 *
 * Every import counts, `import type` and dynamic `import()` included: a type-only circle costs nothing at
 * run time, but it still ties two files' designs together, and the next value import along it makes it real.
 */
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';

export type ImportEdge = { from: string; to: string; typeOnly: boolean };

/** Every .ts file under `dir`, as a path relative to it. */
export function sourceFiles(dir: string, under = ''): string[] {
  return readdirSync(path.join(dir, under), { withFileTypes: true }).flatMap((entry) => {
    const relative = under === '' ? entry.name : `${under}/${entry.name}`;
    return entry.isDirectory() ? sourceFiles(dir, relative) : entry.name.endsWith('.ts') ? [relative] : [];
  });
}

/** The module specifiers a file's text imports or re-exports, and whether each is `import type`/`export type`. */
export function importsOf(text: string): Array<{ spec: string; typeOnly: boolean }> {
  const pattern = /(?:^|\n)\s*(import|export)\s+(type\s)?[^'"]*?from\s+['"]([^'"]+)['"]|(?:^|\n)\s*import\s+['"]([^'"]+)['"]|import\(\s*['"]([^'"]+)['"]\s*\)/g;
  return [...text.matchAll(pattern)].map((m) => ({ spec: (m[3] ?? m[4] ?? m[5]) as string, typeOnly: m[2] !== undefined }));
}

/** The local imports between the files under `root` (paths relative to it, `.ts`). */
export function importEdges(root: string): ImportEdge[] {
  const files = new Set(sourceFiles(root));
  const edges: ImportEdge[] = [];
  for (const file of files) {
    for (const { spec, typeOnly } of importsOf(readFileSync(path.join(root, file), 'utf8'))) {
      if (!spec.startsWith('.')) continue;
      const to = path.posix.join(path.posix.dirname(file), spec).replace(/\.js$/, '.ts');
      if (files.has(to)) edges.push({ from: file, to, typeOnly });
    }
  }
  return edges;
}

/**
 * The circles: each group of files that reach one another through imports (a strongly connected component of
 * two files or more, or a file importing itself), given as one shortest circle through its first file.
 */
export function importCircles(edges: ImportEdge[]): string[][] {
  const next = new Map<string, string[]>();
  for (const { from, to } of edges) next.set(from, [...(next.get(from) ?? []), to]);
  const groups = stronglyConnected([...new Set(edges.flatMap((e) => [e.from, e.to]))].sort(), next);
  return groups
    .filter((group) => group.length > 1 || (next.get(group[0] as string) ?? []).includes(group[0] as string))
    .map((group) => shortestCircle(group.sort()[0] as string, new Set(group), next));
}

function stronglyConnected(nodes: string[], next: Map<string, string[]>): string[][] {
  // Tarjan's algorithm, iterative so a long chain cannot overflow the stack.
  const index = new Map<string, number>();
  const low = new Map<string, number>();
  const onStack = new Set<string>();
  const stack: string[] = [];
  const groups: string[][] = [];
  let counter = 0;
  for (const start of nodes) {
    if (index.has(start)) continue;
    const work: Array<{ node: string; child: number }> = [{ node: start, child: 0 }];
    index.set(start, counter);
    low.set(start, counter++);
    stack.push(start);
    onStack.add(start);
    while (work.length > 0) {
      const frame = work[work.length - 1] as { node: string; child: number };
      const children = next.get(frame.node) ?? [];
      if (frame.child < children.length) {
        const child = children[frame.child++] as string;
        if (!index.has(child)) {
          index.set(child, counter);
          low.set(child, counter++);
          stack.push(child);
          onStack.add(child);
          work.push({ node: child, child: 0 });
        } else if (onStack.has(child)) low.set(frame.node, Math.min(low.get(frame.node) as number, index.get(child) as number));
        continue;
      }
      work.pop();
      const parent = work[work.length - 1];
      if (parent) low.set(parent.node, Math.min(low.get(parent.node) as number, low.get(frame.node) as number));
      if (low.get(frame.node) === index.get(frame.node)) {
        const group: string[] = [];
        let member: string;
        do {
          member = stack.pop() as string;
          onStack.delete(member);
          group.push(member);
        } while (member !== frame.node);
        groups.push(group);
      }
    }
  }
  return groups;
}

function shortestCircle(start: string, within: Set<string>, next: Map<string, string[]>): string[] {
  const cameFrom = new Map<string, string>();
  const queue = [start];
  for (let i = 0; i < queue.length; i++) {
    const node = queue[i] as string;
    for (const child of next.get(node) ?? []) {
      if (!within.has(child)) continue;
      if (child === start) {
        const circle = [start];
        for (let back = node; back !== start; back = cameFrom.get(back) as string) circle.splice(1, 0, back);
        return [...circle, start];
      }
      if (!cameFrom.has(child)) {
        cameFrom.set(child, node);
        queue.push(child);
      }
    }
  }
  return [start, start];
}

/**
 * The room of a file: the most specific of `rooms` that holds it — the file itself (`core/core.ts`), the
 * files directly in a folder (`core/*`), or a folder and all below it (`core/commit/`) — or undefined.
 */
export function roomOf(file: string, rooms: readonly string[]): string | undefined {
  const holds = (room: string): boolean =>
    room === file || (room.endsWith('/*') && path.posix.dirname(file) === room.slice(0, -2)) || (room.endsWith('/') && file.startsWith(room));
  const rank = (room: string): number => (room === file ? Number.MAX_SAFE_INTEGER : room.length + (room.endsWith('/') ? 1 : 0));
  return rooms.filter(holds).sort((a, b) => rank(b) - rank(a))[0];
}

/**
 * Imports that break the order of `floors` (rooms bottom to top, a floor per entry): each import from
 * one room into another on the same floor or above, as `from → to (room → room)`.
 */
export function orderBreaches(edges: readonly ImportEdge[], floors: readonly (readonly string[])[]): string[] {
  const rooms = floors.flat();
  const floorOf = new Map(floors.flatMap((floor, i) => floor.map((room) => [room, i] as const)));
  const breaches: string[] = [];
  for (const { from, to } of edges) {
    const a = roomOf(from, rooms);
    const b = roomOf(to, rooms);
    if (a === undefined || b === undefined || a === b) continue;
    if ((floorOf.get(b) as number) >= (floorOf.get(a) as number)) breaches.push(`${from} → ${to} (${a} → ${b})`);
  }
  return breaches;
}
