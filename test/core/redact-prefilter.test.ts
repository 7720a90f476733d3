/**
 * The cheap checks in front of the secret scan (core/redact) never let a secret through: every
 * format's samples fail `holdsNothingToRedact` (so the full scan runs), every assignment the key scan
 * finds stands where `mayHoldAssignment` says one may, and an input left alone keeps its identity.
 */
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { assignments, mayHoldAssignment } from '../../src/core/redact/assignments.js';
import { SECRET_PATTERNS } from '../../src/core/redact/patterns.js';
import { holdsNothingToRedact, secretKinds } from '../../src/core/redact/redact.js';
import type { Finding } from '../../src/core/redact/secret-pattern.js';
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

describe('redact: the prefilters let every format through', () => {
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
