/**
 * The local embedding model's tests need `@huggingface/transformers`, an optional peer dependency kept
 * out of devDependencies: its onnxruntime-node fetches CUDA libraries from outside the registry when
 * installed, on Linux x64, unless told not to, and every `npm ci` of a contributor would pay ~450 MB
 * for it. `.ci/run` adds it (scripts/add-transformers.sh) and sets LIVE_MEM_TEST_LOCAL_EMBEDDINGS=required,
 * so CI fails rather than skips without it; locally the tests are skipped with the command that adds it.
 */
import assert from 'node:assert/strict';
import { existsSync } from 'node:fs';
import { it } from 'node:test';

export const TRANSFORMERS_INSTALL = 'bash scripts/add-transformers.sh';

const installed = existsSync(new URL('../../node_modules/@huggingface/transformers/package.json', import.meta.url));

/** True when the library is there; else registers a stand-in test (failing when required, skipped otherwise) and returns false. */
export function requireTransformersOrSkip(label: string): boolean {
  if (installed) return true;
  const why = `@huggingface/transformers is not installed: \`${TRANSFORMERS_INSTALL}\` adds it`;
  if (process.env.LIVE_MEM_TEST_LOCAL_EMBEDDINGS === 'required') it(`${label}: needs @huggingface/transformers`, () => assert.fail(why));
  else it(`${label}: needs @huggingface/transformers`, { skip: why }, () => undefined);
  return false;
}
