/**
 * The scripted model of the long-lived space benchmark (bench-growth.ts): an OpenAI-compatible
 * chat-completions server on 127.0.0.1 that answers each kind of request live-mem sends as a
 * diligent model would, and reports `usage` (characters / 3.5, as live-mem estimates tokens) so
 * what a run spends can be added up.
 *
 * - consolidation: every note becomes a dated line (`- 2026-01-03: …`) in the section of its day in
 *   the file its kind belongs to: the bank only grows, as a project's does; each change cites the notes it
 *   came from (`sources`), so every note is accounted for.
 * - compaction (shared design §3): digests the oldest unprotected sections, losslessly first (undated
 *   lines dropped), then, only when the budget cannot be met that way, as one line per section
 *   naming the ids of the entries it held.
 * - summaries and synthesis compression: a short valid reply.
 *
 * The reply logic is pure (exported for test/bench/growth-model.test.ts); the server is a thin shell.
 */
import { createServer, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import { readFences } from '../src/core/prompt-fence.js';
import { estimateTokens } from '../src/core/tokens.js';
import { RETENTION_REMINDER_OPENING } from '../src/core/consolidation/retention.js';

export interface Message {
  role: string;
  content: string;
}

export type Purpose = 'consolidation' | 'compaction' | 'summaries' | 'synthesis';

const COMPACTION_SYSTEM = 'You compact one file of a memory bank.';

export function purposeOf(messages: readonly Message[]): Purpose {
  const system = messages.find((message) => message.role === 'system')?.content ?? '';
  if (system.startsWith(COMPACTION_SYSTEM)) return 'compaction';
  if (system.startsWith('You summarise')) return 'summaries';
  if (/synthesis that has grown too long/.test(system)) return 'synthesis';
  return 'consolidation';
}

export function reply(messages: readonly Message[]): string {
  const user = messages
    .filter((message) => message.role === 'user')
    .map((message) => message.content)
    .join('\n');
  switch (purposeOf(messages)) {
    case 'compaction':
      return compactionReply(user);
    case 'summaries':
      return JSON.stringify({
        summary: 'The agents recorded facts, progress and decisions.',
        key_findings: [],
        topics: ['project'],
        agents: [],
        files_mentioned: [],
      });
    case 'synthesis':
      return compressedSynthesis(user);
    case 'consolidation':
      return consolidationReply(user);
  }
}

// ---------------------------------------------------------------------------------------------
// Consolidation

/** The bank the first consolidation creates: the six files of the default rules. */
export const BANK_TITLES: Record<string, string> = {
  'projectbrief.md': 'Project Brief',
  'productContext.md': 'Product Context',
  'activeContext.md': 'Active Context',
  'systemPatterns.md': 'System Patterns',
  'techContext.md': 'Tech Context',
  'progress.md': 'Progress',
};
const BANK_INTROS: Record<string, string> = {
  'projectbrief.md': 'A generated project: services with made-up names, their facts, progress and decisions.',
  'productContext.md': 'Used by the long-lived space benchmark of live-mem.',
};

/** Entry ids of the generated notes: f (fact), p (progress), d (decision), then four digits. */
export const ENTRY_ID = /\b[fpd]\d{4}\b/g;
const DATE = /\b\d{4}-\d{2}-\d{2}\b/;

export interface ParsedNote {
  category: string;
  timestamp: string;
  content: string;
}

export function parseNotes(prompt: string): ParsedNote[] {
  return readFences(prompt, 'note').map(({ text }) => {
    const split = text.indexOf('\n\n');
    const head = split < 0 ? text : text.slice(0, split);
    const header = (name: string) => new RegExp(`^${name}: (.*)$`, 'm').exec(head)?.[1] ?? '';
    return { category: header('Category'), timestamp: header('Timestamp'), content: split < 0 ? '' : text.slice(split + 2) };
  });
}

/**
 * Where a note goes: progress to progress.md; of the ten facts and ten decisions of a day, the first
 * five to techContext.md and activeContext.md, the others to systemPatterns.md (so each file's day
 * holds a run of consecutive ids).
 */
export function fileOf(note: ParsedNote): string {
  const id = note.content.match(ENTRY_ID)?.[0] ?? '';
  const first = (Number(id.slice(1)) - 1) % 10 < 5;
  if (note.category === 'progress') return 'progress.md';
  if (note.category === 'decision') return first ? 'activeContext.md' : 'systemPatterns.md';
  return first ? 'techContext.md' : 'systemPatterns.md';
}

/** The note as a bank line, dated by the first date its text names (else its timestamp's day). */
export function datedLine(note: ParsedNote): { date: string; line: string } {
  const date = DATE.exec(note.content)?.[0] ?? note.timestamp.slice(0, 10);
  const text = note.content
    .replace(new RegExp(`^${date}\\s*[·:-]?\\s*`), '')
    .replace(/\s+/g, ' ')
    .trim();
  return { date, line: `- ${date}: ${text}` };
}

/** The bank files as the prompt shows them, whole or in part (the heading lines are what matters). */
function bankBlocks(prompt: string): Map<string, string> {
  const blocks = new Map<string, string>();
  for (const { label, text } of readFences(prompt, 'file')) blocks.set(label, `${blocks.get(label) ?? ''}${text}\n`);
  return blocks;
}

const hasHeading = (block: string, title: string): boolean =>
  block.split('\n').some((line) => /^#{1,6}\s/.test(line) && line.replace(/^#+\s*/, '').trim() === title);

export function consolidationReply(prompt: string): string {
  const notes = parseNotes(prompt);
  const bank = bankBlocks(prompt);
  const first = bank.size === 0 && /No bank file yet/.test(prompt);
  /** file → day → lines and the notes they come from (fence numbers, cited as `sources`), in note order. */
  const byFile = new Map<string, Map<string, { lines: string[]; sources: number[] }>>();
  for (const [i, note] of notes.entries()) {
    const { date, line } = datedLine(note);
    const days = byFile.get(fileOf(note)) ?? new Map<string, { lines: string[]; sources: number[] }>();
    const day = days.get(date) ?? { lines: [], sources: [] };
    day.lines.push(line);
    day.sources.push(i + 1);
    days.set(date, day);
    byFile.set(fileOf(note), days);
  }
  const files: unknown[] = [];
  if (first) {
    for (const [filename, title] of Object.entries(BANK_TITLES)) {
      const days = [...(byFile.get(filename) ?? new Map<string, { lines: string[]; sources: number[] }>())];
      const body = days.map(([date, { lines }]) => `## ${date}\n\n${lines.join('\n')}\n`).join('\n');
      const sources = days.flatMap(([, day]) => day.sources);
      files.push({ filename, action: 'create', content: `# ${title}\n\n${BANK_INTROS[filename] ?? ''}\n\n${body}`.replace(/\n{3,}/g, '\n\n'), sources });
    }
  } else {
    for (const [filename, days] of byFile) {
      const block = bank.get(filename) ?? '';
      const title = /^# (.+)$/m.exec(block)?.[1]?.trim() ?? (BANK_TITLES[filename] as string);
      const edits = [...days].map(([date, { lines, sources }]) =>
        hasHeading(block, date)
          ? { op: 'append', section: `${title} > ${date}`, content: lines.join('\n'), sources }
          : { op: 'add', section: title, title: date, content: lines.join('\n'), sources },
      );
      files.push({ filename, action: 'edit', edits });
    }
  }
  const ids = notes.flatMap((note) => note.content.match(ENTRY_ID)?.slice(0, 1) ?? []);
  const synthesis = `${notes.length} notes folded in: facts, progress and decisions, each a dated line in the section of its day${ids.length > 0 ? ` (entries ${ids[0]} to ${ids.at(-1)})` : ''}.`;
  return JSON.stringify({ files, synthesis });
}

/** About two sentences of the synthesis the request quotes. */
function compressedSynthesis(prompt: string): string {
  const synthesis = readFences(prompt, 'synthesis')[0]?.text ?? prompt;
  return (synthesis.match(/[^.!?]+[.!?]/g) ?? [synthesis])
    .slice(0, 2)
    .map((sentence) => sentence.trim())
    .join(' ');
}

// ---------------------------------------------------------------------------------------------
// Compaction

export interface CompactionSection {
  id: string;
  path: string[];
  tokens: number;
  protected: boolean;
  content: string;
}

export interface CompactionRequest {
  file: string;
  budget_tokens: number;
  target_tokens: number;
  file_tokens: number;
  sections: CompactionSection[];
}

export function parseCompaction(prompt: string): CompactionRequest {
  const json = readFences(prompt, 'compaction')[0]?.text;
  if (json === undefined) throw new Error('no compaction fence in the request');
  return JSON.parse(json) as CompactionRequest;
}

/** Heading line, code blocks and the other lines of a section (dated or not), each kept whole. */
function partsOf(content: string): { heading: string; code: string[]; lines: Array<{ text: string; dated: boolean }> } {
  const all = content.split('\n');
  const heading = /^#{1,6}\s/.test(all[0] ?? '') ? (all.shift() as string) : '';
  const parts = { heading, code: [] as string[], lines: [] as Array<{ text: string; dated: boolean }> };
  let fence: string[] | null = null;
  for (const line of all) {
    if (/^\s*(```|~~~)/.test(line)) {
      if (fence) {
        parts.code.push([...fence, line].join('\n'));
        fence = null;
      } else fence = [line];
    } else if (fence) fence.push(line);
    else if (line.trim() !== '') parts.lines.push({ text: line, dated: DATE.test(line) });
  }
  if (fence) parts.code.push(fence.join('\n'));
  return parts;
}

/** Ids a text names, ranges ("p0091–p0100") expanded. */
export function idsIn(text: string): string[] {
  const ids: string[] = [];
  for (const match of text.matchAll(/\b([fpd])(\d{4})(?:–\1(\d{4}))?\b/g)) {
    const [kind, from] = [match[1] as string, Number(match[2])];
    const to = match[3] === undefined ? from : Number(match[3]);
    for (let n = from; n <= to; n++) ids.push(`${kind}${String(n).padStart(4, '0')}`);
  }
  return ids;
}

/** "f0001–f0005, p0012": ids grouped by kind, consecutive ones as a range. */
export function idRanges(ids: Iterable<string>): string {
  const byKind = new Map<string, number[]>();
  for (const id of new Set(ids)) byKind.set(id[0] as string, [...(byKind.get(id[0] as string) ?? []), Number(id.slice(1))]);
  const ranges: string[] = [];
  const name = (kind: string, n: number) => `${kind}${String(n).padStart(4, '0')}`;
  for (const [kind, numbers] of [...byKind].sort()) {
    numbers.sort((a, b) => a - b);
    let start = numbers[0] as number;
    for (let i = 1; i <= numbers.length; i++) {
      const n = numbers[i];
      if (n === (numbers[i - 1] as number) + 1) continue;
      const end = numbers[i - 1] as number;
      ranges.push(start === end ? name(kind, start) : `${name(kind, start)}–${name(kind, end)}`);
      if (n !== undefined) start = n;
    }
  }
  return ranges.join(', ');
}

/** One line standing for `lines`: their dates, how many entries and which. */
export function summaryLine(lines: readonly string[]): string {
  const dates = lines.flatMap((line) => line.match(new RegExp(DATE.source, 'g')) ?? []).sort();
  const ids = lines.flatMap(idsIn);
  const span = dates.length === 0 ? '' : dates[0] === dates.at(-1) ? `${dates[0]}: ` : `${dates[0]} to ${dates.at(-1)}: `;
  const what = ids.length > 0 ? `${new Set(ids).size} entries (${idRanges(ids)})` : `${lines.length} entries`;
  return `- ${span}${what}, full text in history.`;
}

/** How a section is digested: without its undated lines, and with some of its lines folded into one summary line. */
interface Plan {
  dropUndated: boolean;
  /** Indices (into the section's lines) folded into the summary line. */
  folded: Set<number>;
}

function digestOf(content: string, plan: Plan): string {
  const { heading, code, lines } = partsOf(content);
  const folded = lines.filter((_, i) => plan.folded.has(i)).map((line) => line.text);
  const kept = lines.filter((line, i) => !plan.folded.has(i) && (line.dated || !plan.dropUndated)).map((line) => line.text);
  const body = [...(folded.length > 0 ? [summaryLine(folded)] : []), ...kept];
  return `${[heading, ...(body.length > 0 ? [body.join('\n')] : []), ...code].filter((block) => block !== '').join('\n\n')}\n`;
}

/** Lossless for what the guards protect: heading, dated lines and code blocks kept verbatim, the rest dropped. */
export const keepDated = (content: string): string => digestOf(content, { dropUndated: true, folded: new Set() });

/** The whole section as one summary line (code blocks kept). */
export const summarize = (content: string): string => digestOf(content, { dropUndated: true, folded: new Set(partsOf(content).lines.map((_, i) => i)) });

/**
 * The digests that bring the file to its target, as the guards want them: the oldest sections
 * first (by the first date they hold, else their place), each step only when the ones before cannot
 * reach the target, and no further than it:
 * 1. unprotected sections without their undated lines (nothing a guard protects is lost);
 * 2. their lines folded, oldest first and one at a time, into one summary line naming the entries' ids;
 * 3. only if still over budget (the protected part alone is over the target, which then is the
 *    floor): the same for protected sections (never the newest), to halfway between target and budget;
 * then lines folded in step 2 or 3 are put back, smallest first, while the file has room for them
 * (the guards refuse a digest dropping a dated line the target leaves room for).
 * A section holding another offered section (a parent, if the compactor offers parents) is left alone.
 */
export function compactionReply(prompt: string): string {
  const request = parseCompaction(prompt);
  const sections = request.sections.filter(
    (section) => !request.sections.some((other) => other !== section && other.content.trim() !== '' && section.content.includes(other.content.trim())),
  );
  const firstDate = (section: CompactionSection) => DATE.exec(section.content)?.[0] ?? '';
  const oldestFirst = sections
    .map((section, place) => ({ section, place }))
    .sort((a, b) => firstDate(a.section).localeCompare(firstDate(b.section)) || a.place - b.place)
    .map(({ section }) => section);
  const newest = oldestFirst.at(-1);
  const plans = new Map<CompactionSection, Plan>(oldestFirst.map((section) => [section, { dropUndated: false, folded: new Set<number>() }]));
  // The compactor measures the rebuilt file: its characters, less what each digest saves.
  const fileChars = request.file_tokens * 3.5 - 1.75;
  const saved = new Map<CompactionSection, number>();
  const replan = (section: CompactionSection, change: (plan: Plan) => void) => {
    const plan = plans.get(section) as Plan;
    change(plan);
    saved.set(section, section.content.trimEnd().length - digestOf(section.content, plan).trimEnd().length);
  };
  const tokens = () => Math.ceil([...saved.values()].reduce((chars, less) => chars - less, fileChars) / 3.5);
  const target = request.target_tokens;

  for (const section of oldestFirst.filter((s) => !s.protected)) {
    if (tokens() <= target) break;
    replan(section, (plan) => (plan.dropUndated = true));
  }
  const fold = (candidates: CompactionSection[], goal: number) => {
    for (const section of candidates) {
      replan(section, (plan) => (plan.dropUndated = true));
      const count = partsOf(section.content).lines.length;
      for (let i = 0; i < count && tokens() > goal; i++) replan(section, (plan) => plan.folded.add(i));
      if (tokens() <= goal) return;
    }
  };
  if (tokens() > target)
    fold(
      oldestFirst.filter((s) => !s.protected),
      target,
    );
  // Protected sections beyond the target are the floor: above it, the budget is what must be met.
  if (tokens() > request.budget_tokens)
    fold(
      oldestFirst.filter((s) => s.protected && s !== newest),
      Math.floor((target + request.budget_tokens) / 2),
    );

  // Put back folded dated lines the file has room for, smallest first (the guard's own test, less a token for estimating).
  const foldedLines = [...plans].flatMap(([section, plan]) => {
    const { lines } = partsOf(section.content);
    return [...plan.folded].filter((i) => lines[i]?.dated).map((i) => ({ section, i, tokens: estimateTokens((lines[i] as { text: string }).text.trim()) }));
  });
  for (const line of foldedLines.sort((a, b) => a.tokens - b.tokens)) {
    if (tokens() + line.tokens + 1 <= target + 1) replan(line.section, (plan) => plan.folded.delete(line.i));
  }

  const digests = [...plans].flatMap(([section, plan]) => {
    if (!plan.dropUndated && plan.folded.size === 0) return [];
    const content = digestOf(section.content, plan);
    return content.trim().length < section.content.trim().length ? [{ id: section.id, content }] : [];
  });
  return JSON.stringify({ digests });
}

// ---------------------------------------------------------------------------------------------
// The server

export interface ModelCall {
  purpose: Purpose;
  /** The file a compaction request is about. */
  file?: string;
  promptTokens: number;
  completionTokens: number;
  /** A consolidation asked again because the retention check (core/retention) found its plan short: the notes it named. */
  retentionFlagged?: number;
}

/** The notes a retention reminder (consolidation/retention.ts) names, one `- note N (…)` line each; 0 for any other request. */
function retentionFlagged(messages: readonly Message[]): number {
  const last = messages.at(-1);
  if (last?.role !== 'user' || !last.content.startsWith(RETENTION_REMINDER_OPENING)) return 0;
  return last.content.match(/^- note \d+ \(/gm)?.length ?? 0;
}

function compactedFile(messages: readonly Message[]): string {
  try {
    return parseCompaction(messages.map((message) => message.content).join('\n')).file;
  } catch {
    return '?';
  }
}

export interface GrowthModel {
  url: string;
  /** Every chat request answered, in order. */
  calls: ModelCall[];
  close(): Promise<void>;
}

export async function startGrowthModel(): Promise<GrowthModel> {
  const calls: ModelCall[] = [];
  const server: Server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method === 'GET' && req.url?.endsWith('/models')) {
        res
          .writeHead(200, { 'content-type': 'application/json' })
          .end(JSON.stringify({ object: 'list', data: [{ id: 'growth', object: 'model', created: 0, owned_by: 'bench' }] }));
        return;
      }
      if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
        res.writeHead(404).end('{"error":{"message":"not found"}}');
        return;
      }
      const request = JSON.parse(body) as { model: string; messages: Message[] };
      let content: string;
      try {
        content = reply(request.messages);
      } catch (error) {
        content = `I could not read that request: ${(error as Error).message}`;
      }
      const purpose = purposeOf(request.messages);
      const flagged = retentionFlagged(request.messages);
      const call: ModelCall = {
        purpose,
        ...(purpose === 'compaction' ? { file: compactedFile(request.messages) } : {}),
        ...(flagged > 0 ? { retentionFlagged: flagged } : {}),
        promptTokens: estimateTokens(request.messages.map((message) => message.content).join('')),
        completionTokens: estimateTokens(content),
      };
      calls.push(call);
      res.writeHead(200, { 'content-type': 'application/json' }).end(
        JSON.stringify({
          id: `chatcmpl-${calls.length}`,
          object: 'chat.completion',
          created: Math.floor(Date.now() / 1000),
          model: request.model,
          choices: [{ index: 0, message: { role: 'assistant', content }, finish_reason: 'stop' }],
          usage: { prompt_tokens: call.promptTokens, completion_tokens: call.completionTokens, total_tokens: call.promptTokens + call.completionTokens },
        }),
      );
    });
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    calls,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}
