/**
 * The cheap checks in front of the secret scan (core/redact) never let a secret through: every
 * format's samples fail `holdsNothingToRedact` (so the full scan runs), every row's match holds one
 * of its hints and the keyed selection (`scansFor`) runs that row, every assignment the key scan
 * finds stands where `mayHoldAssignment` says one may, and an input left alone keeps its identity.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assignments, mayHoldAssignment } from '../../src/core/redact/assignments.js';
import { SECRET_PATTERNS } from '../../src/core/redact/patterns.js';
import { privateKeyBlocks, puttyPrivateLines } from '../../src/core/redact/blocks.js';
import { holdsNothingToRedact, leavesAsIs, scansFor, secretKinds } from '../../src/core/redact/redact.js';
import type { Finding, SecretPattern } from '../../src/core/redact/secret-pattern.js';
import { redactFields } from '../../src/core/redact/stored-text.js';
import { CATALOGUE } from '../helpers/secret-catalogue.js';
import { POSITIVES } from '../helpers/secret-samples.js';

const SAMPLES: Array<{ kind: string; text: string }> = [
  ...POSITIVES.map(([kind, text]) => ({ kind, text })),
  ...CATALOGUE.flatMap(({ kind, text, field }) => [
    { kind, text },
    { kind, text: field },
  ]),
  // Keys in upper case, one split by a separator after its hint: the key scan takes them.
  { kind: 'password', text: '<PASS_WORD>Zx9fQ2mL7pR4</PASS_WORD>' },
  { kind: 'token', text: '"ACCESS_TOKEN": "Zx9fQ2mL7pR4sT8v"' },
];

/**
 * The matches of `pattern` in `text` that its `valid` accepts (what the row would report), and those
 * of them that hold none of its hints (`unkeyed`: where the keyed selection would not run the row;
 * empty for a row whose hints are right).
 */
function rowMatches(pattern: SecretPattern, text: string): { accepted: number; unkeyed: string[] } {
  const regex = new RegExp(pattern.regex.source, pattern.regex.flags);
  let accepted = 0;
  const unkeyed: string[] = [];
  for (const match of text.matchAll(regex)) {
    const indices = match.indices as RegExpIndicesArray;
    const [start, end] = indices.groups?.s ?? (indices[0] as [number, number]);
    if (pattern.valid && !pattern.valid(text.slice(start, end))) continue;
    accepted++;
    const lower = match[0].toLowerCase();
    if (!pattern.hints.some((hint) => lower.includes(hint))) unkeyed.push(match[0]);
  }
  return { accepted, unkeyed };
}

/** Rows whose hint is a word the text must hold beside the match, not in it (their tokens have no prefix of their own). */
const CONTEXT_KEYED = new Set(['discord-bot-token']);

