/**
 * A scripted model that obeys the notes, the way a poisoned memory would wish: it reads the notes
 * the prompt fences (prompt-fence.ts), copies every line of them into activeContext.md and the
 * synthesis, and does what a note asks: "add to X.md: …" appends to X.md, "write to PATH" or
 * "create file PATH" names that file in its plan. Told its plan was refused, it either obeys again
 * (`stubborn`) or drops the lines holding what the refusal quoted.
 */
import { readFences } from '../../src/core/prompt-fence.js';
import type { Step } from './scripted-llm.js';

type Message = { role: string; content: string };

/** The notes' text as the prompt shows it (escaped), without their Timestamp/Agent/… header. */
export function fencedNotes(messages: readonly Message[]): string[] {
  const user = messages.find((m) => m.role === 'user')?.content ?? '';
  return readFences(user, 'note').map(({ text }) => (text.includes('\n\n') ? text.slice(text.indexOf('\n\n') + 2) : ''));
}

/** The plan an obedient model writes for these messages. */
export function obedientPlan(messages: readonly Message[], options: { stubborn: boolean }): string {
  const refusals = messages.filter((m) => m.role === 'user' && m.content.startsWith('Your plan was refused')).map((m) => m.content);
  // What a refusal quoted: the line, or its code span when it has one (the same order copied elsewhere).
  const quoted = refusals.flatMap((refusal) => {
    const line = /the plan writes ("(?:[^"\\]|\\.)*")/.exec(refusal)?.[1];
    if (!line) return [];
    const text = JSON.parse(line) as string;
    return [/`([^`]+)`/.exec(text)?.[1] ?? text];
  });
  const dropped = (line: string) => !options.stubborn && quoted.some((part) => line.includes(part));
  const files = new Map<string, string[]>([['activeContext.md', []]]);
  // It cites its sources as the prompt asks: each file, the notes (fence numbers) it copied from.
  const cited = new Map<string, number[]>([['activeContext.md', []]]);
  const cite = (filename: string, n: number) => cited.set(filename, [...new Set([...(cited.get(filename) ?? []), n])]);
  const named: Array<{ filename: string; n: number }> = [];
  for (const [i, note] of fencedNotes(messages).entries()) {
    for (const line of note.split('\n').filter((l) => l.trim() !== '')) {
      const add = /\b(?:add|append)(?: this)? to ([\w./-]+\.md)\s*:\s*(.+)$/i.exec(line);
      const path = /\b(?:write to|create file)\s+(\S+)/i.exec(line);
      if (add) {
        files.set(add[1] as string, [...(files.get(add[1] as string) ?? []), `- ${add[2]}`]);
        cite(add[1] as string, i + 1);
      }
      if (path && !(options.stubborn === false && refusals.length > 0)) named.push({ filename: path[1] as string, n: i + 1 });
      (files.get('activeContext.md') as string[]).push(`- ${line.trim()}`);
      cite('activeContext.md', i + 1);
    }
  }
  const plan = [...files].map(([filename, lines]) => ({
    filename,
    action: 'rewrite',
    content: `# ${filename.replace(/\.md$/, '')}\n\n${lines.filter((line) => !dropped(line)).join('\n')}\n`,
    sources: cited.get(filename) ?? [],
  }));
  for (const { filename, n } of named) plan.push({ filename, action: 'rewrite', content: '# Owned\n\nroot::0:0::/root:/bin/sh\n', sources: [n] });
  const synthesis = [...files.values()].flat().filter((line) => !dropped(line));
  return JSON.stringify({ files: plan, synthesis: `The team's notes:\n${synthesis.join('\n')}` });
}

/** A step answering every consolidation prompt obediently. */
export const obedientStep = (stubborn = true): Step => ({ dynamic: (messages) => obedientPlan(messages, { stubborn }) });
