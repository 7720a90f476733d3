/**
 * How many tokens `space_summary` (what README tells agents to load at the start of a session)
 * costs when a bank with the default rules has reached its budgets: the figure the default budgets
 * in README are chosen from. A measurement, not a test: `node --import tsx scripts/measure-budgets.ts`.
 * Counts are live-mem's estimate (3.5 characters a token); with LIVE_MEM_MEASURE_TOKENIZER naming an
 * installed `gpt-tokenizer` package folder, a real tokenizer's (o200k) too.
 */
import { ownerCaller } from '../src/core/caller.js';
import { DEFAULT_BUDGETS, measureTokens } from '../src/core/bank/budget.js';
import { createCore } from '../src/core/core.js';
import { createMemoryDriver } from '../src/storage/memory/memory-driver.js';

const owner = ownerCaller('measure');

/** Bank-like Markdown (dated entries, decisions, names, a little code) up to `tokens` by the estimate. */
function bankText(title: string, tokens: number): string {
  const facts = [
    'Switched the S3 driver to conditional writes (`If-Match`) so two consolidations cannot both commit; decided by cline.',
    'The search index is rebuilt from the store when its snapshot hash differs; a corrupt snapshot is dropped, never trusted.',
    'Notes over 100,000 characters are refused with `invalid_input`; the client is told the limit.',
    'Léa asked for the viewer to show bank budgets; the bank view now draws a meter per file.',
    'CI runs radosgw on 127.0.0.1:7480 and the whole suite against it, plus chromium for the viewer.',
    'Open question: should summaries run on a smaller model than consolidation to save cost?',
  ];
  const lines = [`# ${title}`, ''];
  for (let i = 0, section = 0; measureTokens(lines.join('\n')) < tokens; i++) {
    if (i % 12 === 0) lines.push('', `## Part ${++section}`, '');
    const day = String((i % 28) + 1).padStart(2, '0');
    lines.push(`- 2026-${String((i % 12) + 1).padStart(2, '0')}-${day}: ${facts[i % facts.length]}`);
  }
  while (measureTokens(lines.join('\n')) > tokens) lines.pop();
  return `${lines.join('\n')}\n`;
}

/** About 600 words of synthesis, the point past which consolidation compresses it. */
const SYNTHESIS = Array.from({ length: 43 }, (_, i) => `Point ${i}: the API rewrite moved one more module onto the new storage layer.`).join(' ');

const realTokenizer = async (): Promise<((text: string) => number) | undefined> => {
  const folder = process.env.LIVE_MEM_MEASURE_TOKENIZER;
  if (!folder) return undefined;
  const module = (await import(`${folder}/esm/encoding/o200k_base.js`)) as { countTokens(text: string): number };
  return (text) => module.countTokens(text);
};

async function measure(label: string, sizes: Record<string, number>, count?: (text: string) => number) {
  const storage = createMemoryDriver();
  const core = createCore({ storage });
  await core.spaces.create(owner, { space_id: 'measured' });
  for (const [file, tokens] of Object.entries(sizes)) await storage.put(`measured/bank/${file}`, bankText(file.replace(/\.md$/, ''), tokens));
  await storage.put('measured/_synthesis.md', SYNTHESIS);
  const summary = await core.spaces.summary(owner, { space_id: 'measured' });
  const text = JSON.stringify(summary); // the tool result's text, as an agent receives it
  const bank = summary.files.reduce((sum, file) => sum + measureTokens(file.content), 0);
  const line = (what: string, value: string) => console.log(`  ${what.padEnd(34)} ${value}`);
  console.log(label);
  line('bank (estimate)', `${bank.toLocaleString('en-US')} tokens`);
  line('rules + synthesis (estimate)', `${(measureTokens(summary.rules) + measureTokens(summary.synthesis)).toLocaleString('en-US')} tokens`);
  line('space_summary result (estimate)', `${measureTokens(text).toLocaleString('en-US')} tokens, ${Buffer.byteLength(text).toLocaleString('en-US')} bytes`);
  if (count) line('space_summary result (o200k)', `${count(text).toLocaleString('en-US')} tokens`);
}

const count = await realTokenizer();
const files = ['projectbrief.md', 'productContext.md', 'activeContext.md', 'systemPatterns.md', 'techContext.md', 'progress.md'];
const { fileTokens, bankTokens } = DEFAULT_BUDGETS;
// The bank at its budget: the three files that grow the most at theirs, the rest sharing what is left.
const rest = Math.floor((bankTokens - 3 * fileTokens) / 3);
await measure(
  `Bank at its budget (${bankTokens.toLocaleString('en-US')}), default rules, a 600-word synthesis:`,
  Object.fromEntries(files.map((file) => [file, ['progress.md', 'activeContext.md', 'systemPatterns.md'].includes(file) ? fileTokens : rest])),
  count,
);
await measure(
  `Every file at its budget (${fileTokens.toLocaleString('en-US')} each; the bank over its own):`,
  Object.fromEntries(files.map((file) => [file, fileTokens])),
  count,
);
