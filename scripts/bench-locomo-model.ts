/**
 * The lossy model of the LoCoMo section (bench-locomo.ts), served by the scripted OpenAI-compatible
 * server (test/helpers/scripted-llm.ts, a `dynamic` step): it writes what a hurried model writes
 * about a long chat, the speakers and the topics without the details.
 *
 * - consolidation: activeContext.md rewritten as one "Current focus" section naming both speakers
 *   and the window's commonest words; progress.md grown by one section per session day in the
 *   window, the same sentence for that day; a synthesis of one sentence;
 * - summaries: one sentence of the same kind per summary, every level.
 *
 * So every note stays in history, and the derived text competes with it for the words that recur.
 * The reply logic is pure (test/bench/locomo.test.ts runs its plans on the real plan parser).
 */
import { readFences } from '../src/core/prompt-fence.js';
import { plan, rewrite } from '../fixtures/llm/scenarios.js';
import { purposeOf, type Message } from './bench-growth-model.js';

/** Words too common or too short to be a topic (the speakers' names are left out too). */
const STOP = new Set(
  `about after again also always because been before being could didn does doing don't going gonna great have having here
  just know like love made make many more much never really right said should since some still such sure than thank thanks that
  their them then there these they thing things think this those though through time today very want well were what when where
  which while will with would your you're it's that's i'm i've glad awesome amazing totally yeah wow hope cool nice feel`.split(/\s+/),
);
const TOPICS = 3;

export interface PromptNote {
  agent: string;
  content: string;
}

/** The notes a consolidation prompt fences: each one's agent and text. */
export function notesOf(prompt: string): PromptNote[] {
  return readFences(prompt, 'note').map(({ text }) => {
    const split = text.indexOf('\n\n');
    return { agent: /^Agent: (.*)$/m.exec(split < 0 ? text : text.slice(0, split))?.[1] ?? '', content: split < 0 ? '' : text.slice(split + 2) };
  });
}

/** "Caroline and Melanie": the agents in order of appearance. */
const speakers = (notes: readonly PromptNote[]): string[] => [...new Set(notes.map((note) => note.agent).filter((agent) => agent !== ''))];
const both = (names: readonly string[]): string => (names.length <= 1 ? (names[0] ?? 'They') : `${names.slice(0, -1).join(', ')} and ${names.at(-1)}`);

/** The commonest words of `texts` (five letters or more), names and the day labels left out. */
export function topicsOf(texts: readonly string[], names: readonly string[]): string[] {
  const left = new Set([...STOP, ...names.map((name) => name.toLowerCase())]);
  const counts = new Map<string, number>();
  for (const text of texts) {
    for (const word of text
      .replace(/^\[[^\]]*\]/, '')
      .toLowerCase()
      .match(/[a-z][a-z']{4,}/g) ?? []) {
      if (!left.has(word) && !/\d/.test(word)) counts.set(word, (counts.get(word) ?? 0) + 1);
    }
  }
  return [...counts]
    .sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1))
    .slice(0, TOPICS)
    .map(([word]) => word);
}

const sentence = (names: readonly string[], topics: readonly string[]): string =>
  `${both(names)} talk about ${topics.length > 0 ? `${topics.slice(0, -1).join(', ')}${topics.length > 1 ? ' and ' : ''}${topics.at(-1)}` : 'their lives'}.`;

/** The day a note's text starts with ("[8 May 2023] …"), as the section's title. */
const dayOf = (content: string): string => /^\[([^\]]+)\]/.exec(content)?.[1] ?? 'Undated';

export function consolidationPlan(prompt: string): string {
  const notes = notesOf(prompt);
  const names = speakers(notes);
  const byDay = new Map<string, string[]>();
  for (const note of notes) byDay.set(dayOf(note.content), [...(byDay.get(dayOf(note.content)) ?? []), note.content]);
  const progress = readFences(prompt, 'file').find((file) => file.label === 'progress.md')?.text ?? '# Progress\n';
  const days = [...byDay].map(([day, texts]) => `## ${day}\n\n${sentence(names, topicsOf(texts, names))}\n`);
  const focus = sentence(
    names,
    topicsOf(
      notes.map((note) => note.content),
      names,
    ),
  );
  return plan(
    [rewrite('activeContext.md', `# Active Context\n\n## Current focus\n\n${focus}\n`), rewrite('progress.md', `${progress.trimEnd()}\n\n${days.join('\n')}`)],
    `${both(names)} talked over ${byDay.size} more sessions. ${focus}`,
  );
}

/** Summaries of every level: the agents from the notes (level 1) or the summaries' own lines (above). */
export function summaryReply(prompt: string): string {
  const notes = notesOf(prompt);
  const texts = notes.length > 0 ? notes.map((note) => note.content) : readFences(prompt, 'summary').map((fenced) => fenced.text);
  const names = notes.length > 0 ? speakers(notes) : [...new Set(texts.flatMap((text) => /^(.+?) talk about/m.exec(text)?.[1]?.split(/, | and /) ?? []))];
  const topics = topicsOf(texts, names);
  return JSON.stringify({ summary: sentence(names, topics), key_findings: [], topics, agents: names, files_mentioned: [] });
}

export function locomoReply(messages: ReadonlyArray<Message>): string {
  const prompt = messages.map((message) => message.content).join('\n');
  switch (purposeOf(messages)) {
    case 'summaries':
      return summaryReply(prompt);
    case 'synthesis':
      return 'The speakers talked about their lives.';
    case 'compaction':
      return JSON.stringify({ digests: [] });
    case 'consolidation':
      return consolidationPlan(prompt);
  }
}