describe('redact: the prefilters let every format through', () => {
  it('every row that matches a sample holds one of its hints in the match, and the keyed selection runs it', () => {
    let matched = 0;
    for (const { kind, text } of SAMPLES) {
      const selected = scansFor(text);
      for (const [rank, pattern] of SECRET_PATTERNS.entries()) {
        const { accepted, unkeyed } = rowMatches(pattern, text);
        const lower = text.toLowerCase();
        // A row keyed on a word beside the token rather than in it (Discord's bot token: "discord") needs the word in the text.
        const keyedByContext = CONTEXT_KEYED.has(pattern.kind) && pattern.hints.some((hint) => lower.includes(hint));
        if (!keyedByContext) assert.deepEqual(unkeyed, [], `${pattern.kind} (row ${rank}) matches without its hints in ${kind}: ${text.slice(0, 60)}`);
        if (accepted === 0) continue;
        matched++;
        assert.ok(selected?.ranks.includes(rank), `${pattern.kind} (row ${rank}) matches but is not selected for ${kind}: ${text.slice(0, 60)}`);
      }
      // Blocks and assignments: their scans are selected wherever they find something.
      const blocks: Finding[] = [];
      privateKeyBlocks(text, blocks);
      if (blocks.length > 0) assert.equal(selected?.pem, true, `${kind}: ${text.slice(0, 60)}`);
      const lines: Finding[] = [];
      puttyPrivateLines(text, lines);
      if (lines.length > 0) assert.equal(selected?.putty, true, `${kind}: ${text.slice(0, 60)}`);
      const keys: Finding[] = [];
      assignments(text, keys, 0);
      if (keys.length > 0) assert.equal(selected?.assignment, true, `${kind}: ${text.slice(0, 60)}`);
      // And the pass the input takes does not leave it as it is.
      assert.equal(leavesAsIs(text, 'mask'), false, `${kind}: ${text.slice(0, 60)}`);
    }
    assert.ok(matched >= SECRET_PATTERNS.length, `only ${matched} row matches over the samples`);
  });

  it('the selection is exactly the rows whose hints the text holds, whatever their case', () => {
    for (const { text } of SAMPLES) {
      const lower = text.toLowerCase();
      const expected = [...SECRET_PATTERNS.entries()].filter(([, pattern]) => pattern.hints.some((hint) => lower.includes(hint))).map(([rank]) => rank);
      assert.deepEqual(scansFor(text)?.ranks ?? [], expected, text.slice(0, 60));
      assert.deepEqual(scansFor(text.toUpperCase())?.ranks ?? [], expected, text.slice(0, 60));
    }
    // The bench's note names "token" and "path": Airtable's row (`pat`) and the key scan's gate, not the catalogue.
    const note = scansFor('Bench note 5: the token refresh path retries twice before surfacing the error to the caller.');
    assert.deepEqual(
      note?.ranks.map((rank) => SECRET_PATTERNS[rank]?.kind),
      ['airtable-token'],
    );
    assert.equal(note?.assignment, true);
    assert.equal(leavesAsIs('Bench note 5: the token refresh path retries twice before surfacing the error to the caller.', 'mask'), true);
  });

  it('a row whose hints are wrong is caught (the check above is not vacuous)', () => {
    const planted: SecretPattern = { kind: 'planted-token', regex: /(?<![A-Za-z0-9_])zq_[A-Za-z0-9]{20}(?![A-Za-z0-9_])/dg, hints: ['qz_'] };
    const text = 'deploy with zq_Ab3dEf6hIj9kLm2nOp5q today';
    assert.deepEqual(rowMatches(planted, text), { accepted: 1, unkeyed: ['zq_Ab3dEf6hIj9kLm2nOp5q'] });
    assert.deepEqual(rowMatches({ ...planted, hints: ['zq_'] }, text), { accepted: 1, unkeyed: [] });
  });

  it('every sample of every format, in its text and as a field, goes to the full scan', () => {
    for (const { kind, text } of SAMPLES) assert.equal(holdsNothingToRedact(text), false, `${kind}: ${text.slice(0, 60)}`);
  });

  it('every format of the catalogue has a sample here (none is tested by chance)', () => {
    const sampled = new Set(SAMPLES.map((sample) => sample.kind));
    for (const pattern of SECRET_PATTERNS) assert.ok(sampled.has(pattern.kind), `no sample of ${pattern.kind}`);
  });

  it('wherever the key scan finds an assignment, mayHoldAssignment holds', () => {
    for (const { kind, text } of SAMPLES) {
      const found: Finding[] = [];
      assignments(text, found, 0);
      if (found.length > 0) assert.ok(mayHoldAssignment(text), `${kind}: ${text.slice(0, 60)}`);
    }
    // The upper-case keys above are found by it, and masked.
    for (const text of ['<PASS_WORD>Zx9fQ2mL7pR4</PASS_WORD>', '"ACCESS_TOKEN": "Zx9fQ2mL7pR4sT8v"']) {
      assert.ok(mayHoldAssignment(text), text);
      assert.notDeepEqual(secretKinds(text), [], text);
    }
  });

  it('prose naming a hint without assigning it skips the key scan, and an input with nothing to change keeps its identity', () => {
    assert.equal(mayHoldAssignment('Bench note 5: the token refresh path retries twice before surfacing the error.'), false);
    assert.equal(mayHoldAssignment('the key is in the vault; pass it on'), false);
    const input = { space_id: 'alpha', category: 'decision', content: 'Decided to use PostgreSQL 16 for the orders service.', tags: 'db,orders' };
    const pass = redactFields(input, 'mask');
    assert.equal(pass.value, input);
    assert.deepEqual([pass.redacted, pass.private_removed], [[], 0]);
    // A hint-free field beside one holding a secret: the secret is masked all the same.
    const mixed = redactFields({ ...input, tags: `token=${'Zx9fQ2mL7pR4sT8v'}` }, 'mask');
    assert.equal(mixed.value.tags, 'token=[redacted: token]');
    assert.equal(mixed.value.content, input.content);
  });
});
