import { invalid, isLiveMemError } from '../../shared/errors.js';
import { measureTokens } from '../bank/budget.js';
import { outlineDamage, outlineOf } from '../markdown/outline.js';
import { guardModelOutput } from '../model-output/model-output.js';
import type { RedactMode } from '../redact/redact.js';
import { fencedCode } from '../markdown/sections.js';
import type { Section, SplitFile } from './sections.js';
import { DEFAULT_RETENTION, type RetentionMode, type SectionRetention } from '../retention/record.js';
import { checkRetained } from './retention-guard.js';

/**
 * The guards of a compaction, checked on the model's digests before anything is written. Each is a
 * pure function that throws `invalid_input` naming itself; `checkDigests` runs them all and returns
 * the file's new content. "The budget cannot be met otherwise" is measured against the target
 * (TARGET_SHARE of the budget), what the model is asked for: a compaction leaves room for the next
 * consolidations, so the same file is not compacted again at once.
 */
export const TARGET_SHARE = 0.75;
/** The result may not drop below this share of the budget (nor below the protected part, up to FLOOR_CAP_SHARE). */
export const FLOOR_SHARE = 0.25;
export const FLOOR_CAP_SHARE = 0.5;

export interface Digest {
  id: string;
  content: string;
}

/** A digest that passed: its section and its final text (the heading line kept). */
export interface Digested {
  section: Section;
  text: string;
}

export const targetTokens = (budget: number): number => Math.floor(budget * TARGET_SHARE);

/**
 * max(25% of the budget, the protected sections), at most half the budget: a file that is one big
 * newest section may have to digest it, and must still be able to land between its floor and target.
 */
export function floorTokens(file: SplitFile): number {
  const protectedTokens = file.sections.filter((s) => s.protected).reduce((sum, s) => sum + s.tokens, 0);
  return Math.min(Math.max(Math.ceil(file.budget * FLOOR_SHARE), protectedTokens), Math.floor(file.budget * FLOOR_CAP_SHARE));
}

const refuse = (guard: string, file: SplitFile, message: string) => invalid(`compaction of ${file.filename} refused by the ${guard} guard: ${message}`);

/** Only ids the prompt listed, each at most once. */
export function checkKnownIds(file: SplitFile, digests: readonly Digest[]): Map<string, Section> {
  const byId = new Map(file.sections.map((s) => [s.id, s]));
  const seen = new Set<string>();
  for (const digest of digests) {
    if (!byId.has(digest.id)) throw refuse('known-ids', file, `the reply names section ${JSON.stringify(digest.id)}, which was not offered`);
    if (seen.has(digest.id)) throw refuse('known-ids', file, `the reply digests section ${digest.id} twice`);
    seen.add(digest.id);
  }
  return byId;
}

const normalize = (text: string): string => text.replace(/\s+/g, ' ').trim().toLowerCase();

/** What the gate of model output needs of a compaction: its prompt's nonce, and LIVE_MEM_REDACT (default mask); LIVE_MEM_RETENTION (default retry). */
export interface DigestGuards {
  nonce?: string;
  redact?: RedactMode;
  retention?: RetentionMode;
}

/**
 * A digest is model text stored in the bank: it passes the one gate every such text passes
 * (model-output/model-output.ts). The prompt's fence lines it echoes are dropped; a secret its
 * section did not hold is refused (the `secret` guard: a digest only shortens, and a secret already
 * there may stay, a compaction is not where the bank is cleaned); a line carrying an order its
 * section does not vouch for is refused (the `directive` guard: the section is what it restates).
 * Returns the digest's text as it passed.
 */
export function checkModelOutput(file: SplitFile, section: Section, text: string, guards: DigestGuards = {}): string {
  try {
    const [passed] = guardModelOutput({
      subject: `the digest of ${section.id}`,
      nonce: guards.nonce ?? '',
      texts: [{ where: file.filename, before: section.text, after: text }],
      sources: [{ filename: `section ${section.id}`, content: section.text }],
      redact: guards.redact ?? 'mask',
    });
    return passed as string;
  } catch (error) {
    if (!isLiveMemError(error, 'invalid_input')) throw error;
    throw refuse(error.data.directive ? 'directive' : 'secret', file, error.message);
  }
}

/** A digest keeps its section's heading and adds none (a missing heading line is put back). Returns the digest's text. */
export function checkHeading(file: SplitFile, section: Section, content: string): string {
  const text = content.replace(/^\s*\n/, '').replace(/\s+$/, '');
  const { headings } = outlineOf(`${text}\n`);
  if (headings.length === 0) return `${section.heading.raw.replace(/\n*$/, '\n')}\n${text}`;
  const [first] = headings;
  if (headings.length > 1 || first?.start !== 0 || first.depth !== section.heading.depth || normalize(first.text) !== normalize(section.heading.text)) {
    throw refuse('heading', file, `the digest of ${section.id} (${section.path.join(' > ')}) must keep its heading line and add no other heading`);
  }
  return text;
}

/**
 * The file keeps every heading it had: a digest keeps its own and adds none (checkHeading), but a
 * digest that opens a code fence and never closes it turns every section after it into code once
 * put back in the file.
 */
