/**
 * A scripted agent that writes a consolidation plan from a work package (bank_consolidate without a
 * model, `live-mem consolidate --prepare`): it reads the fenced notes of the package's prompt and folds
 * each into activeContext.md (created, or appended to), citing every note, as a careful agent would.
 */

export interface PackageNote {
  /** Its number in the package (note i/n). */
  number: number;
  /** The note's text, without its header lines. */
  text: string;
}

/** The notes a package's prompt shows, in order. */
export function packageNotes(prompt: string): PackageNote[] {
  const notes: PackageNote[] = [];
  const fence = /<<<note (\d+)\/\d+ nonce=[^>]+>>>\n([\s\S]*?)\n<<<end note \1\/\d+ nonce=[^>]+>>>/g;
  for (const match of prompt.matchAll(fence)) {
    const body = match[2] as string;
    const text = body.slice(body.indexOf('\n\n') + 2);
    notes.push({ number: Number(match[1]), text });
  }
  return notes;
}

/** Whether the package's prompt shows activeContext.md (the bank holds it already). */
const hasActiveContext = (prompt: string): boolean => /<<<file activeContext\.md nonce=/.test(prompt);

export interface PlanOptions {
  /** Leave out this note's text (a sloppy plan that still cites it). */
  drop?: number;
  /** Cite this note number too. */
  extraSource?: number;
  /** Add this line to the file. */
  extraLine?: string;
  /** Write to this file name instead. */
  filename?: string;
  /** Edit this section instead of appending to the file's top one. */
  section?: string;
  /** Pad the content to this many characters. */
  padTo?: number;
}

/** The plan for a package, as the scripted agent writes it: JSON text. */
export function writePlan(pkg: { prompt: string }, options: PlanOptions = {}): string {
  const notes = packageNotes(pkg.prompt);
  const lines = notes.filter((note) => note.number !== options.drop).map((note) => `- ${note.text.replace(/\n+/g, ' ')}`);
  if (options.extraLine) lines.push(options.extraLine);
  let body = lines.join('\n');
  if (options.padTo) body = `${body}\n${'- padding line\n'.repeat(Math.ceil(options.padTo / 15))}`;
  const sources = [...notes.map((note) => note.number), ...(options.extraSource ? [options.extraSource] : [])];
  const filename = options.filename ?? 'activeContext.md';
  const exists = filename === 'activeContext.md' && hasActiveContext(pkg.prompt);
  const file =
    exists || options.section
      ? { filename, action: 'edit', edits: [{ op: 'append', section: options.section ?? 'Active Context', content: body, sources }] }
      : { filename, action: 'create', content: `# Active Context\n\n${body}\n`, sources };
  const synthesis = `The project so far: ${notes.length} notes folded in.`;
  return JSON.stringify({ files: [file], synthesis });
}
