/** A progress-like bank file and a scripted model for compaction tests. */
import { compactionRequestOf, type CompactionRequest } from '../../src/core/compaction/prompt.js';
import type { Step } from './scripted-llm.js';

export const PROSE = 'We worked through the details of this step, discussed options at length and settled them. ';

/** Entry `i` of a progress log: a dated line and some prose. */
export const entry = (i: number): string => `### Entry ${i}\n\n- 2026-01-${String((i % 28) + 1).padStart(2, '0')} shipped feature ${i}\n${PROSE.repeat(5)}\n`;

/** `# Progress` with an intro and `count` entries under `## History`, oldest first. */
export const progressFile = (count: number): string =>
  `# Progress\n\nThe history of the project.\n\n## History\n\n${Array.from({ length: count }, (_, i) => entry(i)).join('\n')}`;

export type { CompactionRequest } from '../../src/core/compaction/prompt.js';
export type OfferedSection = CompactionRequest['sections'][number];

/** The JSON object between `<<<COMPACTION>>>` and `<<<END>>>` of a request, or null for another kind of request. */
export const compactionRequest = compactionRequestOf;

/** A well-behaved digest: the heading line and the dated lines, the prose dropped. */
export const digestOf = (section: OfferedSection): string => {
  const lines = section.content.split('\n');
  return [lines[0], '', ...lines.slice(1).filter((line) => /\d{4}-\d{2}-\d{2}/.test(line))].join('\n');
};

/** A model that digests every unprotected section well; `edit` may spoil the digests. */
export const digesting = (edit: (digests: Array<{ id: string; content: string }>, request: CompactionRequest) => unknown = (d) => d): Step => ({
  dynamic: (messages) => {
    const request = compactionRequest(messages);
    if (!request) throw new Error('not a compaction request');
    const digests = request.sections.filter((s) => !s.protected).map((s) => ({ id: s.id, content: digestOf(s) }));
    return JSON.stringify({ digests: edit(digests, request) });
  },
});

/** A model that adds one dated entry to progress.md per consolidation, and digests well when asked to compact. */
export function bankModel(next = { n: 100 }): Step {
  const digest = digesting() as { dynamic: (messages: Array<{ role: string; content: string }>) => string };
  return {
    dynamic: (messages) => {
      if (compactionRequest(messages)) return digest.dynamic(messages);
      const n = next.n++;
      const content = `- 2026-02-${String((n % 28) + 1).padStart(2, '0')} shipped feature ${n}\n${PROSE.repeat(5)}`;
      return JSON.stringify({
        files: [{ filename: 'progress.md', action: 'edit', edits: [{ op: 'add', section: 'Progress > History', title: `Entry ${n}`, content }] }],
        synthesis: `up to entry ${n}`,
      });
    },
  };
}