export function checkOutline(file: SplitFile, content: string): void {
  const damage = outlineDamage(outlineOf(file.content), outlineOf(content));
  if (damage) throw refuse('outline', file, `with the digests put back, the file ${damage}: close every code fence a digest opens`);
}

/** A digest is shorter than its section. */
export function checkShorter(file: SplitFile, section: Section, text: string): void {
  if (text.length >= section.text.trim().length) {
    throw refuse(
      'shorter',
      file,
      `the digest of ${section.id} (${section.path.join(' > ')}) is ${text.length} characters, not shorter than the section's ${section.text.trim().length}`,
    );
  }
}

/** The file with each digested section replaced, its spacing kept. */
export function assemble(file: SplitFile, digested: readonly Digested[]): string {
  let out = '';
  let at = 0;
  for (const { section, text } of [...digested].sort((a, b) => a.section.start - b.section.start)) {
    const trailing = (/\s*$/.exec(section.text)?.[0] ?? '').replace(/[^\n]/g, '');
    out += file.content.slice(at, section.start) + text.replace(/\s+$/, '') + (trailing || '\n');
    at = section.end;
  }
  return out + file.content.slice(at);
}

/** What each digest dropped of what must stay verbatim: dated lines and fenced code. */
function dropped(section: Section, text: string): string[] {
  const lines = new Set(text.split('\n').map((line) => line.trim()));
  const missingDates = section.datedLines.filter((line) => !lines.has(line));
  const dedent = (code: string) =>
    code
      .split('\n')
      .map((line) => line.trim())
      .join('\n');
  const kept = fencedCode(text).map(dedent);
  const missingCode = section.codeBlocks.filter((code) => !kept.some((k) => k.includes(dedent(code))));
  return [...missingDates, ...missingCode];
}

/**
 * Dated lines and code blocks of a digested section stay verbatim unless the target cannot be met
 * otherwise: refused when putting back the smallest one dropped would still keep the file within it.
 */
export function checkKeptVerbatim(file: SplitFile, digested: readonly Digested[], resultTokens: number): void {
  const target = targetTokens(file.budget);
  for (const { section, text } of digested) {
    for (const item of dropped(section, text)) {
      if (resultTokens + measureTokens(item) + 1 <= target) {
        throw refuse(
          'verbatim',
          file,
          `the digest of ${section.id} (${section.path.join(' > ')}) drops ${JSON.stringify(item.slice(0, 80))}, a dated line or code block the file has room to keep (${resultTokens} tokens, target ${target})`,
        );
      }
    }
  }
}

/**
 * Protected sections (newest, code) are left whole unless the target cannot be met otherwise:
 * refused when the unprotected sections alone could free enough (each down to its heading, dated
 * lines and code), or when the file with that section kept whole would still be within the target.
 */
export function checkProtected(file: SplitFile, digested: readonly Digested[], resultTokens: number): void {
  const touched = digested.filter((d) => d.section.protected);
  if (touched.length === 0) return;
  const target = targetTokens(file.budget);
  const leastUnprotected = file.sections
    .filter((s) => !s.protected)
    .reduce((sum, s) => sum + measureTokens([s.heading.raw, ...s.datedLines, ...s.codeBlocks].join('\n')), 0);
  const unprotectedTokens = file.sections.filter((s) => !s.protected).reduce((sum, s) => sum + s.tokens, 0);
  const reachable = file.tokens - unprotectedTokens + leastUnprotected <= target;
  for (const { section, text } of touched) {
    const kept = resultTokens - measureTokens(text) + section.tokens;
    if (reachable || kept <= target) {
      throw refuse(
        'protected',
        file,
        `section ${section.id} (${section.path.join(' > ')}) is protected (newest, or holds code) and the file can meet its target of ${target} tokens without digesting it`,
      );
    }
  }
}

/** The result ends within the budget, and not below the floor. */
export function checkSize(file: SplitFile, resultTokens: number): void {
  if (resultTokens > file.budget) {
    throw refuse('budget', file, `the result is ${resultTokens} tokens, over the file's budget of ${file.budget}`);
  }
  const floor = floorTokens(file);
  if (resultTokens < floor) {
    throw refuse('floor', file, `the result is ${resultTokens} tokens, below the floor of ${floor} (a quarter of the budget, or the protected part)`);
  }
}

/** Runs every guard; returns the new content and the sections digested. */
export function checkDigests(
  file: SplitFile,
  digests: readonly Digest[],
  guards: DigestGuards = {},
): { content: string; digested: Digested[]; tokens: number; retention: SectionRetention[] } {
  const byId = checkKnownIds(file, digests);
  const digested = digests.map((digest) => {
    const section = byId.get(digest.id) as Section;
    const text = checkHeading(file, section, digest.content);
    checkShorter(file, section, text);
    return { section, text: checkModelOutput(file, section, text, guards) };
  });
  const content = assemble(file, digested);
  checkOutline(file, content);
  const tokens = measureTokens(content);
  checkSize(file, tokens);
  checkProtected(file, digested, tokens);
  checkKeptVerbatim(file, digested, tokens);
  const retention = checkRetained(file, digested, content, tokens, targetTokens(file.budget), guards.retention ?? DEFAULT_RETENTION);
  return { content, digested, tokens, retention };
}
